"""The store's part of the answer path: `settle()` of a pending request, alone and C at once.

Run: `.venv/bin/python benchmarks/settle_cost.py [--store STORE] [--requests N] [--concurrency C]`.
Submits N requests to a fresh store (a temporary SQLite file unless `--store` names a PostgreSQL
database, whose tables it drops first), then settles them as the hub does (with the pending record
in hand): first one at a time, printing p50, p99, p99.9 and the slowest settle (a checkpoint of
the write-ahead log made in a commit shows in the last two); then C at once, printing settles per
second. Every settlement since the audit log (docs/audit.md) also appends its record in the same
transaction; running this script from a checkout before it (`PYTHONPATH=<old checkout>/src`) and
after, side by side, gives the append's cost. Prints the machine's pace before and after.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
from machine import pace

from user_questions import AskUserQuestionAnswer, AskUserQuestionAnswerItem
from user_questions.host.stores import NewQuestion, Settlement, Store, StoredQuestion, open_store
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

PICK = AskUserQuestionItem(
    id="pick",
    question="Deploy the release to production now?",
    detail="The change log: **12 commits**, a migration, two new endpoints.",
    options=[AskUserQuestionOption(label="Deploy"), AskUserQuestionOption(label="Wait")],
)
ANSWER = AskUserQuestionAnswer(answers=[AskUserQuestionAnswerItem(id="pick", selected=["Deploy"])])


async def drop_postgres(url: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
        await connection.execute("DROP SCHEMA IF EXISTS user_questions CASCADE")


async def run(url: str, count: int, concurrency: int) -> None:
    async with open_store(url) as store:
        pending = []
        for number in range(2 * count):
            record, _ = await store.submit(
                NewQuestion(f"r{number}", "bench", (PICK,), datetime.now(UTC))
            )
            pending.append(record)
        answered = Settlement(Outcome.ANSWERED, ANSWER, Surface.WEB, "alice")
        times = []
        for record in pending[:count]:
            began = time.perf_counter()
            await store.settle(record.rpc_id, answered, pending=record)
            times.append(time.perf_counter() - began)
        times.sort()
        p50, p99 = statistics.median(times), times[int(len(times) * 0.99) - 1]
        p999 = times[int(len(times) * 0.999) - 1]  # where a WAL checkpoint in a commit shows
        print(
            f"one at a time: settle p50 {p50 * 1e3:.3f} ms, p99 {p99 * 1e3:.3f} ms, "
            f"p99.9 {p999 * 1e3:.3f} ms, max {times[-1] * 1e3:.3f} ms ({count})"
        )
        await settle_at_once(store, pending[count:], answered, concurrency)


async def settle_at_once(
    store: Store, pending: list[StoredQuestion], answered: Settlement, concurrency: int
) -> None:
    queue = list(pending)

    async def worker() -> None:
        while queue:
            record = queue.pop()
            await store.settle(record.rpc_id, answered, pending=record)

    began = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    seconds = time.perf_counter() - began
    print(f"{concurrency} at once: {len(pending) / seconds:,.0f} settles per second")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="a postgresql:// URL (its tables are dropped first)")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    options = parser.parse_args()
    import user_questions

    print(f"code: {Path(user_questions.__file__).parent}", flush=True)
    print(pace("before"), flush=True)
    with tempfile.TemporaryDirectory() as folder:
        url = options.store or str(Path(folder) / "host.db")
        if options.store:
            anyio.run(drop_postgres, url)
        anyio.run(run, url, options.requests, options.concurrency)
    print(pace("after"), flush=True)


if __name__ == "__main__":
    main()
