"""Codex approval prompts asked on the approval card, and the hook output each outcome gives.

The events (`fixtures/codex/`) are validated against the input schema Codex 0.171.0 ships for
their hook event, and every output against its output schema: `PermissionRequest`'s fails closed
on `interrupt`, `updatedInput` and `updatedPermissions` (the hook never sends them there);
`PreToolUse` takes a changed call as `updatedInput`, only with `permissionDecision: "allow"`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.bridges.conftest import hook_event
from user_questions.bridges.codex import DISMISSED, hook_ask
from user_questions.bridges.hook import HookAsk, HookOutput
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionAnswerItem

FIXTURES = Path(__file__).parent / "fixtures" / "codex"
SCHEMAS = {
    kind: json.loads(
        (FIXTURES / f"permission-request.command.{kind}.schema.json").read_text(encoding="utf-8")
    )
    for kind in ("input", "output")
}
PRE_TOOL_USE_SCHEMAS = {
    kind: json.loads(
        (FIXTURES / f"pre-tool-use.command.{kind}.schema.json").read_text(encoding="utf-8")
    )
    for kind in ("input", "output")
}
EVENTS = sorted(path.stem for path in FIXTURES.glob("permission_request_*.json"))


def event(name: str) -> dict[str, Any]:
    return hook_event("codex", name)


def asked(name: str) -> HookAsk:
    hook = hook_ask(event(name))
    assert hook is not None
    return hook


def decided(hook: HookAsk, selected: list[str], custom: str | None = None) -> HookOutput:
    item = AskUserQuestionAnswerItem(id="approval", selected=selected, custom=custom)
    output = hook.answered(AskUserQuestionAnswer(answers=[item]))
    jsonschema.validate(output, SCHEMAS["output"])
    return output


@pytest.mark.parametrize("name", EVENTS)
def test_every_fixture_is_a_valid_codex_event_citing_its_sources(name: str) -> None:
    document = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    jsonschema.validate(document["event"], SCHEMAS["input"])
    for key in document["event"]:
        assert key in document["sources"], f"{name}: {key} has no source"


def test_the_event_captured_from_codex_is_valid_and_shaped_as_the_written_ones() -> None:
    captured = json.loads(
        (FIXTURES / "captured" / "exec_command_permission_request.json").read_text(encoding="utf-8")
    )
    jsonschema.validate(captured, SCHEMAS["input"])
    assert set(captured) == set(event("permission_request_bash"))
    hook = hook_ask(captured)
    assert hook is not None
    assert hook.questions[0].question == "Allow Codex to run Bash: rm -rf build && echo removed?"


def test_a_shell_command_is_shown_with_its_justification_and_only_allow_or_deny() -> None:
    (card,) = asked("permission_request_bash").questions
    assert card.question == "Allow Codex to run Bash: rm -rf dist && npm run build?"
    assert card.detail == (
        "Rebuild the bundle from scratch\n\n```sh\nrm -rf dist && npm run build\n```"
    )
    assert [o.label for o in card.options or []] == ["Allow", "Deny"]


def test_allow_and_deny_are_the_decisions_codex_reads() -> None:
    hook = asked("permission_request_bash")
    assert decided(hook, ["Allow"]) == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }
    assert decided(hook, [], "build into out/ instead")["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "The user denied this Bash call and said: build into out/ instead",
    }
    assert decided(hook, ["Deny"])["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "The user denied this Bash call.",
    }


def test_a_dismissal_denies_without_interrupting_which_codex_reserves() -> None:
    output = asked("permission_request_bash").dismissed()
    jsonschema.validate(output, SCHEMAS["output"])
    assert output["hookSpecificOutput"]["decision"] == {"behavior": "deny", "message": DISMISSED}


def test_a_network_approval_shows_the_command_and_the_domain() -> None:
    (card,) = asked("permission_request_network").questions
    assert card.detail == (
        "network-access registry.npmjs.org\n\n"
        "```sh\ncurl -fsSL https://registry.npmjs.org/left-pad\n```"
    )


def test_a_patch_is_shown_as_a_patch_naming_its_files() -> None:
    (card,) = asked("permission_request_apply_patch").questions
    assert card.question == "Allow Codex to run apply_patch: src/cart.py?"
    assert card.detail is not None
    assert card.detail.startswith("Apply this patch:\n\n```diff\n*** Begin Patch")
    assert "-TAX = 0.19\n+TAX = 0.21" in card.detail


def test_an_mcp_tool_is_shown_with_its_arguments() -> None:
    hook = asked("permission_request_mcp")
    (card,) = hook.questions
    assert card.header == "create_entities (memory)"
    assert card.detail is not None
    assert '"entityType": "project"' in card.detail
    assert decided(hook, ["Allow"])["hookSpecificOutput"]["decision"] == {"behavior": "allow"}


@pytest.mark.parametrize(
    "change", [{"hook_event_name": "PostToolUse"}, {"hook_event_name": "Stop", "tool_name": None}]
)
def test_events_other_than_an_approval_are_left_to_codex(change: dict[str, Any]) -> None:
    assert hook_ask({**event("permission_request_bash"), **change}) is None


def test_codex_calls_are_not_editable_and_a_changed_one_is_no_decision() -> None:
    # `decision.updatedInput` is "Reserved for a future input-rewrite capability" in Codex's
    # output schema: a hook that sends it fails closed, so the card never offers an edit.
    hook = asked("permission_request_bash")
    assert hook.approval is not None
    assert not hook.approval.editable
    item = AskUserQuestionAnswerItem(id="approval", selected=["Allow"], edited={"command": "ls"})
    with pytest.raises(UserQuestionError) as caught:
        hook.answered(AskUserQuestionAnswer(answers=[item]))
    assert caught.value.code == ErrorCode.BAD_ANSWER


def test_a_note_reaches_codex_in_the_denial_message_or_beside_an_allow() -> None:
    hook = asked("permission_request_bash")
    item = AskUserQuestionAnswerItem(id="approval", selected=["Deny"], note="use make clean")
    denied = hook.answered(AskUserQuestionAnswer(answers=[item]))
    jsonschema.validate(denied, SCHEMAS["output"])
    assert denied["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "The user denied this Bash call and said: use make clean",
    }
    item = AskUserQuestionAnswerItem(id="approval", selected=["Allow"], note="last time")
    allowed = hook.answered(AskUserQuestionAnswer(answers=[item]))
    jsonschema.validate(allowed, SCHEMAS["output"])
    assert allowed["systemMessage"] == "The user allowed this Bash call and noted: last time"


def pre_tool_use(
    selected: list[str], custom: str | None = None, **more: Any
) -> tuple[HookAsk, HookOutput]:
    """The fixture's `PreToolUse` call asked, and the output an answer to it gives (validated
    against Codex's output schema when there is one)."""
    document = json.loads((FIXTURES / "pre_tool_use_bash.json").read_text(encoding="utf-8"))
    jsonschema.validate(document["event"], PRE_TOOL_USE_SCHEMAS["input"])
    hook = hook_ask(document["event"])
    assert hook is not None
    item = AskUserQuestionAnswerItem(id="approval", selected=selected, custom=custom, **more)
    output = hook.answered(AskUserQuestionAnswer(answers=[item]))
    if output:
        jsonschema.validate(output, PRE_TOOL_USE_SCHEMAS["output"])
    return hook, output


