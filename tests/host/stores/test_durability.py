"""Every connection a store opens commits durably: SQLite with `synchronous = FULL`, PostgreSQL
never with `synchronous_commit = off`, whatever the server's default.

Both settings belong to a connection, not to the file or the database, so the tests read them
through the store's own connections. They catch each connection as the database driver opens it
(`sqlite3.connect`, `psycopg.AsyncConnection.connect`), so a connection added later (a reader,
a second pool) is checked too without this file knowing about it. The test PostgreSQL server
runs with `synchronous_commit = off` (`tests/pg.py`), which is exactly the default the store must
not inherit.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest

from tests.host.stores.test_store_contract import ANSWER, CREATED, new
from user_questions.host.stores import (
    HistoryQuery,
    Settlement,
    Store,
    TokenRecord,
    _postgres_listen,
    open_store,
)
from user_questions.outcomes import Outcome, Surface

pytestmark = pytest.mark.anyio

_FULL = 2
"""`PRAGMA synchronous` as a number: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA."""


async def use(store: Store) -> None:
    """Every kind of call, several at once, so the store opens whatever connections it uses."""

    async def ask_and_answer(rpc_id: str) -> None:
        await store.submit(new(rpc_id))
        await store.settle(
            rpc_id, Settlement(Outcome.ANSWERED, ANSWER, via=Surface.WEB, by="alice")
        )

    async with anyio.create_task_group() as task_group:
        for index in range(8):
            task_group.start_soon(ask_and_answer, f"r{index}")
            task_group.start_soon(store.history, HistoryQuery(terms=("which",)))
    await store.add_token(TokenRecord("alice", "a" * 64, CREATED))
    await store.tokens()
    await store.ensure_setting("token", "kept")
    await store.setting("token")


def opened_by_sqlite(monkeypatch: pytest.MonkeyPatch) -> list[sqlite3.Connection]:
    """Every SQLite connection opened from now on, in order."""
    opened: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def recording(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection: sqlite3.Connection = connect(*args, **kwargs)
        opened.append(connection)
        return connection

    monkeypatch.setattr(sqlite3, "connect", recording)
    return opened


def opened_by_psycopg(monkeypatch: pytest.MonkeyPatch) -> list[psycopg.AsyncConnection[Any]]:
    """Every asynchronous PostgreSQL connection opened from now on, in order."""
    opened: list[psycopg.AsyncConnection[Any]] = []
    connect = psycopg.AsyncConnection.connect

    async def recording(*args: Any, **kwargs: Any) -> psycopg.AsyncConnection[Any]:
        connection = await connect(*args, **kwargs)
        opened.append(connection)
        return connection

    monkeypatch.setattr(psycopg.AsyncConnection, "connect", staticmethod(recording))
    return opened


async def test_every_sqlite_connection_a_store_opens_syncs_fully(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = opened_by_sqlite(monkeypatch)
    async with (
        open_store(tmp_path / "host.db") as host,
        open_store(tmp_path / "host.db", host=False) as command,  # `uq token` beside the host
    ):
        await use(host)
        await command.revoke_token("alice")
        await command.history(HistoryQuery())
        # Opened with check_same_thread=False, as every connection used from worker threads is.
        settings = [connection.execute("PRAGMA synchronous").fetchone()[0] for connection in opened]
    assert len(settings) >= 2, "expected the host's connection and the command's"
    assert settings == [_FULL] * len(settings), (
        f"PRAGMA synchronous of each SQLite connection: {settings}, not all FULL ({_FULL}): "
        "a crash of the machine could lose what they committed"
    )


async def test_every_postgres_session_a_store_opens_commits_durably(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The listening connection is busy waiting for notifications; this frees it often.
    monkeypatch.setattr(_postgres_listen, "LISTEN_HEARTBEAT", 0.05)
    opened = opened_by_psycopg(monkeypatch)
    settings: list[tuple[str | None, str]] = []
    async with open_store(pg_url) as host, open_store(pg_url, host=False) as command:
        await use(host)
        await command.revoke_token("alice")
        await command.history(HistoryQuery())
        for connection in opened:
            if connection.closed:
                continue
            with anyio.fail_after(5):
                cursor = await connection.execute("SHOW synchronous_commit")
                row = await cursor.fetchone()
            assert row is not None
            settings.append((connection.info.parameter_status("application_name"), row[0]))
    assert len(settings) >= 3, "expected the host's pool, its listener and the command's pool"
    assert [name for name, value in settings if value == "off"] == [], (
        f"synchronous_commit of each session: {settings}; a session with `off` could lose what "
        "it committed in a crash of the server"
    )
