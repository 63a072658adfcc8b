"""Group commit in `SQLiteStore`: asks and settlements that arrive together share a commit,
and each is on disk, with its own result, when its caller hears of it; how commits are waited
for (with the event loop blocked, briefly, while they are fast; awaited on a slow disk); the
writes waiting for a commit, bounded."""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from tests.host.stores.test_store_contract import ANSWER, new
from user_questions.errors import UserQuestionError
from user_questions.host.stores import Settlement, StoredQuestion, sqlite
from user_questions.host.stores._group_commit import YIELD_INTERVAL, GroupCommit, Work
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
        store._commit_seconds = math.inf  # as on a slow disk: the first batch goes to the thread
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
        assert await store.setting("half") is None
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


SLOW = 0.3
"""Seconds a commit takes on the slow disk these tests make."""
WAIT = 0.05
"""`INLINE_WAIT` in these tests: far above a fast commit on a busy machine, far below `SLOW`."""


class Disk:
    """The disk under `store`, as a test makes it: each commit holds the thread that runs it
    for `pause` seconds and takes `seconds` on the clock the store times its commits with (so
    the store's judgement does not depend on how busy the machine is); `threads` is the thread
    of each commit, and `ways` how the event loop waited for it (`blocked` or `awaited`), in
    order."""

    def __init__(self, store: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.store = store
        self.seconds = 0.0001
        self.pause = 0.0
        self.threads: list[int] = []
        self.ways: list[str] = []
        self._clock = 0.0
        commit, execute = store._commit_writes, store._writes._execute

        def timed(batch: Sequence[Work]) -> list[Any]:
            self.threads.append(threading.get_ident())
            time.sleep(self.pause)
            self._clock += self.seconds
            return commit(batch)

        def waited(batch: Sequence[Work]) -> Any:
            committing = execute(batch)
            self.ways.append("blocked" if isinstance(committing, list) else "awaited")
            return committing

        store._commit_writes = timed  # type: ignore[method-assign]
        store._writes._execute = waited
        clock = SimpleNamespace(perf_counter=lambda: self._clock, monotonic=time.monotonic)
        monkeypatch.setattr(sqlite, "time", clock)
        monkeypatch.setattr(sqlite, "INLINE_WAIT", WAIT)

    def slow(self, seconds: float) -> None:
        self.seconds = self.pause = seconds


async def longest_pause(work: Callable[[], Any]) -> float:
    """The longest the event loop went without running a task while `await work()` ran."""
    longest = 0.0

    async def tick() -> None:
        nonlocal longest
        while True:
            began = time.perf_counter()
            await anyio.sleep(0.005)
            longest = max(longest, time.perf_counter() - began - 0.005)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(tick)
        await anyio.sleep(0.02)
        await work()
        task_group.cancel_scope.cancel()
    return longest


@pytest.fixture
async def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Disk]:
    async with SQLiteStore(tmp_path / "host.db") as store:
        yield Disk(store, monkeypatch)


async def asks(store: SQLiteStore, prefix: str, count: int) -> None:
    for index in range(count):
        await store.submit(new(f"{prefix}-{index}"))


async def test_on_a_fast_disk_the_loop_waits_for_commits_without_a_hop(disk: Disk) -> None:
    await asks(disk.store, "r", 5)
    await disk.store.settle("r-0", Settlement(Outcome.ANSWERED, ANSWER, via=Surface.WEB))
    # The disk's pace is not known yet: the first commit is awaited, and timed.
    assert disk.ways == ["awaited"] + ["blocked"] * 5
    assert threading.get_ident() not in disk.threads  # all in the store's thread


async def test_on_a_slow_disk_commits_run_in_the_thread_and_the_loop_keeps_serving(
    disk: Disk,
) -> None:
    disk.slow(0.5)
    with anyio.fail_after(30):
        pause = await longest_pause(lambda: asks(disk.store, "r", 3))
    assert len(await disk.store.pending()) == 3
    assert pause < 0.25
    assert disk.ways == ["awaited"] * 3


async def test_a_disk_turning_slow_never_stalls_the_loop_and_fast_commits_come_back(
    disk: Disk,
) -> None:
    await asks(disk.store, "fast", 3)
    disk.slow(SLOW)
    with anyio.fail_after(30):
        pause = await longest_pause(lambda: asks(disk.store, "slow", 3))
    disk.slow(0.0001)
    await asks(disk.store, "again", 40)
    # The first slow commit was waited for with the loop blocked (the disk had been fast), but
    # only for `INLINE_WAIT`: then it was awaited, and the next slow ones too.
    assert disk.ways[:6] == ["awaited", "blocked", "blocked"] + ["awaited"] * 3
    assert pause < SLOW / 2
    assert disk.ways[-1] == "blocked"


async def test_a_task_that_only_writes_on_a_fast_disk_still_lets_the_others_run(
    disk: Disk,
) -> None:
    turns = 0

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await anyio.lowlevel.checkpoint()

    await asks(disk.store, "warm", 3)  # the disk's pace is known: the loop waits for commits
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(other)
        began, turns, index = time.perf_counter(), 0, 0
        while time.perf_counter() - began < 10 * YIELD_INTERVAL:
            await disk.store.submit(new(f"r{index}"))
            index += 1
        task_group.cancel_scope.cancel()
    assert disk.ways[3:] == ["blocked"] * index
    assert turns >= 5


async def test_writes_waiting_beyond_the_capacity_are_refused_and_answers_always_wait() -> None:
    release = anyio.Event()

    async def execute(batch: Sequence[Work]) -> list[Any]:
        await release.wait()
        return [work() for work in batch]

    writes = GroupCommit(execute, capacity=100)
    results: list[Any] = []

    async def write(value: str, size: int) -> None:
        try:
            results.append(await writes.run(lambda: value, size))
        except UserQuestionError as error:
            results.append(str(error.code))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(write, "leader", 500)  # alone: admitted whatever its size
            await anyio.wait_all_tasks_blocked()
            for index in range(3):
                task_group.start_soon(write, f"ask-{index}", 40)  # the third would make 120
                await anyio.wait_all_tasks_blocked()
            task_group.start_soon(write, "answer", 0)  # size 0: always waits its turn
            await anyio.wait_all_tasks_blocked()
            assert writes.queued == 80
            release.set()
    assert results == ["STORE_BUSY", "leader", "ask-0", "ask-1", "answer"]
    assert writes.queued == 0
