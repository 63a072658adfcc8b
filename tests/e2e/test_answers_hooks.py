"""The real `uq hook claude` and `uq hook codex` against a real `uq serve`, answered with more than
a label: a call allowed with changes reaches Claude Code as `updatedInput`, a note beside a denial
is in the `message` the model reads; the host refuses an edit that breaks the rules (with Deny, of
a Codex approval prompt, which is not editable) with `bad-response`, the hook still waiting;
history keeps the call as asked and as changed. Codex's `PreToolUse` takes a changed call as
`updatedInput` with `allow`, and a note as `additionalContext`; Claude Code's model reads a note
beside an allowed call in the `additionalContext` of that call's `PostToolUse`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import start_hook
from tests.e2e.host_process import HostProcess, answer_body
from tests.e2e.test_uq_hook import UQ, fixture_text, hook

CHANGED = {"command": "npm test -- --runInBand", "description": "Run the tests one by one"}


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hooks' `$XDG_STATE_HOME` (where `uq hook claude` keeps a note for the call's
    `PostToolUse`) in the test's own folder, never the real home."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def respond(host: HostProcess, card: dict[str, Any], **item: Any) -> dict[str, Any]:
    rpc_id, session = card["rpcId"], card["payload"]["sessionId"]
    return host.respond(answer_body(rpc_id, session, {"id": "approval", **item}))


def output(hook: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = hook.communicate(timeout=30)
    assert (hook.returncode, err) == (0, "")
    printed: dict[str, Any] = json.loads(out)
    return printed


def run_hook(client: str, event: str) -> tuple[str, str]:
    """What the real `uq hook CLIENT` prints for `event` that asks nothing: stdout, stderr."""
    ended = hook(client, event, url=None)
    assert ended.returncode == 0
    return ended.stdout, ended.stderr


def hook_asking(
    host: HostProcess,
    hooks: list[subprocess.Popen[str]],
    folder: Path,
    client: str,
    fixture: str = "permission_request_bash",
) -> tuple[subprocess.Popen[str], dict[str, Any], str]:
    """The real `uq hook CLIENT` asking about the fixture's Bash call: the process, its card as
    the host lists it, and the event."""
    event = fixture_text("claude_code" if client == "claude" else "codex", fixture)
    asking = start_hook([UQ, "hook", client, "--url", host.asker_url], event, folder)
    hooks.append(asking)
    (card,) = host.wait_pending(1)
    return asking, card, event


def test_claude_code_gets_the_call_as_the_person_changed_it(
    host: HostProcess, hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    asking, card, event = hook_asking(host, hooks, tmp_path, "claude")
    original = json.loads(event)["tool_input"]
    assert card["approval"]["input"] == original
    assert card["approval"]["editable"] is True

    refused = respond(host, card, selected=["Deny"], edited=CHANGED)
    assert refused["accepted"] is False
    assert refused["reason"] == "bad-response"
    assert "edited goes with" in refused["message"]
    assert asking.poll() is None
    assert [frame["rpcId"] for frame in host.pending()] == [card["rpcId"]]

    assert respond(host, card, selected=["Allow"], edited=CHANGED) == {"accepted": True}
    printed = output(asking)
    assert printed["hookSpecificOutput"] == {
        "hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow", "updatedInput": CHANGED},
    }
    history = httpx.get(f"{host.base}/api/history", headers=host.auth, timeout=10).json()
    (entry,) = history["items"]
    assert entry["approval"]["input"] == original
    assert entry["answer"]["answers"][0]["edited"] == CHANGED
    assert "remember" not in entry  # no rule is offered from an edited call


def test_claude_code_reads_a_note_beside_a_denial_in_the_message(
    host: HostProcess, hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    asking, card, _ = hook_asking(host, hooks, tmp_path, "claude")
    too_long = respond(host, card, selected=["Deny"], note="x" * 4001)
    assert too_long["accepted"] is False
    assert "note is 4001 characters long" in too_long["message"]
    assert respond(host, card, selected=["Deny"], note="not while CI is red") == {"accepted": True}
    assert output(asking)["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "The user denied this Bash call and said: not while CI is red",
    }


def test_a_codex_call_cannot_be_changed_and_a_note_reaches_codex(
    host: HostProcess, hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    asking, card, _ = hook_asking(host, hooks, tmp_path, "codex")
    assert "editable" not in card["approval"]
    refused = respond(host, card, selected=["Allow"], edited={"command": "make"})
    assert refused["accepted"] is False
    assert "cannot be edited" in refused["message"]
    assert asking.poll() is None
    assert respond(host, card, selected=["Deny"], note="use make clean") == {"accepted": True}
    assert output(asking)["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "The user denied this Bash call and said: use make clean",
    }


def test_codex_pre_tool_use_gets_the_call_as_the_person_changed_it_and_the_note(
    host: HostProcess, hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    asking, card, _ = hook_asking(host, hooks, tmp_path, "codex", "pre_tool_use_bash")
    assert card["approval"]["editable"] is True
    changed = {"command": "rm -rf build/tmp"}
    refused = respond(host, card, selected=["Deny"], edited=changed)
    assert refused["accepted"] is False
    assert asking.poll() is None
    answered = respond(host, card, selected=["Allow"], edited=changed, note="only the tmp part")
    assert answered == {"accepted": True}
    assert output(asking)["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": changed,
        "additionalContext": "The user changed this Bash call before allowing it. "
        "The user allowed this Bash call and noted: only the tmp part",
    }


def test_codex_pre_tool_use_allowed_unchanged_prints_nothing(
    host: HostProcess, hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    asking, card, _ = hook_asking(host, hooks, tmp_path, "codex", "pre_tool_use_bash")
    assert respond(host, card, selected=["Allow"]) == {"accepted": True}
    assert asking.communicate(timeout=30) == ("", "")
    assert asking.returncode == 0


def test_a_note_beside_an_allowed_claude_code_call_reaches_the_model_once_it_has_run(
    host: HostProcess,
    hooks: list[subprocess.Popen[str]],
    tmp_path: Path,
) -> None:
    asking, card, event = hook_asking(host, hooks, tmp_path, "claude")
    answered = respond(host, card, selected=["Allow"], edited=CHANGED, note="CI is slow today")
    assert answered == {"accepted": True}
    printed = output(asking)
    note = (
        "The user changed this Bash call before allowing it. "
        "The user allowed this Bash call and noted: CI is slow today"
    )
    assert printed["systemMessage"] == note  # the person sees it in Claude Code's terminal
    ran = {**json.loads(event), "hook_event_name": "PostToolUse", "tool_input": CHANGED}
    ran["tool_response"] = {"stdout": "ok", "stderr": "", "interrupted": False}
    other = {**ran, "tool_input": {"command": "ls"}}
    assert run_hook("claude", json.dumps(other)) == ("", "")  # a call with no note
    given = json.loads(run_hook("claude", json.dumps(ran))[0])
    assert given == {
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": note}
    }
    assert run_hook("claude", json.dumps(ran)) == ("", "")  # given once
