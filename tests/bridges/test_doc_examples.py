"""The bridge examples in docs/examples run and print what their docstrings promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


@pytest.mark.parametrize(
    ("name", "first_line"),
    [
        ("mcp_elicitation.py", '{"answers":[{"id":"env","selected":["staging"]}]}'),
        ("claude_can_use_tool.py", '{"Which format?":"Summary","Which sections?":"Intro, Outro"}'),
        ("acp_agent_asks.py", '{"answers":[{"id":"env","selected":["staging"]}]}'),
        ("acp_client_answers.py", '{"optionId":"allow","outcome":"selected"}'),
        (
            "acp_form.py",
            '{"answers":[{"id":"db","selected":[],"custom":"SQLite"},'
            '{"id":"name","selected":[],"custom":"shop"}]}',
        ),
    ],
)
def test_the_bridge_example_prints_what_it_promises(name: str, first_line: str) -> None:
    source = (EXAMPLES / name).read_text(encoding="utf-8")
    assert first_line in source.replace("\n", ""), "the docstring states the output"
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == first_line
