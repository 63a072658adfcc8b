"""Where the CPU of a durable question goes, thread by thread, against the disk's floor.

Run: `.venv/bin/python benchmarks/question_cost.py [--asks N]`. Three measurements in one process,
on files in one temporary folder, each printing CPU per unit split between the event loop's thread
and the store's thread (the process's CPU less the loop's: nothing else runs), user and system
time, and voluntary context switches:

- the floor: one durable SQLite commit of a small row (WAL, `synchronous=FULL`, `machine.py`'s
  `durable` connection), on this thread, once its WAL has grown to its size;
- the store's writes: N requests submitted, then answered (`SQLiteStore.submit`, `.settle`), as
  the hub makes them, one at a time;
- a question in process: an agent asks through the host's in-process provider and a page-side
  task answers through `Hub.respond`, as `vs_langgraph.py` measures it.

The last lines divide a question's CPU between the loop (the service, the hub, its checks and
frames), the store's thread (two writes: their SQL, their commits, their Python) and the hops
between the two, and put two floor commits beside it: what a leaner write or a leaner hub would
save. The target of issue 42 for a durable question (<= 2x the floor of two commits) is printed
beside its figure.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import anyio
from ask_overhead import runs
from host_roundtrip import met
from machine import durable, pace
from settle_cost import ANSWER, PICK
from vs_langgraph import FLOOR_RATIO_TARGET, ours

from user_questions.host.stores import NewQuestion, Settlement
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Outcome, Surface


@dataclass(frozen=True, slots=True)
class Cost:
    """CPU spent per unit of work, in microseconds, and the context switches it took."""

    loop: float
    """On the thread that measured (the event loop's)."""
    other: float
    """On the process's other threads (the store's)."""
    user: float
    system: float
    switches: float

    def line(self, unit: str) -> str:
        return (
            f"CPU per {unit}: {self.loop + self.other:.0f} us (loop thread {self.loop:.0f}, "
            f"store thread {self.other:.0f}; user {self.user:.0f}, system {self.system:.0f}), "
            f"{self.switches:.1f} voluntary context switches"
        )


async def cost_of(run: Callable[[], Awaitable[object]], units: int) -> Cost:
    """What `run()` costs per unit of work (it does `units`)."""
    before, thread = resource.getrusage(resource.RUSAGE_SELF), time.thread_time()
    await run()
    after, thread = resource.getrusage(resource.RUSAGE_SELF), time.thread_time() - thread
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    scale = 1e6 / units
    return Cost(
        thread * scale,
        max(0.0, user + system - thread) * scale,  # the clocks' ticks differ: never below 0
        user * scale,
        system * scale,
        (after.ru_nvcsw - before.ru_nvcsw) / units,
    )


async def floor_cost(folder: Path, commits: int) -> tuple[float, Cost]:
    """A durable commit of a small row: its p50 wall time (us) and its cost, measured once
    the WAL has grown to its size (commits to a growing one are slower on some disks)."""
    connection = durable(folder / "floor.db")
    connection.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    insert = "INSERT INTO rows (body) VALUES (?)"
    times = []

    async def commit_all() -> None:
        for _ in range(commits):
            began = time.perf_counter()
            connection.execute(insert, ("x" * 200,))
            times.append(time.perf_counter() - began)

    try:
        await commit_all()
        times.clear()
        cost = await cost_of(commit_all, commits)
    finally:
        connection.close()
    return statistics.median(times) * 1e6, cost


async def store_writes(folder: Path, count: int) -> tuple[Cost, Cost]:
    """What a request's submit, then its answer's settle, cost the store, one at a time."""
    async with SQLiteStore(folder / "store.db") as store:
        asked = [
            NewQuestion(f"r{number}", "bench", (PICK,), datetime.now(UTC))
            for number in range(count)
        ]
        pending = []

        async def submit_all() -> None:
            for question in asked:
                pending.append((await store.submit(question))[0])

        answered = Settlement(Outcome.ANSWERED, ANSWER, Surface.WEB, "alice")

        async def settle_all() -> None:
            for record in pending:
                await store.settle(record.rpc_id, answered, pending=record)

        return await cost_of(submit_all, count), await cost_of(settle_all, count)


async def run(folder: Path, asks: int) -> None:
    print(pace("before"), flush=True)
    commit_us, commit = await floor_cost(folder, asks)
    print(f"floor: a small row's durable commit, p50 {commit_us:.0f} us; {commit.line('commit')}")
    submit, settle = await store_writes(folder, asks)
    print(f"store: submit of a request: {submit.line('submit')}")
    print(f"store: settle of its answer: {settle.line('settle')}")
    samples: list[float] = []

    async def ask_all() -> None:
        nonlocal samples
        samples, _, _ = await ours(folder, asks)

    question = await cost_of(ask_all, runs(asks))  # its warm-up's questions count too
    p50 = statistics.median(samples)
    print(f"a question in process: p50 {p50:.0f} us; {question.line('question')}")
    writes = submit.loop + submit.other + settle.loop + settle.other
    loop_rest = question.loop - submit.loop - settle.loop
    print(
        f"where a question's {question.loop + question.other:.0f} us go: the loop's own work "
        f"(service, hub, checks, frames) {loop_rest:.0f} us; the two writes {writes:.0f} us "
        f"(on the loop {submit.loop + settle.loop:.0f}, in the store's thread "
        f"{submit.other + settle.other:.0f}), of which two floor commits "
        f"{2 * (commit.loop + commit.other):.0f} us"
    )
    ratio = p50 / (2 * commit_us)
    print(
        f"a question's p50 / two floor commits: {ratio:.2f}x (target <= {FLOOR_RATIO_TARGET:.0f}x: "
        f"{met(ratio <= FLOOR_RATIO_TARGET)})"
    )
    print(pace("after"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--asks", type=int, default=3000, help="commits, writes and questions")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="uq-question-cost-") as folder:
        anyio.run(run, Path(folder), arguments.asks)


if __name__ == "__main__":
    main()
