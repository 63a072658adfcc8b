"""What `PostgresStore` adds to the contract: several nodes on one database, a versioned schema,
LISTEN/NOTIFY wake-ups that survive a cut connection, and recovery from a database restart.

Every test runs against a real PostgreSQL server (`tests/pg.py`); two store instances on one
database are two nodes.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import anyio
import psycopg
import pytest

from tests.host.stores.test_migrations import postgres_at_version
from tests.host.stores.test_store_contract import ANSWER, CREATED, QUESTIONS, new
from tests.pg import PostgresCluster, database_of
from user_questions import ErrorCode, UserQuestionError
from user_questions.host.stores import (
    HistoryQuery,
    Role,
    Settlement,
    StoreStats,
    TokenChange,
    TokenRecord,
    open_store,
)
from user_questions.host.stores import _postgres_schema as schema
from user_questions.host.stores.postgres import SCHEMA_VERSION, PostgresStore, printable_url
from user_questions.outcomes import Outcome, Surface

pytestmark = pytest.mark.anyio

LISTENER = "user-questions listener"
"""The application name of a store's listening connection."""


class Heard:
    """A change listener that records what it is told and lets a test wait for it."""

    def __init__(self) -> None:
        self.calls: list[str | None] = []
        self._changed = anyio.Event()

    def __call__(self, rpc_id: str | None) -> None:
        self.calls.append(rpc_id)
        self._changed.set()

    async def until(self, condition: Callable[[list[str | None]], bool]) -> None:
        with anyio.fail_after(15):
            while True:
                self._changed = anyio.Event()
                if condition(self.calls):
                    return
                await self._changed.wait()

    async def heard(self, rpc_id: str | None, times: int = 1) -> None:
        await self.until(lambda calls: calls.count(rpc_id) >= times)


async def stored_version(url: str) -> int:
    async with await psycopg.AsyncConnection.connect(url) as connection:
        cursor = await connection.execute("SELECT version FROM user_questions.schema_version")
        rows = await cursor.fetchall()
    assert len(rows) == 1
    return int(rows[0][0])


async def execute(url: str, statement: str) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        await connection.execute(statement)


# -- schema -----------------------------------------------------------------------------------


async def test_an_empty_database_gets_the_current_schema_and_reopening_keeps_it(
    pg_url: str,
) -> None:
    async with open_store(pg_url) as store:
        await store.submit(new("r1"))
    assert await stored_version(pg_url) == SCHEMA_VERSION
    async with open_store(pg_url) as store:
        assert [record.rpc_id for record in await store.pending()] == ["r1"]
    assert await stored_version(pg_url) == SCHEMA_VERSION


async def test_nodes_starting_together_on_an_empty_database_migrate_it_once(pg_url: str) -> None:
    opened: list[str] = []

    async def start_node(name: str) -> None:
        async with open_store(pg_url) as store:
            await store.submit(new(f"from-{name}"))
            opened.append(name)

    async with anyio.create_task_group() as task_group:
        for index in range(4):
            task_group.start_soon(start_node, f"node-{index}")
    assert sorted(opened) == [f"node-{index}" for index in range(4)]
    assert await stored_version(pg_url) == SCHEMA_VERSION


async def test_an_older_schema_is_migrated_in_order_and_keeps_its_rows(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_store(pg_url) as store:
        await store.submit(new("old"))
    next_version = (
        "ALTER TABLE user_questions.questions ADD COLUMN note text NOT NULL DEFAULT 'migrated'"
    )
    monkeypatch.setattr(schema, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, next_version))
    async with open_store(pg_url) as store:
        record = await store.get("old")
        assert record is not None
        assert record.pending
    assert await stored_version(pg_url) == SCHEMA_VERSION + 1
    async with await psycopg.AsyncConnection.connect(pg_url) as connection:
        cursor = await connection.execute("SELECT note FROM user_questions.questions")
        assert await cursor.fetchall() == [("migrated",)]


async def test_a_version_1_database_is_migrated_and_its_records_become_searchable_history(
    pg_url: str,
) -> None:
    await postgres_at_version(pg_url, 1)  # what the previous release created
    questions = json.dumps([question.model_dump(mode="json") for question in QUESTIONS])
    await execute(
        pg_url,
        "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at, state, "
        "answer, settled_at, settled_via) VALUES "
        f"('old', 'agent-1', '{questions}', now(), 'answered', "
        f"'{ANSWER.model_dump_json()}', now(), 'web'), "
        f"('waiting', 'agent-1', '{questions}', now(), 'pending', NULL, NULL, NULL)",
    )
    async with open_store(pg_url) as store:
        page = await store.history(HistoryQuery(terms=("inbox",)))
        assert [record.rpc_id for record in page.records] == ["old"]
        assert page.records[0].answer == ANSWER
        assert [record.rpc_id for record in await store.pending()] == ["waiting"]
        assert (
            await store.settle("waiting", Settlement(Outcome.TIMED_OUT, via=Surface.ASKER))
            is not None
        )
        assert await store.tokens() == []
    assert await stored_version(pg_url) == SCHEMA_VERSION


