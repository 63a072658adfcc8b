"""The machine's pace at the time of a run: the lines the performance benchmarks print around
their figures.

The project's machines are shared virtual machines whose speed moves between sittings: the same
code's figures moved about threefold within one day (docs/performance.md). A target given
in milliseconds is met or not with that pace, so `host_roundtrip.py`, `vs_langgraph.py`,
`page_scale.py` and `startup.py` print it before and after their figures: the time of a fixed
piece of pure Python (building, writing and reading the JSON of small frames, as a host does
for each request) and of one durable SQLite commit. The pace moves within a run too (the Python
figure from 44 to 99 ms in one), hence two lines. Compare two sittings' figures beside their
pace lines.

Run alone: `.venv/bin/python benchmarks/machine.py`.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

PYTHON_RUNS = 5
COMMITS = 200
WAL_PAGES = 100
"""The pace file's WAL is checkpointed at this many pages (a host's at SQLite's 1,000): after
as many warm-up commits, the commits measured overwrite a WAL file of stable size, as a
running host's do, instead of growing a new one (on this project's disk, half as fast)."""


def durable(path: Path) -> sqlite3.Connection:
    """An autocommit connection to `path` that commits as the host's store does (WAL,
    `synchronous=FULL`)."""
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    return connection


def python_work() -> int:
    """The fixed piece of Python: 5,000 small frames built, written and read back; the length
    of the ids read back (returned, so that nothing of it can be skipped)."""
    read = 0
    for number in range(5_000):
        frame = {
            "rpcId": f"request-{number}",
            "payload": {
                "type": "question/requested",
                "questions": [
                    {
                        "id": "q1",
                        "question": "Which one?",
                        "options": [{"label": "a"}, {"label": "b"}],
                    }
                ],
            },
        }
        read += len(json.loads(json.dumps(frame))["rpcId"])
    return read


def python_ms() -> float:
    """The median time of `python_work`, in milliseconds, over `PYTHON_RUNS` runs."""
    times = []
    for _ in range(PYTHON_RUNS):
        began = time.perf_counter()
        python_work()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def commit_ms(folder: Path) -> float:
    """The median time of one durable commit of a small row in `folder`, in milliseconds,
    once the WAL has been checkpointed."""
    connection = durable(folder / "pace.db")
    try:
        connection.execute(f"PRAGMA wal_autocheckpoint = {WAL_PAGES}")
        connection.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        times = []
        for _ in range(WAL_PAGES + COMMITS):
            began = time.perf_counter()
            connection.execute("INSERT INTO rows (body) VALUES (?)", ("x" * 200,))
            times.append(time.perf_counter() - began)
    finally:
        connection.close()
    return statistics.median(times[WAL_PAGES:]) * 1000


def pace(when: str) -> str:
    """The pace line (`when`: "before", "after"): both figures, measured now (about a second
    on the slowest sitting)."""
    with tempfile.TemporaryDirectory(prefix="uq-pace-") as folder:
        commit = commit_ms(Path(folder))
    return (
        f"machine pace {when}: fixed Python work {python_ms():.1f} ms (median of {PYTHON_RUNS}), "
        f"one durable SQLite commit {commit:.3f} ms (median of {COMMITS})"
    )


if __name__ == "__main__":
    print(pace("now"))
