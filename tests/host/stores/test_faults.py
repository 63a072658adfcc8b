"""A store's faults: `StoreStats` reports each once as it starts and once as it clears; a
`SQLiteStore` whose file is deleted under it writes it back, and refuses (never acknowledges) a
write that went to a file no longer there; one whose file is replaced refuses writes until the
file is put back."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from pathlib import Path

import anyio
import pytest

from tests.host.stores.test_store_contract import new
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import StoreStats
from user_questions.host.stores.sqlite import WATCH_INTERVAL, SQLiteStore

pytestmark = pytest.mark.anyio


def fault(code: ErrorCode) -> UserQuestionError:
    return UserQuestionError(f"something is wrong ({code})", code)


async def test_a_fault_is_logged_once_as_it_starts_and_once_as_it_clears(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stats = StoreStats(url="the-store")
    stats.open = True
    told: list[str | None] = []
    stop = stats.on_fault(lambda error: told.append(None if error is None else str(error.code)))
    with caplog.at_level(logging.WARNING, "user_questions.host"):
        for _ in range(50):  # fifty refused requests
            stats.failed(fault(ErrorCode.STORE_FULL))
        with pytest.raises(UserQuestionError) as raised:
            stats.check()
        stats.back("space was freed")
        stats.back()
        stop()
        stats.failed(fault(ErrorCode.STORE_UNAVAILABLE))
    assert raised.value.code == ErrorCode.STORE_FULL
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 3, lines
    assert lines[0].startswith("store fault, refusing with STORE_FULL until it clears")
    assert lines[1].startswith("store fault cleared after ")
    assert lines[1].endswith("works again (was STORE_FULL); space was freed")
    assert told == ["STORE_FULL", None]  # the listener removed hears nothing more
    assert (stats.errors, stats.reconnects) == (51, 1)


async def until_clear(store: SQLiteStore) -> None:
    with anyio.fail_after(5):
        while store.stats.fault is not None:  # noqa: ASYNC110 - the store's own watcher clears it
            await anyio.sleep(WATCH_INTERVAL / 2)


async def test_a_deleted_file_is_written_back_with_everything_committed(tmp_path: Path) -> None:
    db = tmp_path / "host.db"
    async with SQLiteStore(db) as store:
        await store.submit(new("before"))
        for name in ("host.db", "host.db-wal", "host.db-shm"):
            (tmp_path / name).unlink()
        with pytest.raises(UserQuestionError) as refused:
            await store.submit(new("caught"))  # committed to the file that is gone: not acked
        assert refused.value.code == ErrorCode.STORE_UNAVAILABLE
        await until_clear(store)
        await store.submit(new("after"))
        await store.ping()
    with sqlite3.connect(db) as connection:
        stored = {row[0] for row in connection.execute("SELECT rpc_id FROM questions")}
    assert {"before", "after"} <= stored


async def test_a_replaced_file_is_refused_until_it_is_put_back(tmp_path: Path) -> None:
    db = tmp_path / "host.db"
    async with SQLiteStore(db) as store:
        await store.submit(new("before"))
        db.rename(tmp_path / "aside.db")
        shutil.copyfile(tmp_path / "aside.db", db)
        for rpc_id in ("one", "two"):
            with pytest.raises(UserQuestionError) as refused:
                await store.submit(new(rpc_id))
            assert refused.value.code == ErrorCode.STORE_UNAVAILABLE
        with pytest.raises(UserQuestionError):
            await store.ping()
        (tmp_path / "aside.db").rename(db)
        await until_clear(store)
        await store.submit(new("after"))
    assert store.stats.errors == 2