async def test_a_command_beside_the_nodes_does_not_listen(
    pg_url: str, pg_cluster: PostgresCluster
) -> None:
    async with open_store(pg_url, host=False) as command:
        await command.submit(new("r1"))
        assert pg_cluster.terminate(database_of(pg_url), LISTENER) == 0


async def test_a_database_written_by_a_newer_version_is_refused(pg_url: str) -> None:
    async with open_store(pg_url):
        pass
    await execute(
        pg_url, f"UPDATE user_questions.schema_version SET version = {SCHEMA_VERSION + 1}"
    )
    with pytest.raises(UserQuestionError) as caught:
        async with open_store(pg_url):
            pass
    assert caught.value.code == ErrorCode.BAD_STORE
    assert "upgrade user-questions" in str(caught.value)


# -- two nodes --------------------------------------------------------------------------------


async def test_two_nodes_settling_at_once_have_exactly_one_winner_per_request(
    pg_url: str,
) -> None:
    rpc_ids = [f"r{index}" for index in range(10)]
    winners: dict[str, list[str]] = {rpc_id: [] for rpc_id in rpc_ids}
    async with open_store(pg_url) as node_a, open_store(pg_url) as node_b:
        for rpc_id in rpc_ids:
            await node_a.submit(new(rpc_id))

        async def settle(node: str, rpc_id: str, client: int) -> None:
            store = node_a if node == "a" else node_b
            by = f"{node}-{client}"
            if await store.settle(rpc_id, Settlement(Outcome.ANSWERED, ANSWER, by=by)) is not None:
                winners[rpc_id].append(by)

        async with anyio.create_task_group() as task_group:
            for rpc_id in rpc_ids:
                for client in range(3):
                    task_group.start_soon(settle, "a", rpc_id, client)
                    task_group.start_soon(settle, "b", rpc_id, client)
        for rpc_id in rpc_ids:
            assert len(winners[rpc_id]) == 1, winners[rpc_id]
            record = await node_b.get(rpc_id)
            assert record is not None
            assert record.settled_by == winners[rpc_id][0]
        assert await node_a.pending() == []


async def test_a_write_on_one_node_wakes_the_other_with_its_rpc_id(pg_url: str) -> None:
    async with open_store(pg_url) as node_a, open_store(pg_url) as node_b:
        heard_a, heard_b = Heard(), Heard()
        node_a.on_change(heard_a)
        node_b.on_change(heard_b)
        await node_a.submit(new("asked-on-a"))
        await heard_b.heard("asked-on-a")
        await node_b.settle("asked-on-a", Settlement(Outcome.DISMISSED, via=Surface.WEB))
        await heard_a.heard("asked-on-a")  # node b's settlement
        await heard_b.until(lambda calls: calls.count("asked-on-a") == 1)
        # Notifications reach a listener in commit order: once node a has heard node b's
        # settlement, it would have heard its own submission first, had it been echoed.
        assert heard_a.calls.count("asked-on-a") == 1
        assert heard_b.calls.count("asked-on-a") == 1


async def test_a_token_change_or_revocation_on_one_node_reaches_the_other_at_once(
    pg_url: str,
) -> None:
    async with open_store(pg_url) as node_a, open_store(pg_url) as node_b:
        told = anyio.Event()

        def heard() -> None:
            told.set()

        async def seen_by_b(change: Awaitable[object]) -> list[TokenRecord]:
            """Node b's tokens once it has been told of `change`, made on node a."""
            nonlocal told
            told = anyio.Event()
            await change
            with anyio.fail_after(5):
                await told.wait()
            return await node_b.tokens()

        node_b.on_tokens_change(heard)
        added = TokenRecord("ci", "c" * 64, CREATED)
        assert await seen_by_b(node_a.add_token(added)) == [added]
        changed = replace(added, role=Role.ASKER, routes=("@oncall",))
        change = node_a.change_token("ci", TokenChange(role=Role.ASKER, routes=["@oncall"]))
        assert await seen_by_b(change) == [changed]
        (revoked,) = await seen_by_b(node_a.revoke_token("ci"))
        assert (revoked.role, revoked.routes, revoked.active) == (Role.ASKER, ("@oncall",), False)


async def test_a_listener_hears_what_others_commit_after_it_registers_and_nothing_else(
    pg_url: str,
) -> None:
    async with open_store(pg_url) as node, open_store(pg_url) as other:
        earlier = Heard()
        node.on_change(earlier)
        await other.submit(new("before"))
        await earlier.heard("before")  # its notification has been passed on
        heard, removed = Heard(), Heard()
        node.on_change(heard)
        node.on_change(removed)()
        await node.submit(new("its-own"))
        await other.submit(new("after"))
        await heard.heard("after")
    # No "read everything" on registering: a hub registers before its first read, which it
    # would make a second time for nothing (100,000 pending: 3 s, while the first page opens).
    assert heard.calls == ["after"]
    assert removed.calls == []


