"""`uq hook claude|codex` looks at its event before anything heavy is loaded."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from user_questions._hooks.events import MAX_EVENT_BYTES
from user_questions.cli import _hook_stdin
from user_questions.cli._hook_stdin import event_text, hook_run_client


@pytest.mark.parametrize(
    ("argv", "client"),
    [
        (["hook", "claude"], "claude"),
        (["hook", "codex", "--timeout", "50"], "codex"),
        (["hook", "claude", "--help"], None),
        (["hook", "install", "claude"], None),
        (["hook"], None),
        (["mcp", "claude"], None),
        ([], None),
    ],
)
def test_only_a_hook_run_is_looked_at_before_the_command_line(
    argv: list[str], client: str | None
) -> None:
    assert hook_run_client(argv) == client


def test_an_event_too_large_to_read_is_no_event(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = io.BytesIO(b"x" * (MAX_EVENT_BYTES + 1))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(raw))
    event_text.cache_clear()
    try:
        assert event_text() == ""
    finally:
        event_text.cache_clear()


def test_an_event_the_hook_leaves_loads_neither_pydantic_nor_the_command_line() -> None:
    code = (
        "import json, sys; sys.argv = ['uq', 'hook', 'claude'];"
        "from user_questions.cli import main; main();"
        "print(json.dumps(sorted(sys.modules)))"
    )
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps(event),
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    )
    heavy = ("pydantic", "cyclopts", "anyio", "websockets", "user_questions.types")
    assert [name for name in loaded if name.startswith(heavy)] == []
    assert _hook_stdin.__name__ in loaded
