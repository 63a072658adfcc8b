"""Hubs of several nodes on one PostgreSQL database: what one node does, the others' pages and
askers see, even when a notification is lost or the database restarts.

Each hub has its own `PostgresStore` on the same fresh database (a real server, `tests/pg.py`),
as two `uq serve` processes would.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

import anyio
import psycopg
import pytest

from tests.host.conftest import PICK, answer, next_frame
from tests.pg import PostgresCluster, database_of
from user_questions import (
    AbortController,
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    UserQuestionError,
)
from user_questions.host.hub import Hub, PageSubscription
from user_questions.host.in_process import HostProvider
from user_questions.host.stores import open_store
from user_questions.outcomes import Surface

pytestmark = pytest.mark.anyio

LISTENER = "user-questions listener"
CHOSEN = {"answers": [{"id": "pick", "selected": ["b"]}]}


@contextlib.asynccontextmanager
async def node(url: str) -> AsyncIterator[Hub]:
    """A host's hub on its own connection to the shared database."""
    async with open_store(url) as store, Hub(store) as hub:
        yield hub


async def frame_of(page: PageSubscription, kind: str) -> dict[str, object]:
    """The next frame of `kind` pushed to `page` (skipping others), parsed."""
    while True:
        frame = await next_frame(page)
        payload = frame["payload"]
        assert isinstance(payload, dict)
        if payload["type"] == kind:
            return frame


async def ask_on(ctx: Context, hub: Hub, outcome: list[AskUserQuestionAnswer]) -> None:
    ctx.user_questions.register_provider(HostProvider(hub, "agent-a"))
    outcome.append(await ctx.user_questions.ask(AskUserQuestionRequest(questions=[PICK])))


async def test_a_question_asked_on_one_node_is_answered_on_another(
    ctx: Context, pg_url: str
) -> None:
    async with node(pg_url) as node_a, node(pg_url) as node_b:
        page_a, page_b = node_a.subscribe(), node_b.subscribe()
        got: list[AskUserQuestionAnswer] = []
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(ask_on, ctx, node_a, got)
            shown = await frame_of(page_b, "question/requested")
            rpc_id = str(shown["rpcId"])
            receipt = await node_b.respond(
                answer(rpc_id, "agent-a", *CHOSEN["answers"]), via=Surface.WEB
            )
            assert receipt.accepted
        assert [item.model_dump(mode="json") for item in got] == [CHOSEN]
        for page in (page_a, page_b):
            resolved = await frame_of(page, "question/resolved")
            assert resolved["payload"] == {
                "type": "question/resolved",
                "sessionId": "agent-a",
                "questionRpcId": rpc_id,
                "outcome": "answered",
                "settled": "answered",
            }
        assert node_a.pending_count == node_b.pending_count == 0


async def test_answers_on_two_nodes_at_once_have_exactly_one_winner(pg_url: str) -> None:
    async with node(pg_url) as node_a, node(pg_url) as node_b:
        page_b = node_b.subscribe()
        for index in range(5):
            await node_a.submit(f"r{index}", "agent-a", [PICK])
            await frame_of(page_b, "question/requested")
        receipts: dict[str, list[tuple[str, bool, str | None]]] = {}

        async def respond(hub: Hub, name: str, rpc_id: str) -> None:
            receipt = await hub.respond(
                answer(rpc_id, "agent-a", *CHOSEN["answers"]), via=Surface.WEB
            )
            receipts.setdefault(rpc_id, []).append((name, receipt.accepted, receipt.reason))

        async with anyio.create_task_group() as task_group:
            for index in range(5):
                task_group.start_soon(respond, node_a, "a", f"r{index}")
                task_group.start_soon(respond, node_b, "b", f"r{index}")
        for outcomes in receipts.values():
            assert sorted(accepted for _, accepted, _ in outcomes) == [False, True]
            assert [reason for _, accepted, reason in outcomes if not accepted] == ["not-pending"]
        assert node_a.pending_count == node_b.pending_count == 0


