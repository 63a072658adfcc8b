"""The recorded examples in docs/terminal.md are what `uq ask` really shows, and its code runs.

Blocks in the docs are marked `<!-- command: NAME -->` (a command line), `<!-- recorded: NAME -->`
(a screen or transcript) and `<!-- file: NAME -->` (a file the command reads).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.e2e.pty_terminal import ENTER, UQ, PtyTerminal

DOCS = Path(__file__).resolve().parents[2] / "docs" / "terminal.md"
_BLOCK = re.compile(r"<!-- (?:recorded|file|command): (\S+) -->\n```\w*\n(.*?)```", re.S)
BLOCKS: dict[str, str] = dict(_BLOCK.findall(DOCS.read_text(encoding="utf-8")))


def _arguments(command: str) -> list[str]:
    """A documented `uq ...` command line (after any `$ ... |`) as arguments for the real `uq`."""
    words = shlex.split(command.replace("\\\n", " ").removeprefix("$ ").rpartition("| ")[2])
    assert words[0] == "uq"
    return [UQ, *words[1:]]


def _split_transcript(name: str) -> tuple[str, str]:
    """A recorded transcript: its `$ ...` command (with continuation lines) and what followed."""
    lines = BLOCKS[name].splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if not line.rstrip("\n").endswith("\\")) + 1
    return "".join(lines[:end]), "".join(lines[end:])


def _screen(name: str) -> str:
    return BLOCKS[name].rstrip("\n")


def test_the_deploy_example_shows_and_answers_as_recorded() -> None:
    terminal = PtyTerminal(_arguments(BLOCKS["deploy"]))
    try:
        assert terminal.wait_for("esc dismiss") == _screen("deploy-prompt")
        terminal.send(ENTER)
        assert terminal.wait_exit() == 0
        assert terminal.display == _screen("deploy-answered")
    finally:
        terminal.close()


def test_the_narrow_terminal_example_wraps_as_recorded() -> None:
    terminal = PtyTerminal(_arguments(BLOCKS["narrow"]), columns=60)
    try:
        assert terminal.wait_for("esc dismiss") == _screen("narrow-prompt")
    finally:
        terminal.close()


def test_the_multi_select_example_is_as_recorded() -> None:
    options = ["-o", "Lint", "-o", "Unit tests", "-o", "Browser tests"]
    descriptions = ["--option-description", ""] * 2
    descriptions += ["--option-description", "Slow: about 4 minutes."]
    terminal = PtyTerminal(
        [UQ, "ask", "Which checks should run?", "--multi", *options, *descriptions]
    )
    try:
        terminal.wait_for("esc dismiss")
        terminal.send("1")
        terminal.wait_for("[x] 1. Lint")
        terminal.send("3")
        assert terminal.wait_for("[x] 3. Browser tests") == _screen("checks-prompt")
    finally:
        terminal.close()


def test_the_plan_review_example_is_as_recorded(tmp_path: Path) -> None:
    (tmp_path / "plan.md").write_text(BLOCKS["plan.md"], encoding="utf-8")
    terminal = PtyTerminal(_arguments(BLOCKS["plan"]), cwd=tmp_path)
    try:
        assert terminal.wait_for("esc dismiss") == _screen("plan-prompt")
    finally:
        terminal.close()


def test_the_line_dialogue_example_is_as_recorded() -> None:
    command, transcript = _split_transcript("line-dialogue")
    assert command.startswith("$ printf '2\\n' | uq ask")
    result = subprocess.run(
        _arguments(command), input="2\n", capture_output=True, text=True, timeout=30, check=True
    )
    assert result.stderr + result.stdout == transcript


def test_the_python_example_runs() -> None:
    (code,) = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    result = subprocess.run(
        [sys.executable, "-c", code],
        input="1\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert result.stdout == '{"answers":[{"id":"pkg","selected":["pnpm (Recommended)"]}]}\n'
