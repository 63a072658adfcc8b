"""A fleet on one host: N asker sockets, each with one pending request, then every one answered.

Run: `.venv/bin/python benchmarks/many_askers.py [--askers N] [--store STORE] [--profile FILE]`
(10,000 askers by default). Raises this process's file-descriptor limit as far as the machine
allows (the host it starts inherits it), starts `uq serve` on a temporary SQLite file, and opens N
WebSockets to `/ws/ask` with an asker token of its own (its pending cap and rate raised so that
the fair share does not limit the measure), each asking one question for a session of its own.
Prints:

- the host's RSS before the askers connect and once every one is acknowledged (`ask/pending`);
- the time from the first connection to the last acknowledgement;
- the time from a page connecting (it answers each request the moment it is shown) until every
  asker is told its answer (`ask/settled`), and that each was told exactly once;
- the host's CPU time over the whole run, and per answered request;

beside the targets of issue 42 (RSS <= 300 MB, all acknowledged <= 5 s, for 10,000) and the pace
lines (`machine.py`). The askers run in this one process and share the machine with the host, so
compare runs made at nearly the same moment.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from host_roundtrip import (
    asker_url,
    cpu_seconds,
    met,
    open_page,
    response_to,
    rss_mb,
    start_host,
)
from machine import pace

RSS_TARGET_MB = 300
ACK_TARGET_S = 5.0
CONNECTING = 256
"""Connections being opened at once (a listener's backlog is finite)."""


def own_cpu() -> float:
    """This process's CPU time so far (the askers' side of the measure), in seconds."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def raise_fd_limit() -> int:
    """Raise the soft limit on open files to the hard one; the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def ask_frame(number: int) -> str:
    question = {
        "id": "go",
        "question": f"Deploy build {number}?",
        "options": [{"label": "Deploy"}, {"label": "Not now"}],
    }
    frame = {"type": "ask", "rpcId": f"a{number}", "sessionId": f"agent-{number}"}
    return json.dumps({**frame, "questions": [question]})


async def accepted(url: str) -> None:
    """Wait until the host accepts the asker token of `url`, made beside it (it reads the
    store's change within its watch interval)."""
    base, token = url.split("/?token=")
    async with httpx.AsyncClient() as client:
        with anyio.fail_after(30):
            while True:  # polling the host over HTTP: nothing to wait on
                me = await client.get(
                    f"{base}/api/me", headers={"Authorization": f"Bearer {token}"}
                )
                if me.status_code == 200:
                    return
                await anyio.sleep(0.05)


class AskerSocket:
    """One asker's WebSocket, written by hand (the HTTP upgrade, a masked text frame out, text
    frames in) on asyncio's streams, so that 10,000 askers in this process cost far less CPU than
    the host they measure: they share its two cores (the websockets client took about as much
    CPU per connection as the host)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, url: str) -> AskerSocket:
        address = httpx.URL(url)
        host, port = address.host, address.port or 80
        reader, writer = await asyncio.open_connection(host, port)
        key = base64.b64encode(os.urandom(16)).decode()
        path = address.raw_path.decode()
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            raise SystemExit(f"the host refused an asker: {head.decode(errors='replace')}")
        return cls(reader, writer)

    def send(self, text: str) -> None:
        payload = text.encode()
        size, mask = len(payload), os.urandom(4)
        length = bytes([0x80 | size]) if size < 126 else bytes([0x80 | 126]) + size.to_bytes(2)
        keys = int.from_bytes((mask * (size // 4 + 1))[:size])
        masked = (int.from_bytes(payload) ^ keys).to_bytes(size)
        self.writer.write(b"\x81" + length + mask + masked)

    async def recv(self) -> str:
        head = await self.reader.readexactly(2)
        size = head[1] & 0x7F
        if size >= 126:
            size = int.from_bytes(await self.reader.readexactly(2 if size == 126 else 8))
        data = await self.reader.readexactly(size)
        if head[0] != 0x81:  # a final text frame: the host sends nothing else to an asker
            raise SystemExit(f"an asker got frame {head[0]:#x}: {data!r}")
        return data.decode()

    def close(self) -> None:
        self.writer.close()


async def connect(url: str, limiter: anyio.CapacityLimiter) -> AskerSocket:
    """One asker's socket, open (`CONNECTING` handshakes at most at once)."""
    async with limiter:
        return await AskerSocket.open(url)


async def ask(socket: AskerSocket, number: int) -> None:
    """Ask on `socket`; return once the host has acknowledged it."""
    socket.send(ask_frame(number))
    reply = json.loads(await socket.recv())
    if reply["payload"]["type"] != "ask/pending":
        raise SystemExit(f"asker {number} was not acknowledged: {reply}")


async def connect_and_ask(url: str, number: int, limiter: anyio.CapacityLimiter) -> AskerSocket:
    """One asker's socket, once the host has acknowledged its ask."""
    socket = await connect(url, limiter)
    await ask(socket, number)
    return socket


async def told(socket: AskerSocket, number: int, outcomes: list[str]) -> None:
    """Wait for the asker's settlement; it must be its own, and the only one."""
    reply = json.loads(await socket.recv())
    if reply["rpcId"] != f"a{number}" or reply["payload"]["type"] != "ask/settled":
        raise SystemExit(f"asker {number} was told something else: {reply}")
    outcomes.append(reply["payload"]["outcome"])


async def run(arguments: argparse.Namespace) -> None:
    count = arguments.askers
    limit = raise_fd_limit()
    print(f"file descriptors: {limit} per process (the host's {count} sockets take as many)")
    print(pace("before"))
    with tempfile.TemporaryDirectory(prefix="uq-fleet-") as folder:
        store = arguments.store or str(Path(folder) / "host.db")
        host, page_url = start_host(store, arguments.profile)
        try:
            base, token = page_url.split("/?token=")
            agents = asker_url(store, page_url)
            await accepted(agents)
            ask_url = agents.replace("http", "ws", 1).replace("/?", "/ws/ask?")
            before = rss_mb(host.pid)
            print(f"host RSS before: {before:.1f} MB")

            def verdict(achieved: bool) -> str:
                return met(achieved) if count >= 10_000 else "not measured with fewer askers"

            sockets: list[AskerSocket | None] = [None] * count
            limiter = anyio.CapacityLimiter(CONNECTING)

            async def open_one(number: int) -> None:
                sockets[number] = await connect(ask_url, limiter)

            began, host_began, own_began = time.perf_counter(), cpu_seconds(host.pid), own_cpu()
            async with anyio.create_task_group() as connecting:
                for number in range(count):
                    connecting.start_soon(open_one, number)
            connected = time.perf_counter()
            async with anyio.create_task_group() as asking:
                for number, socket in enumerate(sockets):
                    assert socket is not None
                    asking.start_soon(ask, socket, number)
            ended = time.perf_counter()
            acknowledged = ended - began
            host_cpu, own = cpu_seconds(host.pid) - host_began, own_cpu() - own_began
            after = rss_mb(host.pid)
            print(
                f"{count} askers connected in {connected - began:.2f} s, then all asked and "
                f"acknowledged in {ended - connected:.2f} s: from the first connection to the "
                f"last acknowledgement {acknowledged:.2f} s (target for 10,000 <= "
                f"{ACK_TARGET_S:g} s: {verdict(acknowledged <= ACK_TARGET_S)}); CPU meanwhile: "
                f"the host {host_cpu:.2f} s, these askers {own:.2f} s"
            )
            print(
                f"host RSS with {count} asker sockets and as many pending: {after:.1f} MB, "
                f"{(after - before) * 1024 / count:.1f} KB per asker "
                f"(target for 10,000 <= {RSS_TARGET_MB} MB: {verdict(after <= RSS_TARGET_MB)})"
            )
            outcomes: list[str] = []
            began = time.perf_counter()
            page = await open_page(base, token)
            async with anyio.create_task_group() as waiting:
                for number, socket in enumerate(sockets):
                    assert socket is not None
                    waiting.start_soon(told, socket, number, outcomes)

                async def answer() -> None:
                    answered = 0
                    while answered < count:
                        response = response_to(json.loads(await page.recv()))
                        if response is not None:
                            await page.send(json.dumps(response))
                            answered += 1

                waiting.start_soon(answer)
            all_told = time.perf_counter() - began
            print(
                f"every asker told its answer {all_told:.2f} s after a page connected "
                f"({len(outcomes)} told, {outcomes.count('answered')} answered, each once)"
            )
            cpu = cpu_seconds(host.pid)
            print(f"host CPU: {cpu:.2f} s over the run, {cpu * 1000 / count:.2f} ms per asker")
            await page.close()
            for socket in sockets:
                assert socket is not None
                socket.close()
        finally:
            host.terminate()
            host.communicate(timeout=60)
    print(pace("after"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--askers", type=int, default=10_000, help="asker sockets (10,000)")
    parser.add_argument("--store", help="the host's store (default: a temporary SQLite file)")
    parser.add_argument("--profile", help="write the host's cProfile statistics to this file")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