async def test_a_node_catches_up_on_writes_whose_notification_it_missed(
    pg_url: str, pg_cluster: PostgresCluster
) -> None:
    questions = json.dumps([PICK.model_dump(mode="json")])
    insert = (
        "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at) "
        "VALUES (%s, 'agent-b', %s::jsonb, now())"
    )
    async with (
        node(pg_url) as node_a,
        await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as other,
    ):
        page = node_a.subscribe()
        await node_a.submit("mine", "agent-a", [PICK])
        # Another node's write, notified: once node a shows it, node a has read everything
        # it was going to read on its own.
        await other.execute(insert, ("probe", questions))
        await other.execute("SELECT pg_notify('user_questions', 'probe')")
        while (await frame_of(page, "question/requested"))["rpcId"] != "probe":
            pass
        # Then writes whose notifications never arrive: no NOTIFY at all.
        await other.execute(insert, ("theirs", questions))
        await other.execute(
            "UPDATE user_questions.questions SET state = 'dismissed', settled_at = now(), "
            "settled_via = 'web' WHERE rpc_id = 'mine'"
        )
        assert node_a.pending_count == 2  # it cannot know yet
        assert pg_cluster.terminate(database_of(pg_url), LISTENER) == 1
        # Reconnected, the store says "read everything": the hub finds both changes.
        frames = [await next_frame(page), await next_frame(page)]
        assert {(frame["payload"]["type"], frame.get("rpcId")) for frame in frames} == {
            ("question/requested", "theirs"),
            ("question/resolved", None),
        }
        pending = [json.loads(frame)["rpcId"] for frame in node_a.pending_frames()]
        assert pending == ["probe", "theirs"]


async def test_nodes_survive_a_database_restart_and_a_waiting_asker_gets_its_answer(
    ctx: Context, pg_url: str, pg_cluster: PostgresCluster
) -> None:
    async with node(pg_url) as node_a, node(pg_url) as node_b:
        page_b = node_b.subscribe()
        got: list[AskUserQuestionAnswer] = []
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(ask_on, ctx, node_a, got)
            rpc_id = str((await frame_of(page_b, "question/requested"))["rpcId"])
            await anyio.to_thread.run_sync(pg_cluster.stop)
            with pytest.raises(UserQuestionError) as caught:
                await node_b.respond(answer(rpc_id, "agent-a", *CHOSEN["answers"]), via=Surface.WEB)
            assert caught.value.code == ErrorCode.STORE_UNAVAILABLE
            await anyio.to_thread.run_sync(pg_cluster.start)
            receipt = await node_b.respond(
                answer(rpc_id, "agent-a", *CHOSEN["answers"]), via=Surface.WEB
            )
            assert receipt.accepted
        assert [item.model_dump(mode="json") for item in got] == [CHOSEN]
        await node_a.submit("after-restart", "agent-a", [PICK])
        assert (await frame_of(page_b, "question/requested"))["rpcId"] == "after-restart"


async def test_an_ask_aborted_while_the_database_is_down_ends_as_aborted(
    ctx: Context, pg_url: str, pg_cluster: PostgresCluster
) -> None:
    async with node(pg_url) as node_a:
        page = node_a.subscribe()
        ctx.user_questions.register_provider(HostProvider(node_a, "agent-a"))
        controller = AbortController()
        async with anyio.create_task_group() as task_group:

            async def abort_when_the_database_is_down() -> None:
                await frame_of(page, "question/requested")
                await anyio.to_thread.run_sync(pg_cluster.stop)
                controller.abort()

            task_group.start_soon(abort_when_the_database_is_down)
            with pytest.raises(UserQuestionError) as caught:
                await ctx.user_questions.ask(
                    AskUserQuestionRequest(questions=[PICK], signal=controller.signal)
                )
        # The withdrawal could not be stored: the abort still ends the ask as an abort, and
        # the request stays answerable (a failure never turns into an outcome).
        assert caught.value.code == ErrorCode.ASK_ABORTED
        await anyio.to_thread.run_sync(pg_cluster.start)
        (record,) = await node_a.store.pending()
        assert record.session_id == "agent-a"
