"""`uq hook claude|codex` run from a settings file's plain options without the command line
library; anything else read by the full command line, as before."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from user_questions.cli._hook_options import HookOptions, fast_options


@pytest.mark.parametrize(
    ("argv", "options"),
    [
        (["hook", "codex"], HookOptions("env-url", "env-token", None, None)),
        (
            ["hook", "claude", "--timeout", "1790", "--url", "http://h/?token=t"],
            HookOptions("http://h/?token=t", "env-token", None, 1790.0),
        ),
        (
            ["hook", "codex", "--url=u", "--token=t", "--ca=/ca.pem", "--connect-timeout=0.5"],
            HookOptions("u", "t", "/ca.pem", None, 0.5),
        ),
    ],
)
def test_plain_options_are_read_without_the_command_line(
    argv: list[str], options: HookOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UQ_URL", "env-url")
    monkeypatch.setenv("UQ_TOKEN", "env-token")
    assert fast_options(argv) == options


@pytest.mark.parametrize(
    "argv",
    [
        ["hook", "claude", "--urll", "u"],  # mistyped: the command line says so
        ["hook", "claude", "--url"],  # no value
        ["hook", "claude", "--url", "a", "--url", "b"],  # twice
        ["hook", "claude", "--timeout", "soon"],
        ["hook", "claude", "--timeout", "nan"],
        ["hook", "claude", "--url", "--token"],
        ["hook", "claude", "extra"],
    ],
)
def test_anything_else_is_left_to_the_command_line(argv: list[str]) -> None:
    assert fast_options(argv) is None


def run_hook(*options: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import json, sys; sys.argv = ['uq', 'hook', 'codex', *json.loads(sys.argv[1])];"
        "from user_questions.cli import main\n"
        "try:\n    main()\nfinally:\n"
        "    print(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    event = {
        "session_id": "s",
        "cwd": "/tmp",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test"},
    }
    return subprocess.run(
        [sys.executable, "-c", code, json.dumps(list(options))],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_answered_event_is_asked_without_loading_the_command_line_or_the_other_bridge() -> None:
    ran = run_hook("--url", "http://127.0.0.1:1/?token=t", "--connect-timeout", "0.5")
    assert (ran.returncode, ran.stdout) == (0, "")  # no host: nothing allowed, the CLI asks
    said, _, modules = ran.stderr.rpartition("\n[")
    assert "did not answer" in said
    loaded = json.loads("[" + modules)
    assert "user_questions.bridges.codex" in loaded
    assert [name for name in loaded if name.startswith("cyclopts")] == []
    assert "user_questions.bridges.claude_code" not in loaded


def test_a_mistyped_option_is_still_refused_by_the_command_line_without_deciding() -> None:
    ran = run_hook("--urll", "http://127.0.0.1:1/")
    assert (ran.returncode, ran.stdout) == (1, "")  # not 2, which would deny the call
    assert "--urll" in ran.stderr
