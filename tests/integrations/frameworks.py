"""What the framework tests share: a small LangGraph graph and an Agent Inbox node, a person who
answers only once several questions are shown, the failures a model reads, and the Agents SDK
kept offline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, TypedDict

import anyio
import pytest
from _pytest.mark import ParameterSet
from agents import set_tracing_disabled
from agents.testing import ModelCall, assistant_message
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from user_questions import ScriptedProvider, UserQuestionError
from user_questions.integrations.langgraph import ask_user
from user_questions.service import AskUserQuestionRequest

PKG = {
    "id": "pkg",
    "question": "Which package manager?",
    "options": [{"label": "uv"}, {"label": "pip"}],
}
EVERYTHING = {"allow_accept": True, "allow_ignore": True, "allow_respond": True}
"""An Agent Inbox config allowing every response but edit."""


class State(TypedDict, total=False):
    pkg: str
    error: str
    response: Any


def choose(state: State) -> State:
    """Asks PKG; keeps the choice (or typed text), or the code of the error it got."""
    try:
        answer = ask_user([PKG])
    except UserQuestionError as error:
        return {"error": str(error.code)}
    item = answer.answers[0]
    return {"pkg": item.custom or item.selected[0]}


def graph_of(*nodes: Callable[[State], State], checkpointer: Any = None) -> Any:
    """The nodes one after the other, compiled with `checkpointer` (default in memory)."""
    builder: Any = StateGraph(State)
    previous = START
    for node in nodes:
        builder.add_node(node.__name__, node)
        builder.add_edge(previous, node.__name__)
        previous = node.__name__
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=checkpointer or InMemorySaver())


def inbox_node(allow: Mapping[str, bool]) -> Callable[[State], State]:
    """A node written for Agent Inbox: one `HumanInterrupt` whose config allows `allow` (every
    other flag false), and the first `HumanResponse` of the resume value kept."""

    def review(state: State) -> State:
        request = {
            "action_request": {"action": "send_email", "args": {"to": "ops@example.com"}},
            "config": {
                "allow_accept": False,
                "allow_ignore": False,
                "allow_respond": False,
                "allow_edit": False,
                **allow,
            },
            "description": "Send the **weekly report**?",
        }
        return {"response": interrupt([request])[0]}

    return review


def together(
    count: int, answer: Callable[[AskUserQuestionRequest], Mapping[str, Any]]
) -> tuple[Callable[[AskUserQuestionRequest], Awaitable[Mapping[str, Any]]], list[str]]:
    """A scripted person who answers nothing until `count` requests are shown at once, proving
    they were asked concurrently; and the list of each request's first question text."""
    shown: list[str] = []
    all_shown = anyio.Event()

    async def person(request: AskUserQuestionRequest) -> Mapping[str, Any]:
        shown.append(request.questions[0].question)
        if len(shown) == count:
            all_shown.set()
        await all_shown.wait()
        return answer(request)

    return person, shown


def tool_failures(question_id: str) -> list[ParameterSet]:
    """(provider, question timeout, the text the model reads) for a dismissal and a timeout."""
    return [
        pytest.param(
            ScriptedProvider({}),
            None,
            "Error: the user cancelled ask_user_question",
            id="dismissed",
        ),
        pytest.param(
            ScriptedProvider({question_id: []}, delay=30),
            0.05,
            "Error: ask_user_question timed out before the user answered",
            id="timed-out",
        ),
    ]


def reports(call: ModelCall) -> Any:
    """A scripted Agents SDK model's last step: says what the last tool returned."""
    outputs = [item for item in call.input if isinstance(item, dict) and "output" in item]
    return [assistant_message(f"tool said: {outputs[-1]['output']}")]


@pytest.fixture
def no_tracing() -> Iterator[None]:
    """The Agents SDK exports traces over the network by default; these tests stay offline."""
    set_tracing_disabled(True)
    yield
    set_tracing_disabled(False)
