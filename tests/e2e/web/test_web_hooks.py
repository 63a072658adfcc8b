"""`uq hook claude` and `uq hook codex` run as the CLIs run them, answered in Chromium.

Each test starts the hook the way Claude Code or Codex does (the event as JSON on stdin, no
terminal, the CLI's environment variables), answers the card on a real `uq serve` host's page,
and asserts the JSON the hook prints, validated against the CLI's output schema.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from playwright.sync_api import expect

from tests.e2e.web.conftest import Host, OpenInbox

UQ = str(Path(sys.executable).with_name("uq"))
FIXTURES = Path(__file__).resolve().parents[2] / "bridges" / "fixtures"
HOOK_SECONDS = 30.0
CLAUDE_SCHEMA = json.loads(
    (FIXTURES / "claude_code" / "hook-output.schema.json").read_text(encoding="utf-8")
)
CODEX_SCHEMA = json.loads(
    (FIXTURES / "codex" / "permission-request.command.output.schema.json").read_text(
        encoding="utf-8"
    )
)


def fixture_event(client: str, name: str) -> dict[str, Any]:
    document = json.loads((FIXTURES / client / f"{name}.json").read_text(encoding="utf-8"))
    event: dict[str, Any] = document["event"]
    event["session_id"] = secrets.token_hex(8)  # one card per test on the shared host
    return event


@dataclass
class HookRun:
    """One run of `uq hook <client>`, started as the CLI starts it."""

    client: str
    event: dict[str, Any]
    process: subprocess.Popen[str]

    @property
    def session(self) -> str:
        prefix = "claude-code" if self.client == "claude" else "codex"
        return f"{prefix}:{self.event['session_id']}"

    def finish(self) -> tuple[dict[str, Any] | None, str]:
        """Wait for the hook to exit 0; what it printed (parsed and validated), and stderr."""
        self.process.wait(timeout=HOOK_SECONDS)  # its output is far below a pipe's buffer
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        out, err = self.process.stdout.read(), self.process.stderr.read()
        assert self.process.returncode == 0, err
        if not out.strip():
            return None, err
        output: dict[str, Any] = json.loads(out)
        jsonschema.validate(output, CLAUDE_SCHEMA if self.client == "claude" else CODEX_SCHEMA)
        return output, err


@pytest.fixture
def run_hook(host: Host, tmp_path: Path) -> Iterator[Any]:
    """Start `uq hook <client>` with an event; every hook still running at the end is killed."""
    runs: list[HookRun] = []

    def start(client: str, event: dict[str, Any], *args: str) -> HookRun:
        project = tmp_path / "project"
        project.mkdir(exist_ok=True)
        event["cwd"] = str(project)
        environ = {**os.environ, "UQ_URL": host.asker_url}  # an agent's: it can ask, never answer
        environ.pop("UQ_TOKEN", None)
        if client == "claude":  # what Claude Code sets for a command hook (2.1.332)
            environ |= {
                "CLAUDECODE": "1",
                "CLAUDE_PROJECT_DIR": str(project),
                "CLAUDE_CODE_SESSION_ID": event["session_id"],
            }
        process = subprocess.Popen(
            [UQ, "hook", client, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=project,
            env=environ,
            start_new_session=True,  # no controlling terminal, as under the CLI
        )
        assert process.stdin is not None
        process.stdin.write(json.dumps(event))
        process.stdin.close()
        run = HookRun(client, event, process)
        runs.append(run)
        return run

    yield start
    for run in runs:
        with run.process:  # closes its pipes
            if run.process.poll() is None:
                run.process.kill()


def test_claudes_questions_are_answered_in_the_page_and_reach_it_as_updated_input(
    open_inbox: OpenInbox, run_hook: Any
) -> None:
    inbox = open_inbox()
    hook = run_hook("claude", fixture_event("claude_code", "pre_tool_use_ask_user_question"))
    card = inbox.card(hook.session)
    project = hook.event["cwd"]
    expect(card.locator(".origin")).to_have_text(f"claude-code · {project}")
    expect(card.locator(".chip")).to_have_text("Database")
    card.locator(".option", has_text="PostgreSQL").click()
    card.get_by_role("button", name="Next").click()
    card.get_by_role("checkbox", name="Search").check()
    card.get_by_role("checkbox", name="Billing").check()
    card.get_by_role("button", name="Submit").click()
    output, _ = hook.finish()
    assert output is not None
    specific = output["hookSpecificOutput"]
    assert specific["permissionDecision"] == "allow"
    assert specific["updatedInput"]["answers"] == {
        "Which database should the shop use?": "PostgreSQL (Recommended)",
        "Which features do you want to enable?": "Search, Billing",
    }
    assert specific["updatedInput"]["questions"] == hook.event["tool_input"]["questions"]


def test_a_permission_denied_with_a_reason_tells_claude_the_reason(
    open_inbox: OpenInbox, run_hook: Any
) -> None:
    inbox = open_inbox()
    hook = run_hook("claude", fixture_event("claude_code", "permission_request_bash"))
    card = inbox.card(hook.session)
    expect(card.locator(".detail code")).to_have_text("npm test -- --watch=false\n")
    card.get_by_role("textbox", name="Other: your own answer").fill("run only the unit tests")
    card.get_by_role("button", name="Submit").click()
    output, _ = hook.finish()
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "deny",
                "message": "The user denied this Bash call and said: run only the unit tests",
            },
        }
    }


def test_dont_ask_again_gives_claude_its_own_suggested_rules(
    open_inbox: OpenInbox, run_hook: Any
) -> None:
    inbox = open_inbox()
    event = fixture_event("claude_code", "permission_request_bash")
    hook = run_hook("claude", event)
    card = inbox.card(hook.session)
    expect(card.locator(".option", has_text="Allow and don't ask again")).to_contain_text(
        "Also allow Bash(npm test:*) without asking"
    )
    card.locator(".option", has_text="Allow and don't ask again").click()
    card.get_by_role("button", name="Submit").click()
    output, _ = hook.finish()
    assert output is not None
    assert output["hookSpecificOutput"]["decision"] == {
        "behavior": "allow",
        "updatedPermissions": event["permission_suggestions"],
    }


def test_a_dismissed_permission_prompt_denies_and_interrupts_claude(
    open_inbox: OpenInbox, run_hook: Any
) -> None:
    inbox = open_inbox()
    hook = run_hook("claude", fixture_event("claude_code", "permission_request_mcp"))
    card = inbox.card(hook.session)
    expect(card.locator(".chip")).to_have_text("create_issue (github)")
    card.get_by_role("button", name="Dismiss").click()
    output, _ = hook.finish()
    assert output is not None
    decision = output["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny"
    assert decision["interrupt"] is True


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("approve", {"permissionDecision": "allow"}),
        ("feedback", {"permissionDecision": "deny"}),
        ("chat", {"permissionDecision": "deny", "continue": False}),
    ],
)
def test_a_plan_is_approved_sent_back_or_talked_over_from_the_page(
    open_inbox: OpenInbox, run_hook: Any, action: str, expected: dict[str, Any]
) -> None:
    inbox = open_inbox()
    event = fixture_event("claude_code", "pre_tool_use_exit_plan_mode")
    hook = run_hook("claude", event)
    card = inbox.card(hook.session)
    expect(card.locator(".plan h1")).to_have_text("Add a cache")
    if action == "approve":
        card.get_by_role("button", name="Approve").click()
    elif action == "feedback":
        card.get_by_role("textbox", name="Feedback").fill("Cache reads only.")
        card.get_by_role("button", name="Keep planning, with feedback").click()
    else:
        card.get_by_role("button", name="Chat about it").click()
    output, _ = hook.finish()
    assert output is not None
    specific = output["hookSpecificOutput"]
    assert specific["permissionDecision"] == expected["permissionDecision"]
    assert output.get("continue", True) is expected.get("continue", True)
    if action == "approve":
        assert specific["updatedInput"] == event["tool_input"]
    if action == "feedback":
        assert "said: Cache reads only." in specific["permissionDecisionReason"]


def test_a_codex_approval_is_allowed_from_the_page(open_inbox: OpenInbox, run_hook: Any) -> None:
    inbox = open_inbox()
    hook = run_hook("codex", fixture_event("codex", "permission_request_bash"))
    card = inbox.card(hook.session)
    expect(card.locator(".detail code")).to_have_text("rm -rf dist && npm run build\n")
    card.locator(".option", has_text="Allow").first.click()
    card.get_by_role("button", name="Submit").click()
    output, _ = hook.finish()
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_stopping_a_waiting_hook_withdraws_its_card_from_the_page(
    open_inbox: OpenInbox, run_hook: Any, host: Host, stop: signal.Signals
) -> None:
    inbox = open_inbox()
    hook = run_hook("claude", fixture_event("claude_code", "permission_request_bash"))
    card = inbox.card(hook.session)
    expect(card).to_have_count(1)
    hook.process.send_signal(stop)
    output, err = hook.finish()
    assert output is None
    assert f"stopped by {stop.name}; the question was withdrawn" in err
    expect(card).to_have_count(0)
    assert [f for f in host.pending() if f["payload"]["sessionId"] == hook.session] == []


def test_a_hook_that_runs_out_of_time_withdraws_its_card_and_says_nothing(
    open_inbox: OpenInbox, run_hook: Any
) -> None:
    inbox = open_inbox()
    # --timeout counts from the hook's start (its imports included): long enough to see the card.
    hook = run_hook("codex", fixture_event("codex", "permission_request_network"), "--timeout", "5")
    card = inbox.card(hook.session)
    expect(card).to_have_count(1)
    output, err = hook.finish()
    assert output is None
    assert "timed out" in err
    expect(card).to_have_count(0)
