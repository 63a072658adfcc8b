"""How long the host takes to decide one call by its rules: reading the call (a shell command
parsed with bash's grammar, a patch, a URL) and matching it against the rules.

Run: `.venv/bin/python benchmarks/rule_decision.py [--runs N] [--rules R]`. For typical calls
(plain commands, a sequence, a command that is not plain, one with wrappers around a denied
program, Codex's argv form, a patch, a URL), it times `rules.explain` over R rules (half allows
of commands, a deny of `rm -rf` for every tool, paths and domains), N times each, and prints the
median and p90 in microseconds, then the same for reading the call alone, and the time of the
store's rules-version read a host makes before a decision no rule of its copy makes (SQLite).
Each run reads a command of its own (a last word added), as a host meets most commands for the
first time: the host remembers short commands it has read. The hook's whole path, process start
included, is `hook_startup.py`'s `rule` case.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import anyio
from machine import pace

from user_questions.frames import Approval
from user_questions.host.rules import check_rule, explain, read_call
from user_questions.host.stores import Decision, Rule, RuleRecord, open_store

NOW = datetime.now(UTC)
CALLS: dict[str, Approval] = {
    "git status -s": Approval(tool="Bash", input={"command": "git status -s"}, cwd="/w"),
    "npm run test -- --watch": Approval(
        tool="Bash", input={"command": "npm run test -- --watch"}, cwd="/w"
    ),
    "sequence of 4": Approval(
        tool="Bash",
        input={"command": "git add -A && git commit -m 'fix: x' && git status | head -5"},
        cwd="/w",
    ),
    "not plain ($x)": Approval(tool="Bash", input={"command": "git status $x"}, cwd="/w"),
    "sudo bash -c rm": Approval(
        tool="Bash", input={"command": "sudo -u root bash -c 'cd / && rm -rf tmp'"}, cwd="/w"
    ),
    "argv bash -lc": Approval(
        tool="exec_command", input={"command": ["bash", "-lc", "pytest -x tests"]}, cwd="/w"
    ),
    "200-line script": Approval(
        tool="Bash", input={"command": "\n".join(f"echo line {n}" for n in range(200))}, cwd="/w"
    ),
    "patch of 3 files": Approval(
        tool="apply_patch",
        input={
            "command": "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: b.py\n"
            "*** Move to: c.py\n@@\n-a\n+b\n*** Delete File: d.py\n*** End Patch"
        },
        cwd="/w",
    ),
    "URL": Approval(tool="WebFetch", input={"url": "https://docs.example.com/a?b#c"}, cwd="/w"),
}


def rules(count: int) -> list[RuleRecord]:
    made: list[Rule] = [Rule("*", Decision.DENY, NOW, command="rm -rf")]
    words = ["git status", "git diff", "npm run test", "pytest -x", "make", "cargo test"]
    for index in range(count - 1):
        kind = index % 4
        if kind < 2:
            made.append(Rule("Bash", Decision.ALLOW, NOW, command=words[index % len(words)]))
        elif kind == 2:
            made.append(Rule("apply_patch", Decision.ALLOW, NOW, path=f"/w/p{index}/**"))
        else:
            made.append(Rule("WebFetch", Decision.ALLOW, NOW, domain=f"*.d{index}.example"))
    return [RuleRecord(index + 1, check_rule(rule)) for index, rule in enumerate(made)]


def variant(approval: Approval, run: int) -> Approval:
    """`approval` with a word of its own added to its command, so no run reads what another
    read (a host remembers the short commands it has read)."""
    command = approval.input.get("command")
    if approval.tool == "Bash" and isinstance(command, str):
        return approval.model_copy(update={"input": {"command": f"{command} v{run}"}})
    if isinstance(command, list):
        return approval.model_copy(update={"input": {"command": [*command, f"v{run}"]}})
    return approval


def timed(work: Callable[[Approval], object], approval: Approval, runs: int) -> tuple[float, float]:
    """Median and p90 of `work` on `runs` variants of `approval`, in microseconds."""
    for run in range(min(runs, 50)):
        work(variant(approval, -run))
    calls = [variant(approval, run) for run in range(runs)]
    times = []
    for call in calls:
        started = time.perf_counter()
        work(call)
        times.append((time.perf_counter() - started) * 1e6)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


async def version_read(runs: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as folder:
        async with open_store(str(Path(folder) / "uq.db")) as store:
            for _ in range(20):
                await store.rules_version()
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                await store.rules_version()
                times.append((time.perf_counter() - started) * 1e6)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rules", type=int, default=100)
    arguments = parser.parse_args()
    print(pace("before"), flush=True)
    kept = rules(arguments.rules)
    print(f"{'call':<26}{'decide p50':>12}{'p90':>9}{'read p50':>12}{'p90':>9}  (µs)")
    for name, approval in CALLS.items():
        decide = functools.partial(explain, kept, asked_by="agents", now=NOW)
        decided = timed(decide, approval, arguments.runs)
        read = timed(read_call, approval, arguments.runs)
        verdict = explain(kept, approval, "agents", NOW)
        print(
            f"{name:<26}{decided[0]:>12.0f}{decided[1]:>9.0f}{read[0]:>12.0f}{read[1]:>9.0f}"
            f"  {verdict.reason[:48]}",
            flush=True,
        )
    p50, p90 = anyio.run(version_read, arguments.runs)
    print(f"{'rules version (SQLite)':<26}{p50:>12.0f}{p90:>9.0f}", flush=True)
    print(pace("after"), flush=True)


if __name__ == "__main__":
    main()
