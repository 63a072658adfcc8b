"""`Hub.on_event`: a host reports the writes it made itself, once each, and nothing it only read."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.host.conftest import PICK, answer, dismissal, next_frame
from user_questions.host.hub import Hub
from user_questions.host.stores import StoredQuestion, open_store
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Surface

pytestmark = pytest.mark.anyio


def record_events(hub: Hub) -> list[tuple[str, str]]:
    """`(rpcId, state)` of every event `hub` reports, in order."""
    events: list[tuple[str, str]] = []

    def listen(record: StoredQuestion) -> None:
        events.append((record.rpc_id, record.state))

    hub.on_event(listen)
    return events


async def test_a_new_request_and_its_settlement_are_reported_once_each(hub: Hub) -> None:
    events = record_events(hub)
    await hub.submit("r1", "s", [PICK])
    await hub.submit("r1", "s", [PICK])  # the asker re-attaching: not new
    await hub.respond(answer("r1", "s", {"id": "pick", "selected": ["a"]}), via=Surface.WEB)
    await hub.respond(answer("r1", "s", {"id": "pick", "selected": ["b"]}), via=Surface.WEB)  # lost
    await hub.submit("r2", "s", [PICK])
    await hub.respond(dismissal("r2"), via=Surface.WEB)
    await hub.submit("r3", "s", [PICK])
    await hub.withdraw("r3", via=Surface.ASKER)
    await hub.withdraw("r3", via=Surface.ASKER)  # already withdrawn
    assert events == [
        ("r1", "pending"),
        ("r1", "answered"),
        ("r2", "pending"),
        ("r2", "dismissed"),
        ("r3", "pending"),
        ("r3", "withdrawn"),
    ]


async def test_a_refused_answer_reports_nothing(hub: Hub) -> None:
    await hub.submit("r1", "s", [PICK])
    events = record_events(hub)
    receipt = await hub.respond(
        answer("r1", "s", {"id": "pick", "selected": ["zzz"]}), via=Surface.WEB
    )
    assert receipt.reason == "bad-response"
    assert events == []


async def test_a_removed_listener_hears_nothing_more(hub: Hub) -> None:
    heard: list[str] = []
    stop = hub.on_event(lambda record: heard.append(record.rpc_id))
    await hub.submit("r1", "s", [PICK])
    stop()
    stop()  # idempotent
    await hub.submit("r2", "s", [PICK])
    assert heard == ["r1"]


async def test_a_listener_that_raises_does_not_break_the_ask_or_the_others(
    hub: Hub, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(record: StoredQuestion) -> None:
        raise RuntimeError("a broken listener")

    hub.on_event(broken)
    events = record_events(hub)
    page = hub.subscribe()
    record, _ = await hub.submit("r1", "s", [PICK])
    assert record.pending
    assert (await next_frame(page))["rpcId"] == "r1"
    assert events == [("r1", "pending")]
    assert "an event listener raised on question r1" in caplog.text


async def test_requests_replayed_after_a_restart_are_not_new(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "host.db") as store, Hub(store) as hub:
        await hub.submit("r1", "s", [PICK])
    async with SQLiteStore(tmp_path / "host.db") as store, Hub(store) as hub:
        events = record_events(hub)
        record, _ = await hub.submit("r1", "s", [PICK])  # its asker re-attaches
        assert record.pending
        await hub.respond(dismissal("r1"), via=Surface.WEB)
    assert events == [("r1", "dismissed")]


@contextlib.asynccontextmanager
async def node(url: str) -> AsyncIterator[Hub]:
    async with open_store(url) as store, Hub(store) as hub:
        yield hub


async def test_each_change_is_reported_by_the_one_node_that_wrote_it(pg_url: str) -> None:
    async with node(pg_url) as node_a, node(pg_url) as node_b:
        events_a, events_b = record_events(node_a), record_events(node_b)
        page_a, page_b = node_a.subscribe(), node_b.subscribe()
        await node_a.submit("r1", "s", [PICK])
        assert (await next_frame(page_b))["rpcId"] == "r1"  # B shows it: it read it
        await node_b.respond(answer("r1", "s", {"id": "pick", "selected": ["a"]}), via=Surface.WEB)
        assert (await next_frame(page_a))["rpcId"] == "r1"
        resolved = await next_frame(page_a)  # A applies B's answer, read from the database
        assert resolved["payload"]["type"] == "question/resolved"
    assert events_a == [("r1", "pending")]
    assert events_b == [("r1", "answered")]
