"""Memory against history: 100,000 asks answered one after another through one host on SQLite.

Run: `.venv/bin/python benchmarks/memory_history.py [--asks N] [--first M]`. Starts `uq serve` on a
temporary SQLite file, one asker on `/ws/ask` asking one request at a time and one page on `/ws`
answering each the moment it appears, and prints the host's resident memory every `--first` asks:
after the first M (default 10,000) and after all N (default 100,000), and how much it grew in
between. A host keeps no more for each request it has settled (the records are in the store, and
the hub remembers only the last 1,024 settled), so the target (issue 29) is growth within 10%.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import anyio
from host_roundtrip import rss_mb, start_host
from websockets.asyncio.client import ClientConnection, connect

GROWTH_TARGET = 0.10
"""RSS after all the asks, over RSS after the first ones, minus one: at most this."""


async def page(ws: ClientConnection) -> None:
    """Answer every request the moment it appears; receipts are read and let go."""
    async for message in ws:
        frame = json.loads(message)
        if frame["payload"]["type"] != "question/requested":
            continue
        question_id = frame["payload"]["questions"][0]["id"]
        value = {"answer": {"answers": [{"id": question_id, "selected": ["yes"]}]}}
        result = {"ok": True, "value": value}
        await ws.send(
            json.dumps({"type": "client-response", "rpcId": frame["rpcId"], "result": result})
        )


async def ask(ws: ClientConnection, index: int) -> None:
    """One ask, and its answer."""
    rpc_id = f"history-{index}"
    question = {"id": "go", "question": f"Go ahead with {index}?", "options": [{"label": "yes"}]}
    await ws.send(
        json.dumps({"type": "ask", "rpcId": rpc_id, "sessionId": "bench", "questions": [question]})
    )
    while json.loads(await ws.recv())["payload"]["type"] != "ask/settled":
        pass  # ask/pending first


async def run(asks: int, first: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        host, url = start_host(str(Path(folder) / "host.db"))
        base, token = url.split("/?token=")
        ws_base = base.replace("http", "ws", 1)
        try:
            async with (
                connect(f"{ws_base}/ws", additional_headers={"Cookie": f"uq_token={token}"}) as p,
                connect(
                    f"{ws_base}/ws/ask", additional_headers={"Authorization": f"Bearer {token}"}
                ) as a,
                anyio.create_task_group() as tasks,
            ):
                tasks.start_soon(page, p)
                began = time.monotonic()
                marks: list[tuple[int, float]] = []
                for index in range(asks):
                    await ask(a, index)
                    if (index + 1) % first == 0:
                        marks.append((index + 1, rss_mb(host.pid)))
                        print(f"{index + 1:>7} asks answered: host RSS {marks[-1][1]:.1f} MB")
                took = time.monotonic() - began
                tasks.cancel_scope.cancel()
        finally:
            host.terminate()
            host.wait(30)
    (_, after_first), (_, after_all) = marks[0], marks[-1]
    growth = after_all / after_first - 1
    print(
        f"{asks} asks in {took:.0f} s ({asks / took:.0f}/s); RSS {after_first:.1f} MB after "
        f"{first}, {after_all:.1f} MB after {asks}: {growth:+.1%} (target within "
        f"{GROWTH_TARGET:.0%}: {'met' if abs(growth) <= GROWTH_TARGET else 'missed'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=100_000)
    parser.add_argument("--first", type=int, default=10_000)
    arguments = parser.parse_args()
    anyio.run(run, arguments.asks, arguments.first)


if __name__ == "__main__":
    main()
