"""LangGraph through a real host: a graph's question reaches `uq serve`, the person's answer (or
dismissal) reaches the node, and Agent Inbox graphs get their `HumanResponse`."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.e2e.frameworks.conftest import Person
from tests.e2e.host_process import HostProcess
from tests.integrations.frameworks import EVERYTHING, PKG, choose, graph_of, inbox_node
from user_questions import connect
from user_questions.integrations.langgraph import forward_interrupts, rpc_id_of

pytestmark = pytest.mark.anyio


async def forwarded(
    host: HostProcess, person: Person, node: Any, answer: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the graph to its interrupt, forward it through the host while `answer(frame)` plays
    the person; the thread's last values and the frame the person saw."""
    graph = graph_of(node)
    config = {"configurable": {"thread_id": person.session}}
    await graph.ainvoke({}, config)
    (pending,) = (await graph.aget_state(config)).interrupts
    values: dict[str, Any] = {}

    async def agent() -> None:
        async with connect(host.url, session=person.session) as asker:
            snapshot = await forward_interrupts(graph, config, asker)
        values.update(snapshot.values)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(agent)
            (frame,) = await person.pending()
            assert frame["rpcId"] == rpc_id_of(person.session, pending.id)
            await answer(frame)
    return values, frame


async def test_a_graphs_question_is_answered_on_the_host(host: HostProcess, person: Person) -> None:
    async def choose_pip(frame: dict[str, Any]) -> None:
        await person.answer(frame, {"id": "pkg", "selected": ["pip"]})

    values, frame = await forwarded(host, person, choose, choose_pip)
    assert values == {"pkg": "pip"}
    assert frame["payload"]["questions"] == [PKG]


async def test_a_dismissal_on_the_host_is_ask_cancelled_in_the_node(
    host: HostProcess, person: Person
) -> None:
    values, _ = await forwarded(host, person, choose, person.dismiss)
    assert values == {"error": "ASK_CANCELLED"}
    assert [entry["outcome"] for entry in await person.history()] == ["dismissed"]


async def test_an_agent_inbox_graph_gets_the_response_typed_on_the_host(
    host: HostProcess, person: Person
) -> None:
    async def respond(frame: dict[str, Any]) -> None:
        await person.answer(frame, {"id": "action", "selected": [], "custom": "Wait until Monday"})

    values, frame = await forwarded(host, person, inbox_node(EVERYTHING), respond)
    assert values == {"response": {"type": "response", "args": "Wait until Monday"}}
    (question,) = frame["payload"]["questions"]
    assert [option["label"] for option in question["options"]] == ["Accept", "Ignore"]
