"""What `uq acp` adds to the messages between an editor and its agent.

Run: `.venv/bin/python benchmarks/acp_proxy_overhead.py [--messages N]`. An echo agent (a Python
process answering every JSON-RPC request on its stdin at once) is driven by this process as the
editor, N requests one after the other, first directly, then through `uq acp -- AGENT` with its
inbox down (nothing listens on the port: every request passes through unread) and with a host up
(`uq serve`, so the proxy reads every line and would put a permission request in the inbox; echo
requests are not questions, so none is). It prints p50 / p99 of a request's round trip in
milliseconds and how much the proxy adds at the median.

Target: the proxy adds under 1 ms at the median on a quiet machine; it never waits for the host.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ECHO_AGENT = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"echo": message["params"]}}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""
SERVE = (sys.executable, "-m", "user_questions.cli", "serve", "--port", "0")
TARGET_MS = 1.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def round_trips(command: list[str], messages: int, env: dict[str, str]) -> list[float]:
    """Milliseconds for each request's answer, one request at a time."""
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, **env}
    )
    assert process.stdin is not None
    assert process.stdout is not None
    times = []
    params = {"sessionId": "s", "text": "x" * 200}
    for number in range(messages + 20):
        line = json.dumps({"jsonrpc": "2.0", "id": number, "method": "_echo", "params": params})
        start = time.perf_counter()
        process.stdin.write(line.encode() + b"\n")
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        elapsed = (time.perf_counter() - start) * 1000
        assert reply["id"] == number, reply
        if number >= 20:  # warmed up
            times.append(elapsed)
    process.stdin.close()
    process.wait(timeout=30)
    return times


def report(name: str, times: list[float], baseline: float | None) -> float:
    ordered = sorted(times)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    added = "" if baseline is None else f"  adds {p50 - baseline:+.3f} ms at p50"
    print(f"{name:<28} p50 {p50:7.3f} ms  p99 {p99:7.3f} ms{added}")
    return p50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    args = parser.parse_args()
    agent = [sys.executable, "-c", ECHO_AGENT]
    proxy = [sys.executable, "-m", "user_questions.cli", "acp", "--"]
    direct = report("editor -> agent", round_trips(agent, args.messages, {}), None)
    down = {"UQ_URL": f"http://127.0.0.1:{free_port()}/?token=nobody-listens"}
    times = round_trips([*proxy, *agent], args.messages, down)
    added = [report("through uq acp, host down", times, direct)]
    with tempfile.TemporaryDirectory() as folder:
        host = subprocess.Popen(
            [*SERVE, "--store", str(Path(folder) / "host.db")],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert host.stdout is not None
        url = host.stdout.readline().strip()
        try:
            times = round_trips([*proxy, *agent], args.messages, {"UQ_URL": url})
            added.append(report("through uq acp, host up", times, direct))
        finally:
            host.terminate()
            host.wait(timeout=30)
    worst = max(added) - direct
    verdict = "met" if worst < TARGET_MS else "missed"
    print(f"target: the proxy adds < {TARGET_MS} ms at p50: {verdict} ({worst:.3f} ms)")


if __name__ == "__main__":
    main()
