"""Ask a person from inside a LangGraph graph, and answer it on the host's page.

    uq serve                                    # prints the page's URL, then the agents' line:
    export UQ_URL='http://127.0.0.1:8765/?token=…'     # run it: an asker's token, never answers
    python docs/examples/langgraph_ask.py

Choose "uv (Recommended)" on the page; it prints: {"pkg": "uv (Recommended)"}
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

import anyio
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from user_questions import connect
from user_questions.integrations.langgraph import ask_user, forward_interrupts


class State(TypedDict, total=False):
    pkg: str


def choose(state: State) -> State:
    answer = ask_user(
        [
            {
                "id": "pkg",
                "question": "Which package manager?",
                "options": [{"label": "uv (Recommended)"}, {"label": "pip"}],
            }
        ]
    )
    return {"pkg": answer.answers[0].selected[0]}


async def main() -> None:
    builder: Any = StateGraph(State)
    graph = builder.add_node(choose).add_edge(START, "choose").compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "setup-1"}}
    await graph.ainvoke({}, config)  # runs until ask_user interrupts the graph
    async with connect(client="langgraph") as asker:  # the host at $UQ_URL
        state = await forward_interrupts(graph, config, asker)
    print(json.dumps(state.values))


if __name__ == "__main__":
    anyio.run(main)
