"""How fast `uq hook` leaves an event it does not answer, and how fast it answers one it does.

Run: `.venv/bin/python benchmarks/hook_startup.py [--runs N]`. Claude Code and Codex run their
hook on every matching tool call, so the hook's cost on an event it leaves alone is paid again
and again; it is measured as the CLI pays it: a new `uq hook claude` process, the event on stdin,
wall time from spawn to exit.

- baseline: `python -c pass` with the same interpreter, the floor no hook can go under;
- no-op: a `PreToolUse` of `Bash` (sent before every Bash call, also allowed ones), which the
  hook leaves at once: p50 / p90 against the target of 150 ms;
- ask: a `PermissionRequest` of `Bash` asked through `uq serve` (a temporary SQLite store), with
  the agents' asker URL it prints (the hook refuses a token that can answer), and a scripted page
  that answers every card the moment it appears: from spawn to the hook's output, which includes
  loading the command line, connecting (and reading the token's role from the handshake),
  storing, showing and answering.

The machine's other work shows in the figures: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from host_roundtrip import answer_everything, open_page, percentile, start_host

UQ = str(Path(sys.executable).with_name("uq"))
TARGET_MS = 150.0
NO_OP = {
    "session_id": "bench",
    "cwd": "/tmp",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "git status", "description": "Show working tree status"},
    "tool_use_id": "toolu_bench",
}
ASKED = {
    **NO_OP,
    "hook_event_name": "PermissionRequest",
    "permission_suggestions": [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "git status"}],
            "behavior": "allow",
            "destination": "localSettings",
        }
    ],
}


def timed(command: list[str], stdin: str, env: dict[str, str]) -> tuple[float, str]:
    """Milliseconds from spawn to exit, and what the process printed."""
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr}")
    return elapsed, done.stdout


def report(name: str, times: list[float], target: float | None = None) -> None:
    p50, p90 = statistics.median(times), percentile(times, 0.9)
    line = f"{name:<9} p50 {p50:6.1f} ms   p90 {p90:6.1f} ms   ({len(times)} runs)"
    if target is not None:
        line += f"   target <= {target:.0f} ms, p90/target {p90 / target:.2f}"
    print(line, flush=True)


async def asked(runs: int, environ: dict[str, str]) -> list[float]:
    times: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        host, url = start_host(str(Path(folder) / "uq.db"), None)
        try:
            assert host.stdout is not None
            export = host.stdout.readline().strip()  # export UQ_URL='<the agents' URL>'
            (agents,) = shlex.split(export.removeprefix("export UQ_URL="))
            base, token = url.split("/?token=")
            page = await open_page(base, token)
            async with page, anyio.create_task_group() as group:
                group.start_soon(answer_everything, page)
                for index in range(runs):
                    event = json.dumps({**ASKED, "session_id": f"bench-{index}"})
                    command = [UQ, "hook", "claude", "--url", agents]
                    elapsed, out = await anyio.to_thread.run_sync(timed, command, event, environ)
                    if '"behavior": "allow"' not in out:
                        raise SystemExit(f"the hook did not allow: {out!r}")
                    times.append(elapsed)
                group.cancel_scope.cancel()
        finally:
            host.terminate()
            host.communicate(timeout=30)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    arguments = parser.parse_args()
    environ = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    baseline = [
        timed([sys.executable, "-c", "pass"], "", environ)[0] for _ in range(arguments.runs)
    ]
    report("baseline", baseline)
    no_op = []
    for _ in range(arguments.runs):
        elapsed, out = timed([UQ, "hook", "claude"], json.dumps(NO_OP), environ)
        if out:
            raise SystemExit(f"the no-op hook printed {out!r}")
        no_op.append(elapsed)
    report("no-op", no_op, TARGET_MS)
    report("ask", anyio.run(asked, arguments.runs, environ))


if __name__ == "__main__":
    main()
