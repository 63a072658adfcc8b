"""Which agent CLI hook events `uq hook` answers, and who asks from where."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from user_questions._hooks.events import HookOrigin, answers, hook_origin, parse_event

if TYPE_CHECKING:  # a name for mypy only
    from user_questions._hooks.events import Client


@pytest.mark.parametrize(
    ("client", "event", "answered"),
    [
        ("claude", {"hook_event_name": "PreToolUse", "tool_name": "AskUserQuestion"}, True),
        ("claude", {"hook_event_name": "PreToolUse", "tool_name": "ExitPlanMode"}, True),
        ("claude", {"hook_event_name": "PreToolUse", "tool_name": "Bash"}, False),
        ("claude", {"hook_event_name": "PermissionRequest", "tool_name": "Bash"}, True),
        ("claude", {"hook_event_name": "PermissionRequest", "tool_name": "mcp__gh__x"}, True),
        ("claude", {"hook_event_name": "PermissionRequest", "tool_name": "AskUserQuestion"}, False),
        ("claude", {"hook_event_name": "PostToolUse", "tool_name": "Bash"}, False),
        ("claude", {"hook_event_name": "PermissionRequest"}, False),
        ("codex", {"hook_event_name": "PermissionRequest", "tool_name": "Bash"}, True),
        ("codex", {"hook_event_name": "PermissionRequest", "tool_name": "apply_patch"}, True),
        ("codex", {"hook_event_name": "PreToolUse", "tool_name": "Bash"}, True),
        ("codex", {"hook_event_name": "PostToolUse", "tool_name": "Bash"}, False),
        ("codex", {"hook_event_name": "PermissionRequest", "tool_name": ""}, False),
    ],
)
def test_only_prompts_a_person_would_see_are_answered(
    client: Client, event: dict[str, Any], answered: bool
) -> None:
    assert answers(client, event) is answered


def test_an_event_is_a_json_object_or_nothing() -> None:
    assert parse_event('{"hook_event_name": "Stop"}') == {"hook_event_name": "Stop"}
    assert parse_event("[1, 2]") is None
    assert parse_event("not json") is None
    assert parse_event("") is None


def test_the_origin_comes_from_the_event_and_names_the_session_after_the_cli() -> None:
    origin = hook_origin("claude", {"session_id": "abc", "cwd": "/home/ada/shop"}, {})
    assert origin == HookOrigin("claude-code", "abc", "/home/ada/shop")
    assert origin.session == "claude-code:abc"
    assert hook_origin("codex", {"session_id": "019a", "cwd": "/w"}, {}).session == "codex:019a"


def test_claude_codes_environment_fills_what_the_event_lacks() -> None:
    environ = {"CLAUDE_CODE_SESSION_ID": "from-env", "CLAUDE_PROJECT_DIR": "/home/ada/shop"}
    assert hook_origin("claude", {}, environ) == HookOrigin(
        "claude-code", "from-env", "/home/ada/shop"
    )


def test_without_a_session_the_session_is_the_cli_and_the_folder_is_the_hooks_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    origin = hook_origin("codex", {"session_id": 7}, {"CLAUDE_CODE_SESSION_ID": "not codex"})
    assert origin == HookOrigin("codex", None, str(tmp_path))
    assert origin.session == "codex"
