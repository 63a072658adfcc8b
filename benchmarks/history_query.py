"""History queries over many settled questions, on a real store.

Run: `.venv/bin/python benchmarks/history_query.py [--rows N] [--store STORE] [--runs R]`. Fills a
store (a temporary SQLite file unless `--store` names one: use a scratch PostgreSQL database, the
run leaves its rows in it) with N settled requests through the store's own `submit` and
`settle` (20 sessions, 5 people, every outcome, a plan with a long detail in one request of 10,
a typed answer in one of 4, one in 4 asked over A2A by one of two askers), then times each kind
of history query R times and prints the median and p95 in milliseconds: the first page, a page
deep in the cursor chain, each filter, searches that match often, rarely and never, A2A's
`ListTasks` (an asker's first page with its count, a status, a last change), the rendering of a
page for the web page, and a retention pass with nothing to delete. On PostgreSQL it measures
twice: right after the fill, before the planner has statistics, and after `ANALYZE` (which
autovacuum runs by itself soon).

Target on the project's machines: every history page under 50 ms with 10,000 settled requests.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

from user_questions import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionOption
from user_questions.host.stores import (
    HistoryQuery,
    NewQuestion,
    Settlement,
    Store,
    open_store,
)
from user_questions.host.web.history import entry_of
from user_questions.outcomes import Outcome, Surface

WORDS = ["deploy", "cache", "schema", "index", "retry", "budget", "rollout", "canary", "shard"]
PEOPLE = ["alice", "bob", "carol", "dave", "erin"]
ASKERS = ["ci-bot", "deploy-bot"]
"""The tokens that ask over A2A, one request in 4 (sessions `a2a:...`)."""
OUTCOMES: list[tuple[Outcome, int]] = [
    (Outcome.ANSWERED, 14),
    (Outcome.DISMISSED, 3),
    (Outcome.WITHDRAWN, 2),
    (Outcome.TIMED_OUT, 1),
]
TASKS = HistoryQuery(session_prefix="a2a:", pending=True, count=True, limit=50)
"""A2A's `ListTasks` as the inbox asks the store (`host/a2a/listing.py`): an admin's first page."""
ONE_SECOND = timedelta(seconds=1)
ENDINGS = [outcome for outcome, share in OUTCOMES for _ in range(share)]
random.seed(7)
PLAN = "\n".join(f"{step}. " + " ".join(random.choices(WORDS, k=12)) for step in range(1, 40))


def request(index: int) -> tuple[AskUserQuestionItem, ...]:
    """A request whose text has common words, and a rare word in one request of 100."""
    rare = " zeppelin" if index % 100 == 0 else ""
    question = AskUserQuestionItem(
        id="choice",
        header="Release",
        question=f"Which {random.choice(WORDS)} plan for service {index % 37}?{rare}",
        detail=PLAN if index % 10 == 0 else None,
        options=[
            AskUserQuestionOption(label="Go (Recommended)", description="All checks passed."),
            AskUserQuestionOption(label="Wait", description="Hold until Monday."),
        ],
    )
    return (question,)


def answer(index: int) -> AskUserQuestionAnswer:
    if index % 4 == 0:
        return AskUserQuestionAnswer.model_validate(
            {"answers": [{"id": "choice", "selected": [], "custom": f"ship {index} on Friday"}]}
        )
    return AskUserQuestionAnswer.model_validate(
        {"answers": [{"id": "choice", "selected": ["Go (Recommended)"]}]}
    )


async def fill(store: Store, rows: int) -> float:
    """Submit and settle `rows` requests; the seconds it took."""
    started = time.perf_counter()
    for index in range(rows):
        rpc_id = f"bench-{index}"
        asked = datetime.now(UTC)
        a2a = index % 4 == 1  # leaves the sessions the filters below time as they were
        session = f"a2a:ctx-{index % 20}" if a2a else f"agent-{index % 20}"
        asker = ASKERS[index // 4 % 2] if a2a else None
        await store.submit(NewQuestion(rpc_id, session, request(index), asked, asker))
        outcome = ENDINGS[index % len(ENDINGS)]
        settled = Settlement(
            outcome,
            answer(index) if outcome == Outcome.ANSWERED else None,
            via=Surface.WEB,
            by=PEOPLE[index % len(PEOPLE)],
        )
        await store.settle(rpc_id, settled)
    return time.perf_counter() - started


async def timed(runs: int, work: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """Median and p95 of `work` in milliseconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await work()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.95))]


