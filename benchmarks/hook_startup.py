"""How fast `uq hook` leaves an event it does not answer, and how fast it answers one it does.

Run: `.venv/bin/python benchmarks/hook_startup.py [--runs N]`. Claude Code and Codex run their
hook on every matching tool call, so the hook's cost on an event it leaves alone is paid again
and again; it is measured as the CLI pays it: a new `uq hook claude` process, the event on stdin,
wall time from spawn to exit.

- baseline: `python -c pass` with the same interpreter, the floor no hook can go under;
- no-op: a `PreToolUse` of `Bash` (sent before every Bash call, also allowed ones), which the
  hook leaves at once: p50 / p90 against the target of 150 ms;
- post-tool: a `PostToolUse` of `Bash` (sent after every call) with no note kept for it, which
  the hook leaves after looking for one (`_hooks.allowed_notes`): the same target;
- ask: a `PermissionRequest` of `Bash` asked through `uq serve` (a temporary SQLite store), with
  the agents' asker URL it prints (the hook refuses a token that can answer), and a scripted page
  that answers every card the moment it appears: from spawn to the hook's output, which includes
  loading the command line, connecting (and reading the token's role from the handshake),
  storing, showing and answering;
- rule: a Codex `PermissionRequest` of `Bash` that a rule made with `uq rule add` answers, with
  no page at all: `uq hook codex` from spawn to its output, p50 / p90 against the targets of
  35 ms (issue 42) / 150 ms (the hook sits in front of every tool call a rule allows). The
  host reads the rules' version and parses the command with bash's grammar on this path
  (`rule_decision.py` times that part alone).

The machine's other work shows in the figures: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
from host_roundtrip import answer_everything, open_page, percentile, start_host

UQ = str(Path(sys.executable).with_name("uq"))
TARGET_MS = 150.0
RULE_TARGET_MS = (35.0, 150.0)
"""The rule-answered hook's targets: p50, p90."""
NO_OP = {
    "session_id": "bench",
    "cwd": "/tmp",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "git status", "description": "Show working tree status"},
    "tool_use_id": "toolu_bench",
}
AFTER_CALL = {**NO_OP, "hook_event_name": "PostToolUse", "tool_response": {"stdout": ""}}
"""A `PostToolUse` of a call allowed with no note (the common case): the hook looks for a kept
note and leaves."""
CODEX = {
    "session_id": "bench",
    "turn_id": "bench-turn",
    "cwd": "/tmp",
    "hook_event_name": "PermissionRequest",
    "model": "gpt-5-codex",
    "permission_mode": "default",
    "tool_name": "Bash",
    "tool_input": {"command": "git status -s", "description": "Show working tree status"},
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


@contextlib.contextmanager
def serving(folder: str) -> Iterator[tuple[str, str]]:
    """`uq serve` on a store in `folder`: the page's URL and the agents' asker URL it prints."""
    host, url = start_host(str(Path(folder) / "uq.db"), None)
    try:
        assert host.stdout is not None
        export = host.stdout.readline().strip()  # export UQ_URL='<the agents' URL>'
        (agents,) = shlex.split(export.removeprefix("export UQ_URL="))
        yield url, agents
    finally:
        host.terminate()
        host.communicate(timeout=30)


def ruled(runs: int, environ: dict[str, str]) -> list[float]:
    times: list[float] = []
    with tempfile.TemporaryDirectory() as folder, serving(folder) as (_, agents):
        rule = ["rule", "add", "--tool", "Bash", "--command", "git status", "--allow"]
        timed([UQ, *rule, "--store", str(Path(folder) / "uq.db")], "", environ)  # in force now
        for index in range(runs):
            event = json.dumps({**CODEX, "session_id": f"bench-{index}"})
            elapsed, out = timed([UQ, "hook", "codex", "--url", agents], event, environ)
            if '"behavior": "allow"' not in out:
                raise SystemExit(f"the rule did not allow: {out!r}")
            times.append(elapsed)
    return times


async def asked(runs: int, environ: dict[str, str]) -> list[float]:
    times: list[float] = []
    with tempfile.TemporaryDirectory() as folder, serving(folder) as (url, agents):
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
    for name, event in (("no-op", NO_OP), ("post-tool", AFTER_CALL)):
        times = []
        for _ in range(arguments.runs):
            elapsed, out = timed([UQ, "hook", "claude"], json.dumps(event), environ)
            if out:
                raise SystemExit(f"the {name} hook printed {out!r}")
            times.append(elapsed)
        report(name, times, TARGET_MS)
    report("ask", anyio.run(asked, arguments.runs, environ))
    rule = ruled(arguments.runs, environ)
    report("rule", rule, RULE_TARGET_MS[1])
    met = "met" if statistics.median(rule) <= RULE_TARGET_MS[0] else "NOT met"
    print(f"{'':<9} p50 target <= {RULE_TARGET_MS[0]:.0f} ms: {met}", flush=True)


if __name__ == "__main__":
    main()
