"""`uq hook` run as the CLIs run it, where it must leave the prompt to the CLI: printing nothing,
exiting 0 (never 2, which the CLIs read as a denial), and saying why on stderr.

The answered paths, with a browser, are in tests/e2e/web/test_web_hooks.py.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.host_process import HostProcess

UQ = str(Path(sys.executable).with_name("uq"))
FIXTURES = Path(__file__).resolve().parents[1] / "bridges" / "fixtures"
DOWN = "http://127.0.0.1:9/?token=t"  # nothing listens on the discard port


def fixture_text(client: str, name: str) -> str:
    document = json.loads((FIXTURES / client / f"{name}.json").read_text(encoding="utf-8"))
    return json.dumps(document["event"])


def hook(
    client: str, event: str, *args: str, url: str | None = DOWN
) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    if url is not None:
        environ["UQ_URL"] = url
    return subprocess.run(
        [UQ, "hook", client, *args],
        input=event,
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
        start_new_session=True,  # no controlling terminal, as under the CLI
    )


@pytest.mark.parametrize(
    ("client", "event"),
    [
        ("claude", fixture_text("claude_code", "pre_tool_use_bash")),
        ("claude", '{"hook_event_name": "Stop", "session_id": "s"}'),
        ("codex", '{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}}'),
        ("claude", "this is not JSON"),
    ],
)
def test_an_event_the_hook_does_not_answer_ends_with_no_output(client: str, event: str) -> None:
    ended = hook(client, event, url=None)
    assert (ended.returncode, ended.stdout, ended.stderr) == (0, "", "")


@pytest.mark.parametrize(
    ("client", "fixture", "name"),
    [
        ("claude", "permission_request_bash", "Claude Code"),
        ("codex", "permission_request_bash", "Codex"),
        ("codex", "pre_tool_use_bash", "Codex"),
    ],
)
def test_with_the_host_down_the_hook_prints_nothing_so_the_cli_asks(
    client: str, fixture: str, name: str
) -> None:
    folder = "claude_code" if client == "claude" else "codex"
    ended = hook(client, fixture_text(folder, fixture))
    assert (ended.returncode, ended.stdout) == (0, "")
    assert ended.stderr.startswith("uq hook: the host at http://127.0.0.1:9/ did not answer")
    assert ended.stderr.endswith(f"; {name} asks in its own terminal\n")


def test_a_host_that_never_answers_is_left_after_the_connect_timeout() -> None:
    with socket.socket() as silent:  # accepts connections and never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/?token=t"
        event = fixture_text("claude_code", "pre_tool_use_ask_user_question")
        ended = hook("claude", event, "--connect-timeout", "0.5", url=url)
    assert (ended.returncode, ended.stdout) == (0, "")
    assert "did not answer" in ended.stderr


def test_a_refused_token_prints_nothing(host: HostProcess) -> None:
    url = f"{host.base}/?token=not-the-token"
    ended = hook("codex", fixture_text("codex", "permission_request_bash"), url=url)
    assert (ended.returncode, ended.stdout) == (0, "")
    assert "refused the token (HTTP 401)" in ended.stderr
    assert host.pending() == []


def test_without_a_host_url_it_says_how_to_give_one() -> None:
    ended = hook("claude", fixture_text("claude_code", "permission_request_edit"), url=None)
    assert (ended.returncode, ended.stdout) == (0, "")
    assert ended.stderr == (
        "uq hook: no host to ask through: set UQ_URL to the URL `uq serve` printed, or pass "
        "--url; Claude Code asks in its own terminal\n"
    )


def test_a_plan_event_without_a_plan_is_left_to_claude_code() -> None:
    event = json.loads(fixture_text("claude_code", "pre_tool_use_exit_plan_mode"))
    event["tool_input"] = {}
    ended = hook("claude", json.dumps(event))
    assert (ended.returncode, ended.stdout) == (0, "")
    assert 'missing required property "plan"' in ended.stderr


def test_a_mistyped_option_fails_with_1_never_with_the_2_that_denies() -> None:
    ended = hook("codex", fixture_text("codex", "permission_request_bash"), "--urll", "x")
    assert (ended.returncode, ended.stdout) == (1, "")
    assert "--urll" in ended.stderr
