"""Rule decisions per second through `POST /api/decide` on a real host, from 8 clients at once.

Run: `.venv/bin/python benchmarks/decide_throughput.py [--clients C] [--seconds S]
[--profile FILE]`. Starts `uq serve` on a temporary SQLite file with a few rules (`uq rule add`:
allows of `git status`, `npm run test`, Codex's `pytest`, a deny of `rm -rf`), then C clients (8 by
default), each on its own keep-alive connection with an asker's token (plain HTTP/1.1 written
by hand, so that the clients' own CPU stays small beside the host's), send the calls a hook
sends for S seconds (10 by default), in turn: a plain command a rule allows, a compound one
every part of which a rule allows, one that is not plain (`$x`: no rule may allow it, 204), one a
rule denies, and Codex's argv form. Every decided call is stored settled, as the hook's quick path
makes it. Prints decisions per second, the p50 and p99 of one decision as a client sees it, by
kind and over all, and the host's CPU per decision, beside the targets of issue 42 (>= 2,000/s,
p99 <= 5 ms) and the pace lines. The clients share the machine with the host.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import anyio.abc
import httpx
from host_roundtrip import asker_url, cpu_seconds, met, percentile, start_host
from machine import pace
from many_askers import accepted

from user_questions.approvals import approval_of, approval_question
from user_questions.frames import Ask

RATE_TARGET = 2_000
P99_TARGET_MS = 5.0
RULES = [
    ["Bash", "--command", "git status", "--allow"],
    ["Bash", "--command", "npm run test", "--allow"],
    ["exec_command", "--command", "pytest", "--allow"],
    ["Bash", "--command", "rm -rf", "--deny"],
]
CALLS: dict[str, tuple[str, object]] = {
    "plain": ("Bash", {"command": "git status -s"}),
    "compound": ("Bash", {"command": "git status && npm run test -- --watch"}),
    "not plain": ("Bash", {"command": "git status $x"}),
    "denied": ("Bash", {"command": "sudo rm -rf /tmp/build"}),
    "argv": ("exec_command", {"command": ["bash", "-lc", "pytest -x tests"]}),
}
_ID = "RPC-ID-HERE"


def body_of(tool: str, arguments: object) -> str:
    """The hook's request for the call, its rpcId a placeholder (each request has its own)."""
    assert isinstance(arguments, dict)
    card = approval_question(tool, arguments, agent="Codex")
    approval = approval_of(tool, arguments, agent="codex", cwd="/w")
    ask = Ask(rpc_id=_ID, session_id="codex:bench", questions=[card], approval=approval)
    return ask.model_dump_json(by_alias=True, exclude_none=True)


def add_rules(store: str) -> None:
    for rule in RULES:
        tool, *grammar = rule
        command = [sys.executable, "-m", "user_questions.cli", "rule", "add", "--tool", tool]
        subprocess.run([*command, *grammar, "--store", store], check=True, capture_output=True)


def request_of(host: str, token: str, body: str) -> bytes:
    """The HTTP/1.1 request a hook's quick path sends, written once per call (the client's own
    CPU stays small: it shares the machine with the host it measures)."""
    head = (
        f"POST /api/decide HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body.encode())}\r\n\r\n"
    )
    return (head + body).encode()


async def status_of(stream: anyio.abc.ByteStream, buffered: bytearray) -> int:
    """Read one HTTP/1.1 response off `stream` (`buffered`: what was read past the last one);
    its status."""
    while b"\r\n\r\n" not in buffered:
        buffered += await stream.receive()
    head, _, rest = bytes(buffered).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.lower() == "content-length":
            length = int(value)
    while len(rest) < length:
        rest += await stream.receive()
    buffered[:] = rest[length:]
    return int(lines[0].split()[1])


async def client(
    number: int, base: str, token: str, until: float, times: dict[str, list[float]]
) -> None:
    address = httpx.URL(base)
    host, port = address.host, address.port or 80
    bodies = {kind: body_of(*call) for kind, call in CALLS.items()}
    sent = 0
    buffered = bytearray()
    async with await anyio.connect_tcp(host, port) as stream:
        while time.perf_counter() < until:
            for kind, body in bodies.items():
                sent += 1
                request = request_of(
                    f"{host}:{port}", token, body.replace(_ID, f"c{number}-{sent}")
                )
                began = time.perf_counter()
                await stream.send(request)
                status = await status_of(stream, buffered)
                times[kind].append(time.perf_counter() - began)
                expected = 204 if kind == "not plain" else 200
                if status != expected:
                    raise SystemExit(f"{kind}: HTTP {status}")


async def run(arguments: argparse.Namespace) -> None:
    print(pace("before"))
    with tempfile.TemporaryDirectory(prefix="uq-decide-") as folder:
        store = str(Path(folder) / "host.db")
        host, page_url = start_host(store, arguments.profile)
        try:
            add_rules(store)
            agents = asker_url(store, page_url)
            await accepted(agents)
            base, token = agents.split("/?token=")
            times: dict[str, list[float]] = {kind: [] for kind in CALLS}
            for _ in range(2):  # warm up: the rules read, the connections made
                async with httpx.AsyncClient() as warm:
                    body = body_of(*CALLS["plain"]).replace(_ID, f"warm-{time.time_ns()}")
                    auth = {"Authorization": f"Bearer {token}"}
                    await warm.post(f"{base}/api/decide", content=body, headers=auth)
            cpu_before = cpu_seconds(host.pid)
            began = time.perf_counter()
            until = began + arguments.seconds
            async with anyio.create_task_group() as clients:
                for number in range(arguments.clients):
                    clients.start_soon(client, number, base, token, until, times)
            elapsed = time.perf_counter() - began
            cpu = cpu_seconds(host.pid) - cpu_before
        finally:
            host.terminate()
            host.communicate(timeout=60)
    every = [seconds for kind in times.values() for seconds in kind]
    rate = len(every) / elapsed
    p99 = percentile(every, 0.99) * 1000
    print(f"{arguments.clients} clients, {len(every)} decisions in {elapsed:.1f} s")
    for kind, seconds in times.items():
        print(
            f"  {kind:>9}: p50 {percentile(seconds, 0.5) * 1000:.2f} ms, "
            f"p99 {percentile(seconds, 0.99) * 1000:.2f} ms ({len(seconds)})"
        )
    print(
        f"decisions per second: {rate:,.0f} (target >= {RATE_TARGET:,}: {met(rate >= RATE_TARGET)})"
    )
    print(
        f"all: p50 {percentile(every, 0.5) * 1000:.2f} ms, p99 {p99:.2f} ms "
        f"(target <= {P99_TARGET_MS:g} ms: {met(p99 <= P99_TARGET_MS)})"
    )
    print(f"host CPU per decision: {cpu * 1000 / len(every):.2f} ms")
    print(pace("after"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=8, help="clients at once (8)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long they send (10)")
    parser.add_argument("--profile", help="write the host's cProfile statistics to this file")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
