"""Where the memory of one asker socket, or of one pending request, goes: a heap snapshot of a
real host, before and after N askers connect and ask (tracemalloc), grouped by the module that
allocated it.

Run: `.venv/bin/python benchmarks/asker_memory.py [--askers N] [--pending P]` (2,000 askers by
default). Starts this script as the host (`uq serve` in a process that traces its allocations and
writes a snapshot whenever it gets SIGUSR1), connects N askers as `many_askers.py` does, and
prints the bytes per asker each package (uvicorn, websockets, asyncio, anyio, starlette, ours,
...) added between the two snapshots, largest first, and the host's RSS per asker beside them.
With `--pending P`, P requests are left pending through four asker sockets instead, as
`host_roundtrip.py`'s pending phase does, and the figures are per pending request. Tracing slows
the host and takes memory of its own: read the shares, not the totals, and `many_askers.py` or
`host_roundtrip.py` for the RSS.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from types import FrameType

import anyio
from host_roundtrip import asker_url, rss_mb, start_askers, wait_pending
from many_askers import AskerSocket, accepted, connect_and_ask, raise_fd_limit

_LINE = "@"
"""Marks a snapshot's entry for one line (the others are whole packages)."""
_OURS = "#"
"""Marks a snapshot's entry for the line of ours whose call allocated (in a library or not)."""
_DEPTH = 12
"""Frames kept per allocation: enough to reach our line under a library's."""
_PACKAGES = ("uvicorn", "websockets", "starlette", "anyio", "h11", "pydantic", "user_questions")


def package_of(filename: str) -> str:
    """The package a traced frame's file belongs to (`asyncio`, `other stdlib`, ...)."""
    for package in _PACKAGES:
        if f"/{package}/" in filename:
            return package
    if "/asyncio/" in filename:
        return "asyncio"
    return "ssl, socket and the rest of the stdlib" if "python3.11" in filename else "other"


def host(snapshots: Path, store: str) -> None:
    """The host: `uq serve` on `store`, writing a snapshot to `snapshots/N.json` on SIGUSR1."""
    tracemalloc.start(_DEPTH)
    taken = [0]

    def snapshot(signum: int, frame: FrameType | None) -> None:
        by_package: collections.Counter[str] = collections.Counter()
        for statistic in tracemalloc.take_snapshot().statistics("traceback"):
            frames = list(reversed(statistic.traceback))  # the allocating frame first
            where = frames[0]
            ours = next((frame for frame in frames if "/user_questions/" in frame.filename), None)
            if ours is not None:
                by_package[f"{_OURS}{os.path.basename(ours.filename)}:{ours.lineno}"] += (
                    statistic.size
                )
            by_package[package_of(where.filename)] += statistic.size
            line = f"{os.path.basename(where.filename)}:{where.lineno}"
            by_package[f"{_LINE}{package_of(where.filename)} {line}"] += statistic.size
        taken[0] += 1
        (snapshots / f"{taken[0]}.json").write_text(json.dumps(by_package))

    signal.signal(signal.SIGUSR1, snapshot)
    sys.argv = ["uq", "serve", "--port", "0", "--store", store]
    from user_questions.cli import main

    main()


def start_traced_host(folder: Path, store: str) -> tuple[subprocess.Popen[str], str]:
    """This script as the host (`host`), and the URL it printed."""
    command = [sys.executable, __file__, "host", str(folder), store]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def snapshot(process: subprocess.Popen[str], folder: Path, number: int) -> dict[str, int]:
    process.send_signal(signal.SIGUSR1)
    path = folder / f"{number}.json"
    deadline = time.monotonic() + 120
    while not path.exists():  # the host writes it from its signal handler
        if time.monotonic() > deadline:
            raise SystemExit("the host wrote no snapshot")
        time.sleep(0.1)
    time.sleep(0.2)  # written whole
    taken: dict[str, int] = json.loads(path.read_text())
    return taken


async def run(arguments: argparse.Namespace) -> None:
    raise_fd_limit()
    count = arguments.askers
    with tempfile.TemporaryDirectory(prefix="uq-memory-") as folder_name:
        folder = Path(folder_name)
        store = str(folder / "host.db")
        process, page_url = start_traced_host(folder, store)
        try:
            agents = asker_url(store, page_url)
            await accepted(agents)
            ask_url = agents.replace("http", "ws", 1).replace("/?", "/ws/ask?")
            before = snapshot(process, folder, 1)
            rss_before = rss_mb(process.pid)
            if arguments.pending:
                askers = start_askers(
                    agents, 4, arguments.pending // 4, arguments.pending // 4, wait_for_go=False
                )
                count = arguments.pending // 4 * 4
                base, token = page_url.split("/?token=")
                await anyio.to_thread.run_sync(wait_pending, base, token, count)
                after = snapshot(process, folder, 2)
                for asker in askers:
                    asker.kill()
                    asker.communicate()
            else:
                sockets = await _connect(count, ask_url)
                after = snapshot(process, folder, 2)
                for socket in sockets:
                    socket.close()
            rss = (rss_mb(process.pid) - rss_before) * 1024 / count
        finally:
            process.terminate()
            process.communicate(timeout=60)
    added = {name: (after.get(name, 0) - before.get(name, 0)) / count for name in after}
    packages = {name: size for name, size in added.items() if not name.startswith((_LINE, _OURS))}
    traced = sum(packages.values())
    each = "pending request" if arguments.pending else "asker"
    print(
        f"{count} {each}s: RSS {rss:.1f} KB per {each}, traced {traced / 1024:.1f} KB per {each}:"
    )
    for name, size in sorted(packages.items(), key=lambda item: -item[1]):
        print(f"  {name:>40}: {size / 1024:6.1f} KB ({size / traced:.0%})")
    for mark, title in (
        (_LINE, "lines that allocated most"),
        (_OURS, "lines of ours whose calls allocated most (here or in a library)"),
    ):
        lines = {name[1:]: size for name, size in added.items() if name.startswith(mark)}
        print(f"the {arguments.lines} {title}, per {each}:")
        for name, size in sorted(lines.items(), key=lambda item: -item[1])[: arguments.lines]:
            print(f"  {name:>60}: {size / 1024:6.2f} KB")


async def _connect(count: int, ask_url: str) -> list[AskerSocket]:
    """`count` asker sockets on `ask_url`, each with one pending request."""
    limiter = anyio.CapacityLimiter(128)
    sockets = []

    async def one(number: int) -> None:
        sockets.append(await connect_and_ask(ask_url, number, limiter))

    async with anyio.create_task_group() as connecting:
        for number in range(count):
            connecting.start_soon(one, number)
    return sockets


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "host":
        host(Path(sys.argv[2]), sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--askers", type=int, default=2_000, help="asker sockets (2,000)")
    parser.add_argument(
        "--pending", type=int, default=0, help="weigh this many pending requests instead"
    )
    parser.add_argument("--lines", type=int, default=25, help="allocating lines shown (25)")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