def test_a_pre_tool_use_call_is_asked_on_an_editable_card() -> None:
    hook, _ = pre_tool_use(["Allow"])
    (card,) = hook.questions
    assert card.question == "Allow Codex to run Bash: rm -rf build/?"
    assert [o.label for o in card.options or []] == ["Allow", "Deny"]
    assert hook.approval is not None
    assert hook.approval.editable
    assert hook.approval.input == {"command": "rm -rf build/"}


def test_a_changed_call_is_allowed_with_the_whole_new_input() -> None:
    _, output = pre_tool_use(["Allow"], edited={"command": "rm -rf build/tmp"})
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "rm -rf build/tmp"},
            "additionalContext": "The user changed this Bash call before allowing it.",
        }
    }


def test_an_unchanged_allow_says_nothing_and_codex_goes_on_as_it_would() -> None:
    # Codex 0.171.0 refuses `permissionDecision: "allow"` without `updatedInput`.
    assert pre_tool_use(["Allow"])[1] == {}


def test_a_note_beside_an_allowed_pre_tool_use_call_reaches_the_model() -> None:
    _, output = pre_tool_use(["Allow"], note="the build folder is scratch")
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": "The user allowed this Bash call and noted: "
            "the build folder is scratch",
        }
    }


def test_a_denied_or_dismissed_pre_tool_use_call_is_denied_with_its_reason() -> None:
    hook, denied = pre_tool_use([], "keep build/, clean build/tmp only", note="ask me first")
    assert denied["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "The user denied this Bash call and said: "
        "keep build/, clean build/tmp only\n\nask me first",
    }
    dismissal = hook.dismissed()
    jsonschema.validate(dismissal, PRE_TOOL_USE_SCHEMAS["output"])
    assert dismissal["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert dismissal["hookSpecificOutput"]["permissionDecisionReason"] == DISMISSED
