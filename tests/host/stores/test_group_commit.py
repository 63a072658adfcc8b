"""Group commit in `SQLiteStore`: asks and settlements that arrive together share a commit,
and each is on disk, with its own result, when its caller hears of it."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from tests.host.stores.test_store_contract import ANSWER, new
from user_questions.host.stores import Settlement, StoredQuestion
from user_questions.host.stores._group_commit import GroupCommit, Work
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Outcome, Surface

pytestmark = pytest.mark.anyio


async def test_asks_arriving_together_share_commits_and_each_is_stored(tmp_path: Path) -> None:
    results: dict[str, tuple[StoredQuestion, bool]] = {}

    async def ask(rpc_id: str) -> None:
        results[rpc_id] = await store.submit(new(rpc_id))

    async with SQLiteStore(tmp_path / "host.db") as store:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as task_group:
                for index in range(40):
                    task_group.start_soon(ask, f"r{index}")
        commits = store._writes.batches
    assert commits < 40
    assert all(created and record.pending for record, created in results.values())
    async with SQLiteStore(tmp_path / "host.db") as reopened:
        assert {record.rpc_id for record in await reopened.pending()} == set(results)


async def test_settlements_in_one_commit_each_get_their_own_result(tmp_path: Path) -> None:
    won: dict[str, StoredQuestion | None] = {}

    async def settle(rpc_id: str) -> None:
        settlement = Settlement(Outcome.ANSWERED, ANSWER, via=Surface.WEB)
        won[rpc_id] = await store.settle(rpc_id, settlement)

    async with SQLiteStore(tmp_path / "host.db") as store:
        for index in range(10):
            await store.submit(new(f"r{index}"))
        with anyio.fail_after(30):
            async with anyio.create_task_group() as task_group:
                for index in range(12):  # two of them name no request
                    task_group.start_soon(settle, f"r{index}")
        for index in range(10):
            assert won[f"r{index}"] == await store.get(f"r{index}")
    assert won["r10"] is None
    assert won["r11"] is None


async def test_a_write_that_fails_in_a_batch_is_undone_alone(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "host.db") as store:
        db = store._db()

        def broken() -> None:
            db.execute("INSERT INTO settings (key, value) VALUES ('half', 'done')")
            db.execute("INSERT INTO no_such_table VALUES (1)")

        async def fail() -> None:
            with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
                await store._write(broken)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as task_group:
                for index in range(5):
                    task_group.start_soon(store.submit, new(f"r{index}"))
                    task_group.start_soon(fail)
        assert store.stats.errors == 5
        assert store._writes.batches < 10  # the failures shared commits with the asks
        assert await store.setting("half", "undone") == "undone"
        assert len(await store.pending()) == 5


async def test_a_writer_cancelled_while_it_waits_still_has_its_write_committed() -> None:
    release = anyio.Event()
    committed: list[object] = []

    async def execute(batch: Sequence[Work]) -> list[object]:
        await release.wait()
        outcomes = [work() for work in batch]
        committed.extend(outcomes)
        return outcomes

    writes = GroupCommit(execute)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(writes.run, lambda: "first")
            await anyio.wait_all_tasks_blocked()
            with anyio.CancelScope() as scope:
                scope.cancel()
                task_group.start_soon(writes.run, lambda: "second")  # queued behind "first"
                await anyio.wait_all_tasks_blocked()
            release.set()
    assert committed == ["first", "second"]
    assert (writes.batches, writes.writes) == (2, 2)
