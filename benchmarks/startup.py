"""What starting `uq` costs: every script and every hook pays it on every call.

Run: `.venv/bin/python benchmarks/startup.py [--runs N] [--venv PATH]`. Each figure is the wall
time of a new process, spawned N times, the commands taking turns so that the machine's other
work falls on all of them alike; p50 and p90 are printed beside the target and p90/target.

- `python -c pass`: the interpreter's own start, the floor no command goes under (no target);
- `import user_questions`: `python -c "import user_questions"`, raw against the target of 150 ms,
  and net (minus the p50 of `python -c pass`) so the reader sees the package's own share;
- `uq --version`: against 100 ms;
- `uq hook claude`, an event it leaves alone: a `PreToolUse` of `Bash` on stdin, the hook's most
  frequent call (`benchmarks/hook_startup.py` measures it against the hook's own target too);
- `uq ask` to the prompt: in a real terminal (a pty, through pexpect), from spawn until the
  question's text is on the screen, against 250 ms; once with options only, once with a markdown
  detail (which loads the markdown renderer before the prompt is drawn).

`--venv` measures another checkout's virtualenv (its `bin/python` and `bin/uq`), to compare two
versions side by side in one sitting. Python's bytecode cache is on for the commands (an unset
`PYTHONDONTWRITEBYTECODE`) and one warm-up run of each fills it first: an installed package has
its `.pyc` files, so a cold compile is not what a user pays. The machine's other work shows in
the figures: read the ratios of two versions measured in the same sitting.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
from hook_startup import NO_OP
from host_roundtrip import percentile

QUESTION = "Which colour?"
ASK = ["ask", QUESTION, "-o", "Red", "-o", "Blue"]
DETAIL = "## Why\n\nThe **hall** is painted next week; see the [samples](https://example.com).\n"


def _process(command: list[str], stdin: str, env: dict[str, str]) -> float:
    """Milliseconds from spawn to exit of a command that must succeed."""
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{command} failed ({done.returncode}): {done.stderr}")
    return elapsed


def _prompt(command: list[str], env: dict[str, str]) -> float:
    """Milliseconds from spawn until the question is drawn in a pty; Ctrl-C then ends it."""
    started = time.perf_counter()
    child = pexpect.spawn(
        command[0], command[1:], env=env, dimensions=(30, 100), encoding="utf-8", timeout=30
    )
    try:
        child.expect_exact(QUESTION)
        elapsed = (time.perf_counter() - started) * 1000
        child.sendcontrol("c")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    if child.exitstatus != 130:
        raise SystemExit(f"{command} ended with {child.exitstatus}, not 130 for Ctrl-C")
    return elapsed


def _report(name: str, times: list[float], target: float | None) -> None:
    p50, p90 = statistics.median(times), percentile(times, 0.9)
    line = f"{name:<28} p50 {p50:6.1f} ms   p90 {p90:6.1f} ms"
    if target is not None:
        line += f"   (target <= {target:.0f} ms, p90/target {p90 / target:.2f})"
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--venv", type=Path, default=Path(sys.executable).parent.parent, help="default: this one"
    )
    arguments = parser.parse_args()
    python, uq = str(arguments.venv / "bin" / "python"), str(arguments.venv / "bin" / "uq")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("UQ_") and key != "PYTHONDONTWRITEBYTECODE"
    }
    env["TERM"] = "xterm-256color"
    hook_event = json.dumps(NO_OP)
    measured: dict[str, tuple[Callable[[], float], float | None]] = {
        "python -c pass": (lambda: _process([python, "-c", "pass"], "", env), None),
        "import user_questions (raw)": (
            lambda: _process([python, "-c", "import user_questions"], "", env),
            150.0,
        ),
        "uq --version": (lambda: _process([uq, "--version"], "", env), 100.0),
        "uq hook claude (no-op)": (lambda: _process([uq, "hook", "claude"], hook_event, env), None),
        "uq ask, prompt drawn": (lambda: _prompt([uq, *ASK], env), 250.0),
        "uq ask --detail, prompt drawn": (
            lambda: _prompt([uq, *ASK, "--detail", DETAIL], env),
            250.0,
        ),
    }
    print(f"{uq}: {arguments.runs} runs of each, after one warm-up", flush=True)
    times: dict[str, list[float]] = {name: [] for name in measured}
    for run in range(arguments.runs + 1):
        for name, (measure, _) in measured.items():
            elapsed = measure()
            if run:  # the first run fills the bytecode cache
                times[name].append(elapsed)
    for name, (_, target) in measured.items():
        _report(name, times[name], target)
    floor = statistics.median(times["python -c pass"])
    net = [elapsed - floor for elapsed in times["import user_questions (raw)"]]
    _report("import user_questions (net)", net, None)


if __name__ == "__main__":
    main()
