"""What `SQLiteStore` adds to the contract: WAL, a lock per file, a versioned schema, privacy,
and commands (`uq token`, `uq history`) opening the file beside the running host."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest

from tests.host.stores.test_store_contract import ANSWER, QUESTIONS
from user_questions import ErrorCode, UserQuestionError
from user_questions.host.stores import HistoryQuery
from user_questions.host.stores._sqlite_schema import MIGRATIONS
from user_questions.host.stores.sqlite import SCHEMA_VERSION, SQLiteStore

pytestmark = pytest.mark.anyio


async def test_the_file_is_in_wal_mode_with_the_current_schema_version(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "host.db"):
        pass
    with sqlite3.connect(tmp_path / "host.db") as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


async def test_a_second_host_on_the_same_file_is_refused(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "host.db"):
        with pytest.raises(UserQuestionError) as caught:
            async with SQLiteStore(tmp_path / "host.db"):
                pass
    assert caught.value.code == ErrorCode.STORE_LOCKED
    assert "another host is using the store" in str(caught.value)
    async with SQLiteStore(tmp_path / "host.db"):  # the lock goes with the first host
        pass


async def test_the_store_and_its_folder_are_private(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "state" / "host.db"):
        pass
    assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "state" / "host.db").stat().st_mode) == 0o600


async def test_a_file_from_a_newer_version_is_refused_not_guessed_at(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "host.db") as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(UserQuestionError) as caught:
        async with SQLiteStore(tmp_path / "host.db"):
            pass
    assert caught.value.code == ErrorCode.BAD_STORE
    assert "upgrade user-questions" in str(caught.value)


async def test_another_applications_database_is_left_alone(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "app.db") as connection:
        connection.execute("CREATE TABLE users (id INTEGER)")
    with pytest.raises(UserQuestionError) as caught:
        async with SQLiteStore(tmp_path / "app.db"):
            pass
    assert caught.value.code == ErrorCode.BAD_STORE
    with sqlite3.connect(tmp_path / "app.db") as connection:
        tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("users",)]


async def test_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a database, just some words" * 10)
    with pytest.raises(UserQuestionError) as caught:
        async with SQLiteStore(tmp_path / "notes.txt"):
            pass
    assert caught.value.code == ErrorCode.BAD_STORE
    assert "not a user-questions SQLite store" in str(caught.value)


async def test_using_a_store_that_is_not_open_is_a_programming_error(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "host.db")
    store_closed = SQLiteStore(tmp_path / "other.db")
    async with store_closed:
        pass
    for unopened in (store, store_closed):
        with pytest.raises(RuntimeError, match="not open"):
            await unopened.pending()


async def test_a_folder_holds_host_db(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    assert store.path == tmp_path / "host.db"
    async with store:
        pass
    assert (tmp_path / "host.db").is_file()


async def test_a_store_that_cannot_be_created_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(UserQuestionError) as caught:
        async with SQLiteStore(tmp_path / "file" / "host.db"):
            pass
    assert caught.value.code == ErrorCode.BAD_STORE
    assert str(caught.value).startswith(f"cannot open the store {tmp_path / 'file' / 'host.db'}")


async def test_a_command_opens_the_file_beside_the_running_host(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "host.db") as host:
        async with SQLiteStore(tmp_path / "host.db", host=False) as command:
            await command.set_setting("seen", "yes")
        assert await host.setting("seen") == "yes"


async def test_a_command_never_creates_a_store(tmp_path: Path) -> None:
    with pytest.raises(UserQuestionError) as caught:
        async with SQLiteStore(tmp_path / "typo.db", host=False):
            pass
    assert caught.value.code == ErrorCode.BAD_STORE
    assert str(caught.value).startswith(f"there is no store at {tmp_path / 'typo.db'}")
    assert not (tmp_path / "typo.db").exists()


async def test_a_version_1_file_is_migrated_and_its_records_become_searchable_history(
    tmp_path: Path,
) -> None:
    questions = json.dumps([question.model_dump(mode="json") for question in QUESTIONS])
    with sqlite3.connect(tmp_path / "host.db") as connection:
        connection.executescript(str(MIGRATIONS[0]))
        connection.execute("PRAGMA user_version = 1")
        connection.executemany(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at, state, answer, "
            "settled_at, settled_via) VALUES (?, 'agent-1', ?, ?, ?, ?, ?, ?)",
            [
                ("old", questions, "2025-01-01T00:00:00+00:00", "answered",
                 ANSWER.model_dump_json(), "2025-01-01T00:01:00+00:00", "web"),
                ("waiting", questions, "2025-01-01T00:00:00+00:00", "pending",
                 None, None, None),
            ],
        )  # fmt: skip
    async with SQLiteStore(tmp_path / "host.db") as store:
        page = await store.history(HistoryQuery(terms=("inbox",)))
        assert [record.rpc_id for record in page.records] == ["old"]
        assert page.records[0].answer == ANSWER
        assert page.records[0].settled_by is None
        assert [record.rpc_id for record in await store.pending()] == ["waiting"]
        assert await store.tokens() == []
    with sqlite3.connect(tmp_path / "host.db") as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
