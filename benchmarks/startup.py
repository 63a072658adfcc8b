"""What starting `uq` costs: every script and every hook pays it on every call.

Run: `.venv/bin/python benchmarks/startup.py [--runs N] [--venv PATH ...]`. Each figure is the wall
time of a new process, spawned N times, the commands taking turns so that the machine's other
work falls on all of them alike; min, p50 and p90 are printed beside the target and p90/target
(the min is the nearest to what a quiet machine would show).

- `python -c pass`: the interpreter's own start, the floor no command goes under (no target);
- `import user_questions`: `python -c "import user_questions"`, raw against the target of 150 ms,
  and net (minus the p50 of `python -c pass`) so the reader sees the package's own share; the
  root loads its names on first use, so a program that uses the library pays more: `import the
  core surface` (`from user_questions import AskUserQuestionItem, Context, UserQuestionService`)
  is shown against the same 150 ms;
- `uq --version`: against 100 ms;
- `uq hook claude`, an event it leaves alone: a `PreToolUse` of `Bash` on stdin, the hook's most
  frequent call, against the hook's target of 150 ms (`benchmarks/hook_startup.py`);
- `uq ask` to the prompt: in a real terminal (a pty, through pexpect), from spawn until the
  question's text is on the screen, against 250 ms; once with options only, once with a markdown
  detail (which loads the markdown renderer before the prompt is drawn); beside them, what
  importing prompt_toolkit and pydantic and validating one model costs: `uq ask` validates with
  the one and draws with the other, so it cannot go under that (no target).

`--venv` measures another checkout's virtualenv (its `bin/python` and `bin/uq`); given twice, the
two take turns and the ratios of their p50s are printed, to compare two versions in one sitting.
Python's bytecode cache is on for the commands (an unset `PYTHONDONTWRITEBYTECODE`) and one
warm-up run of each fills it first: an installed package has its `.pyc` files, so a cold compile
is not what a user pays. The machine's other work shows in the figures: read the ratios of two
versions measured in the same sitting.
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
from hook_startup import NO_OP, TARGET_MS
from host_roundtrip import percentile
from machine import pace

CORE = "from user_questions import AskUserQuestionItem, Context, UserQuestionService"
LIBRARIES = """
import prompt_toolkit
from pydantic import BaseModel
class Question(BaseModel):
    question: str
Question(question="Which colour?")
"""
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
    line = f"{name:<30} min {min(times):6.1f} ms   p50 {p50:6.1f} ms   p90 {p90:6.1f} ms"
    if target is not None:
        line += f"   (target <= {target:.0f} ms, p90/target {p90 / target:.2f})"
    print(line, flush=True)


Measured = dict[str, tuple[Callable[[], float], float | None]]
"""Each measurement by name: how to take it once (milliseconds), and its target."""


def _commands(venv: Path, env: dict[str, str]) -> Measured:
    """The measurements of one virtualenv's `uq`."""
    python, uq = str(venv / "bin" / "python"), str(venv / "bin" / "uq")
    hook_event = json.dumps(NO_OP)
    return {
        "python -c pass": (lambda: _process([python, "-c", "pass"], "", env), None),
        "import user_questions (raw)": (
            lambda: _process([python, "-c", "import user_questions"], "", env),
            150.0,
        ),
        "import the core surface": (lambda: _process([python, "-c", CORE], "", env), 150.0),
        "uq --version": (lambda: _process([uq, "--version"], "", env), 100.0),
        "uq hook claude (no-op)": (
            lambda: _process([uq, "hook", "claude"], hook_event, env),
            TARGET_MS,
        ),
        "pydantic and prompt_toolkit": (lambda: _process([python, "-c", LIBRARIES], "", env), None),
        "uq ask, prompt drawn": (lambda: _prompt([uq, *ASK], env), 250.0),
        "uq ask --detail, prompt drawn": (
            lambda: _prompt([uq, *ASK, "--detail", DETAIL], env),
            250.0,
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--venv",
        type=Path,
        action="append",
        help="a virtualenv to measure (repeat to compare; default: this one)",
    )
    arguments = parser.parse_args()
    venvs: list[Path] = arguments.venv or [Path(sys.executable).parent.parent]
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("UQ_") and key != "PYTHONDONTWRITEBYTECODE"
    }
    env["TERM"] = "xterm-256color"
    measured = [_commands(venv, env) for venv in venvs]
    times = [{name: list[float]() for name in commands} for commands in measured]
    print(pace("before"), flush=True)
    print(f"{arguments.runs} runs of each, after one warm-up, taking turns", flush=True)
    for run in range(arguments.runs + 1):
        for commands, found in zip(measured, times, strict=True):
            for name, (measure, _) in commands.items():
                elapsed = measure()
                if run:  # the first run fills the bytecode cache
                    found[name].append(elapsed)
    for venv, commands, found in zip(venvs, measured, times, strict=True):
        print(f"\n{venv / 'bin' / 'uq'}")
        for name, (_, target) in commands.items():
            _report(name, found[name], target)
        floor = statistics.median(found["python -c pass"])
        net = [elapsed - floor for elapsed in found["import user_questions (raw)"]]
        _report("import user_questions (net)", net, None)
    if len(venvs) == 2:
        print(f"\np50 of {venvs[1]} / p50 of {venvs[0]}")
        for name in measured[0]:
            ratio = statistics.median(times[1][name]) / statistics.median(times[0][name])
            print(f"{name:<30} {ratio:5.2f}")
    print(pace("after"))


if __name__ == "__main__":
    main()
