"""Round trips through a real host: agents in other processes, a scripted page answering.

Run: `.venv/bin/python benchmarks/host_roundtrip.py [--askers N] [--asks M] [--concurrency C]
[--pending P] [--store STORE] [--nodes K]`. Starts `uq serve` in a subprocess (on a temporary
SQLite file unless `--store` names a store; `--profile FILE` runs it under cProfile), connects one
scripted page over `/ws` that answers every request the moment it appears, and starts N asker
processes, each asking M requests through `RemoteProvider` and the real service. Two phases,
each printing latency from `ask()` to the answer received (p50 / p99 over every ask), answered
requests per second (from the first asker's start to the last one's end) and the host's CPU time
per answered request:

- latency: one ask in flight per asker, as agents usually ask;
- throughput: C asks in flight per asker, to saturate the host.

Then P requests are left pending (no page answers, askers waiting): the host's resident memory,
and how long a page that connects then takes to receive all P.

With `--nodes 2 --store postgresql://...`, two hosts share the database (docs/multinode.md): the
askers ask through node A and the page answers on node B, so every round trip crosses nodes
(a NOTIFY wakes B, B's answer wakes A). The latency phase then runs twice, with the page on node
A (same node) and on node B (cross-node); the pending phase weighs both nodes and replays from B.

Targets (issue 42; issue 16 asked for 0.6 ms, 2 ms, 1,000 per second and 100 MB), each printed
beside its figure: host CPU per answered request <= 0.5 ms; latency p50 <= 1.5 ms; >= 1,500
answered per second in the throughput phase; host RSS <= 80 MB with 10,000 pending. Everything
(host, askers, page) shares this machine's cores, so run it on a quiet machine and compare runs
made at nearly the same moment.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
from machine import pace
from websockets.asyncio.client import ClientConnection, connect

from user_questions import (
    AgentRegistry,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    UserQuestionService,
)
from user_questions.providers.remote import RemoteProvider

P50_TARGET_MS = 1.5
"""Latency phase: p50 from `ask()` to the answer, at most this many milliseconds."""
RATE_TARGET = 1500
"""Throughput phase: at least this many answered requests per second."""
HOST_CPU_TARGET_MS = 0.5
"""The host's CPU time per answered request, at most this many milliseconds."""
RSS_TARGET_MB = 80
"""The host's resident memory with 10,000 pending requests, at most this many MB (issue 42)."""

QUESTION = AskUserQuestionItem(
    id="go",
    question="Ship it?",
    header="Release",
    options=[
        AskUserQuestionOption(label="Ship (Recommended)", description="All checks passed."),
        AskUserQuestionOption(label="Wait", description="Hold until Monday."),
    ],
)


# -- the asker processes ----------------------------------------------------------------------


def distinct(worker: int, number: int) -> AskUserQuestionItem:
    """`QUESTION`, made distinct for each ask: identical pending asks of one token are one card
    (docs/host.md, "Identical requests"), and each ask here is meant to be a card of its own."""
    asked = f"{QUESTION.question} (build {os.getpid()}.{worker}.{number})"
    return QUESTION.model_copy(update={"question": asked})