async def test_a_cut_listening_connection_reconnects_and_says_read_everything(
    pg_url: str, pg_cluster: PostgresCluster
) -> None:
    async with open_store(pg_url) as node_a, open_store(pg_url) as node_b:
        heard = Heard()
        node_b.on_change(heard)
        assert pg_cluster.terminate(database_of(pg_url), LISTENER) == 2  # both nodes' listeners
        await heard.heard(None)
        await node_a.submit(new("after-the-cut"))
        await heard.heard("after-the-cut")  # listening again


async def test_the_store_fails_clearly_while_the_database_is_down_and_recovers(
    pg_url: str, pg_cluster: PostgresCluster
) -> None:
    async with open_store(pg_url) as node_a, open_store(pg_url) as node_b:
        heard = Heard()
        node_b.on_change(heard)
        await node_a.submit(new("before"))
        await heard.heard("before")
        await anyio.to_thread.run_sync(pg_cluster.stop)
        with pytest.raises(UserQuestionError) as caught:
            await node_a.submit(new("while-down"))
        assert caught.value.code == ErrorCode.STORE_UNAVAILABLE
        assert f"the store {node_a.url} is unavailable (" in str(caught.value)
        assert "\n" not in str(caught.value)
        await anyio.to_thread.run_sync(pg_cluster.start)
        await heard.heard(None)  # node b's listener is back: it says read everything
        await node_a.submit(new("after"))
        await heard.heard("after")
        assert [record.rpc_id for record in await node_b.pending()] == ["before", "after"]
        assert await node_b.settle("before", Settlement(Outcome.ANSWERED, ANSWER, via=Surface.WEB))


async def test_ping_and_the_stats_follow_the_database_going_away_and_coming_back(
    pg_url: str, pg_cluster: PostgresCluster
) -> None:
    async with open_store(pg_url) as node:
        heard = Heard()
        node.on_change(heard)
        await node.ping()
        assert node.stats == StoreStats(errors=0, reconnects=0)
        await anyio.to_thread.run_sync(pg_cluster.stop)
        for _ in range(2):
            with pytest.raises(UserQuestionError) as caught:
                await node.ping()
            assert caught.value.code == ErrorCode.STORE_UNAVAILABLE
        assert (node.stats.errors, node.stats.reconnects, node.stats.down) == (2, 0, True)
        await anyio.to_thread.run_sync(pg_cluster.start)
        await heard.heard(None)  # the listening connection is back
        await node.ping()
        assert node.stats == StoreStats(errors=2, reconnects=1)  # one outage, one return


# -- URLs -------------------------------------------------------------------------------------


def test_the_printed_url_never_shows_the_password() -> None:
    store = PostgresStore("postgresql://uq:s3cret@db.example:5432/questions?sslmode=require")
    assert store.url == "postgresql://uq@db.example:5432/questions?sslmode=require"
    assert "s3cret" not in repr(store)
    assert (
        printable_url("postgres://db.example/q?password=s3cret&host=/run/postgresql")
        == "postgres://db.example/q?host=/run/postgresql"
    )
    assert printable_url("postgresql://:s3cret@db.example/q") == "postgresql://db.example/q"
    assert printable_url("postgresql:///q?host=/tmp") == "postgresql:///q?host=/tmp"


def test_a_url_libpq_cannot_read_is_a_bad_store() -> None:
    with pytest.raises(UserQuestionError) as caught:
        open_store("postgresql://uq:s3cret@db.example/questions?colour=blue")
    assert caught.value.code == ErrorCode.BAD_STORE
    assert "is not a valid PostgreSQL URL" in str(caught.value)
    assert "s3cret" not in str(caught.value)


async def test_a_database_that_cannot_be_reached_is_store_unavailable_at_start(
    tmp_path: Path,
) -> None:
    url = f"postgresql://uq:s3cret@/questions?host={tmp_path}"
    with pytest.raises(UserQuestionError) as caught:
        async with open_store(url):
            pass
    assert caught.value.code == ErrorCode.STORE_UNAVAILABLE
    message = str(caught.value)
    assert message.startswith(f"the store postgresql://uq@/questions?host={tmp_path} is unavail")
    assert "s3cret" not in message


async def test_a_table_dropped_behind_the_stores_back_is_a_clear_error(pg_url: str) -> None:
    async with open_store(pg_url) as store:
        await execute(pg_url, "DROP TABLE user_questions.questions")
        with pytest.raises(UserQuestionError) as caught:
            await store.pending()
    assert caught.value.code == ErrorCode.BAD_STORE
    assert str(caught.value) == (
        f'the store {store.url} cannot be used (relation "user_questions.questions" does not exist)'
    )