async def run(arguments: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        url = arguments.store or str(Path(folder) / "host.db")
        async with open_store(url) as store:
            seconds = await fill(store, arguments.rows)
            print(
                f"store: {store.url}; filled {arguments.rows} settled requests in {seconds:.1f} s "
                f"({2 * arguments.rows / seconds:.0f} writes/s)"
            )
            deep = None
            query = HistoryQuery(limit=50)
            walked = 0
            while walked < int(arguments.rows * 0.9):
                page = await store.history(query)
                walked += len(page.records)
                deep = page.next
                if deep is None:
                    break
                query = HistoryQuery(limit=50, before=deep)
            await measure(store, arguments.runs, deep, walked)
        if url.startswith(("postgresql://", "postgres://")):
            # Right after a bulk fill the planner has no statistics yet; autovacuum gathers them
            # within a minute or so. Measure again as a running host would see it then.
            import psycopg  # the postgres extra, needed only here

            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
                await connection.execute("ANALYZE user_questions.questions")
            print("after ANALYZE (what autovacuum does on its own shortly after):")
            async with open_store(url) as store:
                await measure(store, arguments.runs, deep, walked)


async def measure(store: Store, runs: int, deep: str | None, walked: int) -> None:
    """Time every kind of history query, and the rendering of a page."""
    first = await store.history(HistoryQuery(limit=50))
    cases: list[tuple[str, Callable[[], Awaitable[object]]]] = [
        ("first page (50)", lambda: store.history(HistoryQuery(limit=50))),
        (f"page after {walked} rows", lambda: store.history(HistoryQuery(before=deep))),
        ("session filter (1 in 20)", lambda: store.history(HistoryQuery(session="agent-7"))),
        (
            "outcome timed-out (1 in 20)",
            lambda: store.history(HistoryQuery(outcome=Outcome.TIMED_OUT)),
        ),
        ("person filter (1 in 5)", lambda: store.history(HistoryQuery(by="carol"))),
        ("search, common word", lambda: store.history(HistoryQuery(terms=("release",)))),
        ("search, 1 in 100", lambda: store.history(HistoryQuery(terms=("zeppelin",)))),
        ("search, typed answers", lambda: store.history(HistoryQuery(terms=("friday", "ship")))),
        ("search, no match", lambda: store.history(HistoryQuery(terms=("nowhere",)))),
        (
            "session + search",
            lambda: store.history(HistoryQuery(session="agent-0", terms=("zeppelin",))),
        ),
        (
            "ListTasks: asker page + count",
            lambda: store.history(replace(TASKS, asked_by="ci-bot")),
        ),
        (
            "ListTasks: admin, timed-out",
            lambda: store.history(replace(TASKS, outcome=Outcome.TIMED_OUT)),
        ),
        (
            "ListTasks: changed in last 1 s",
            lambda: store.history(replace(TASKS, changed_after=datetime.now(UTC) - ONE_SECOND)),
        ),
        (
            "retention, nothing to delete",
            lambda: store.purge(datetime.now(UTC) - timedelta(days=30)),
        ),
    ]

    async def render() -> None:
        for record in first.records:
            entry_of(record, rendered=True).model_dump_json()

    cases.append(("render 50 entries for the page", render))
    for name, work in cases:
        median, p95 = await timed(runs, work)
        print(f"  {name:<32} median {median:7.2f} ms   p95 {p95:7.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=10_000, help="settled requests (10,000)")
    parser.add_argument("--runs", type=int, default=20, help="runs of each query (20)")
    parser.add_argument("--store", help="the store (default: a temporary SQLite file)")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
