"""A LangGraph agent in its own process: durable on a SQLite checkpointer, asking through a host.

    python -m tests.e2e.langgraph_agent URL SESSION DB EFFECTS

The graph has two nodes: `choose` asks which package manager (`ask_user`), and `install` appends
the answer to the EFFECTS file, one line each time it runs: the side effect whose count proves
that the graph resumed exactly once. On start, a thread that has no checkpoint yet is run to its
interrupt; then every thread in the checkpointer is recovered and forwarded through the host.
Prints `following <thread ids>` once it follows them, and the thread's final values as JSON
when every forward is done.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TypedDict

import anyio
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

from user_questions import connect
from user_questions.integrations.langgraph import ask_user, following

THREAD = {"configurable": {"thread_id": "durable"}}
QUESTION = {
    "id": "pkg",
    "header": "Setup",
    "question": "Which package manager should the project use?",
    "options": [{"label": "uv (Recommended)"}, {"label": "pip"}],
}


class State(TypedDict, total=False):
    pkg: str


def build(checkpointer: AsyncSqliteSaver, effects: Path) -> Any:
    def choose(state: State) -> State:
        return {"pkg": ask_user([QUESTION]).answers[0].selected[0]}

    def install(state: State) -> State:
        with effects.open("a", encoding="utf-8") as file:
            file.write(state["pkg"] + "\n")
        return {}

    builder: Any = StateGraph(State)
    builder.add_node("choose", choose)
    builder.add_node("install", install)
    builder.add_edge(START, "choose")
    builder.add_edge("choose", "install")
    builder.add_edge("install", END)
    return builder.compile(checkpointer=checkpointer)


async def main(url: str, session: str, db: str, effects: str) -> None:
    async with AsyncSqliteSaver.from_conn_string(db) as checkpointer:
        graph = build(checkpointer, Path(effects))
        if (await graph.aget_state(THREAD)).created_at is None:
            await graph.ainvoke({}, THREAD)  # the first start: run to the question
        async with connect(url, session=session) as asker, following(graph, asker) as follower:
            print("following", " ".join(await follower.recover()), flush=True)
        print(json.dumps((await graph.aget_state(THREAD)).values), flush=True)


if __name__ == "__main__":
    url, session, db, effects = sys.argv[1:5]
    anyio.run(main, url, session, db, effects)