async def asker(url: str, asks: int, concurrency: int, wait_for_go: bool) -> None:
    """Ask `asks` requests, `concurrency` at a time; print the latencies as one JSON line."""
    ctx = Context()
    ctx.plugin(AgentRegistry)
    ctx.plugin(UserQuestionService)
    latencies: list[float] = []
    async with RemoteProvider(url, session=f"bench-{os.getpid()}") as provider:
        ctx.user_questions.register_provider(provider)
        if wait_for_go:
            await ctx.user_questions.ask(AskUserQuestionRequest(questions=[QUESTION]))  # warm up
            print("ready", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
        started, cpu = time.time(), time.process_time()

        async def worker(index: int, count: int) -> None:
            for number in range(count):
                begin = time.perf_counter()
                await ctx.user_questions.ask(AskUserQuestionRequest([distinct(index, number)]))
                latencies.append(time.perf_counter() - begin)

        async with anyio.create_task_group() as task_group:
            share, extra = divmod(asks, concurrency)
            for index in range(concurrency):
                task_group.start_soon(worker, index, share + (index < extra))
    cpu = time.process_time() - cpu
    print(
        json.dumps({"started": started, "ended": time.time(), "cpu": cpu, "latencies": latencies})
    )


# -- the scripted page ------------------------------------------------------------------------


def response_to(frame: dict[str, Any]) -> dict[str, Any] | None:
    """The page's answer to a `question/requested` frame: the first option of every question;
    `None` for any other frame."""
    payload = frame["payload"]
    if payload["type"] != "question/requested":
        return None
    items = [
        {"id": question["id"], "selected": [question["options"][0]["label"]]}
        for question in payload["questions"]
    ]
    return {
        "type": "client-response",
        "rpcId": frame["rpcId"],
        "result": {
            "ok": True,
            "value": {"sessionId": payload["sessionId"], "answer": {"answers": items}},
        },
    }


async def answer_everything(page: ClientConnection) -> None:
    """Answer each request as soon as it is shown (`response_to`)."""
    async for message in page:
        response = response_to(json.loads(message))
        if response is not None:
            await page.send(json.dumps(response))


async def open_page(base: str, token: str) -> ClientConnection:
    return await connect(
        base.replace("http", "ws", 1) + "/ws",
        additional_headers={"Origin": base, "Cookie": f"uq_token={token}"},
        max_size=None,
    )


# -- the run ----------------------------------------------------------------------------------


def start_host(
    store: str, profile: str | None = None, *, wait: float = 30.0
) -> tuple[subprocess.Popen[str], str]:
    """`uq serve` on `store` (under cProfile, writing to `profile`), and the URL it printed
    within `wait` seconds (a host loading many pending requests takes longer)."""
    python = (
        [sys.executable] if profile is None else [sys.executable, "-m", "cProfile", "-o", profile]
    )
    host = subprocess.Popen(
        [*python, "-m", "user_questions.cli", "serve", "--port", "0", "--store", store],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert host.stdout is not None
    if not select.select([host.stdout], [], [], wait)[0]:
        raise SystemExit(f"uq serve printed nothing within {wait:g} s")
    return host, host.stdout.readline().strip()


def asker_url(store: str, page_url: str) -> str:
    """The URL agents ask through: the host's address with a token of their own, an asker's
    (as an agent should hold), whose pending cap and rate are raised so that they measure the
    host, not the fair share (`uq token add ... --max-pending --rate`)."""
    limits = ["--max-pending", "50000", "--rate", "100000:1000000"]
    command = [sys.executable, "-m", "user_questions.cli", "token", "add", "bench-asker"]
    made = subprocess.run(
        [*command, "--role", "asker", *limits, "--store", store],
        capture_output=True,
        text=True,
        check=True,
    )
    return f"{page_url.split('/?token=')[0]}/?token={made.stdout.splitlines()[0].strip()}"


def start_askers(
    url: str, count: int, asks: int, concurrency: int, *, wait_for_go: bool
) -> list[subprocess.Popen[str]]:
    command = [sys.executable, __file__, "asker", url, str(asks), str(concurrency)]
    if wait_for_go:
        command.append("--wait-for-go")
    return [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(count)
    ]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def wait_pending(base: str, token: str, count: int) -> None:
    deadline = time.monotonic() + 300
    headers = {"Authorization": f"Bearer {token}"}
    while time.monotonic() < deadline:
        pending = httpx.get(f"{base}/api/pending", headers=headers, timeout=60).json()["pending"]
        if len(pending) >= count:
            return
        time.sleep(0.5)
    raise SystemExit(f"the host never reached {count} pending requests")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def run(arguments: argparse.Namespace) -> None:
    if arguments.nodes > 1 and not str(arguments.store).startswith(
        ("postgresql://", "postgres://")
    ):
        raise SystemExit("--nodes above 1 needs a shared store: --store postgresql://...")
    print(pace("before"), flush=True)
    with tempfile.TemporaryDirectory(prefix="uq-bench-") as folder:
        store = arguments.store or str(Path(folder) / "host.db")
        hosts: list[subprocess.Popen[str]] = []
        try:
            urls = []
            for index in range(arguments.nodes):  # one after the other: the first makes the token
                host, url = start_host(store, arguments.profile if index == 0 else None)
                hosts.append(host)
                urls.append(url)
            pids = [host.pid for host in hosts]
            ask_url = asker_url(store, urls[0])
            print(
                f"host store: {arguments.store or 'SQLite (temporary file)'}; {len(hosts)} node(s)"
            )
            print(f"host RSS idle: {rss_list(pids)}")
            cross = " (cross-node: ask on A, answer on B)" if len(urls) > 1 else ""
            phases = [(1, "latency", urls[0])]
            if len(urls) > 1:
                phases.append((1, "latency" + cross, urls[-1]))
            phases.append((arguments.concurrency, "throughput" + cross, urls[-1]))
            for in_flight, label, page_url in phases:
                await round_trips(arguments, pids, ask_url, page_url, in_flight, label)
            if arguments.pending:
                await hold_pending(arguments.pending, pids, ask_url, urls[-1])
        finally:
            for host in hosts:
                host.terminate()
                host.wait(timeout=60)
    print(pace("after"))


async def round_trips(
    arguments: argparse.Namespace,
    host_pids: list[int],
    ask_url: str,
    page_url: str,
    in_flight: int,
    label: str,
) -> None:
    """One phase: every asker asks `--asks` requests through `ask_url`, `in_flight` at a time,
    all answered by a page on `page_url`."""
    base, token = page_url.split("/?token=")
    page = await open_page(base, token)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(answer_everything, page)
        askers = start_askers(
            ask_url, arguments.askers, arguments.asks, in_flight, wait_for_go=True
        )
        for process in askers:
            assert process.stdout is not None
            line = await anyio.to_thread.run_sync(process.stdout.readline)
            assert line.strip() == "ready", line
        cpu_before = sum(cpu_seconds(pid) for pid in host_pids)
        for process in askers:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        reports = []
        for process in askers:
            out, _ = await anyio.to_thread.run_sync(process.communicate)
            reports.append(json.loads(out.splitlines()[-1]))
        cpu = sum(cpu_seconds(pid) for pid in host_pids) - cpu_before
        task_group.cancel_scope.cancel()
    await page.close()

    latencies = [value for report in reports for value in report["latencies"]]
    elapsed = max(r["ended"] for r in reports) - min(r["started"] for r in reports)
    p50, p99 = percentile(latencies, 0.50) * 1000, percentile(latencies, 0.99) * 1000
    rate = len(latencies) / elapsed
    host_cpu = cpu / len(latencies) * 1000
    hosts = "host" if len(host_pids) == 1 else "hosts"
    p50_target = f" (target <= {P50_TARGET_MS:g} ms: {met(p50 <= P50_TARGET_MS)})"
    rate_target = f" (target >= {RATE_TARGET}: {met(rate >= RATE_TARGET)})"
    print(
        f"[{label}] {arguments.askers} asker processes x {arguments.asks} asks, "
        f"{in_flight} in flight each: p50 {p50:.2f} ms{p50_target if in_flight == 1 else ''}, "
        f"p99 {p99:.2f} ms, {rate:.0f} answered/s{rate_target if in_flight > 1 else ''}; "
        f"CPU per answered request: {hosts} {host_cpu:.2f} ms "
        f"(target <= {HOST_CPU_TARGET_MS:g} ms: {met(host_cpu <= HOST_CPU_TARGET_MS)}), "
        f"asker {sum(r['cpu'] for r in reports) / len(latencies) * 1000:.2f} ms"
    )


def met(achieved: bool) -> str:
    return "met" if achieved else "NOT met"


async def hold_pending(count: int, host_pids: list[int], ask_url: str, page_url: str) -> None:
    """Leave `count` requests pending through `ask_url` (no page answers), then weigh the hosts
    and replay them to a page on `page_url`."""
    base, token = page_url.split("/?token=")
    per_process = count // 4
    waiting = start_askers(ask_url, 4, per_process, per_process, wait_for_go=False)
    try:
        wait_pending(base, token, per_process * 4)
        rss = max(rss_mb(pid) for pid in host_pids)
        target = f"target <= {RSS_TARGET_MB} MB: {met(rss <= RSS_TARGET_MB)}"
        print(f"host RSS with {per_process * 4} pending: {rss_list(host_pids)} ({target})")
        began = time.perf_counter()
        page = await open_page(base, token)
        for _ in range(per_process * 4):
            await page.recv()
        replay = time.perf_counter() - began
        await page.close()
        print(f"a page connecting then receives all {per_process * 4} in {replay:.2f} s")
    finally:
        for process in waiting:
            process.kill()
            process.communicate()


def rss_list(pids: list[int]) -> str:
    """Each node's resident memory: `41.2 MB`, or `A 41.2 MB, B 40.8 MB`."""
    if len(pids) == 1:
        return f"{rss_mb(pids[0]):.1f} MB"
    return ", ".join(f"{chr(65 + index)} {rss_mb(pid):.1f} MB" for index, pid in enumerate(pids))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "asker":
        url, asks, concurrency = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        anyio.run(asker, url, asks, concurrency, "--wait-for-go" in sys.argv)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--askers", type=int, default=2, help="asker processes (default 2)")
    parser.add_argument("--asks", type=int, default=500, help="asks per process (default 500)")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=8,
        help="asks in flight per process in the throughput phase (default 8)",
    )
    parser.add_argument(
        "--pending", type=int, default=10_000, help="pending requests for the memory figure"
    )
    parser.add_argument("--store", help="the host's store (default: a temporary SQLite file)")
    parser.add_argument(
        "--nodes",
        type=int,
        default=1,
        help="hosts sharing --store (a postgresql:// URL); askers on the first, page on the last",
    )
    parser.add_argument("--profile", help="write the host's cProfile statistics to this file")
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
