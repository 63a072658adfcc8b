"""Claude Agent SDK bridge: AskUserQuestion and ExitPlanMode permission requests, both ways.

The fixtures are control requests in the shape the SDK documents for `can_use_tool`.
"""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    ScriptedProvider,
    UserQuestionError,
)
from user_questions.bridges.claude import (
    DISMISSED,
    AllowedNotes,
    PermissionAllow,
    PermissionDeny,
    answers_to_claude,
    can_use_tool,
    decide,
    describe_permission_updates,
    questions_from_claude,
)

pytestmark = pytest.mark.anyio
FIXTURES = Path(__file__).parent / "fixtures" / "claude"


def recorded(name: str) -> tuple[str, dict[str, Any]]:
    request = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))["request"]
    return request["tool_name"], request["input"]


def answer(*items: AskUserQuestionAnswerItem) -> AskUserQuestionAnswer:
    return AskUserQuestionAnswer(answers=list(items))


def test_questions_get_ids_from_their_positions_and_keep_header_options_and_multi_select() -> None:
    _, input = recorded("ask_user_question")
    questions = questions_from_claude(input)
    assert [q.id for q in questions] == ["q1", "q2", "q3"]
    first = questions[0].model_dump(mode="json")
    assert first == {
        "id": "q1",
        "question": "How should I format the output?",
        "header": "Format",
        "options": [
            {"label": "Summary", "description": "Brief overview of key points"},
            {"label": "Detailed", "description": "Full explanation with examples"},
        ],
        "multiSelect": False,
    }
    assert questions[1].multi_select is True


def test_an_option_preview_is_kept_in_the_question_detail() -> None:
    _, input = recorded("ask_user_question")
    assert (
        questions_from_claude(input)[1].detail
        == "**Appendix**\n\n| col | value |\n|---|---|\n| a | 1 |"
    )


def test_answers_are_keyed_by_question_text_with_multiple_labels_joined() -> None:
    _, input = recorded("ask_user_question")
    updated = answers_to_claude(
        input,
        answer(
            AskUserQuestionAnswerItem(id="q1", selected=["Summary"]),
            AskUserQuestionAnswerItem(id="q2", selected=["Conclusion", "Introduction"]),
            AskUserQuestionAnswerItem(id="q3", selected=[], custom="Use British spelling"),
        ),
    )
    assert updated["questions"] == input["questions"]
    assert updated["answers"] == {
        "How should I format the output?": "Summary",
        "Which sections should I include?": "Introduction, Conclusion",
        "Anything else I should know?": "Use British spelling",
    }


def test_custom_text_follows_the_labels_of_a_multi_select_and_a_skip_has_no_key() -> None:
    _, input = recorded("ask_user_question")
    updated = answers_to_claude(
        input,
        answer(
            AskUserQuestionAnswerItem(id="q1", selected=[]),
            AskUserQuestionAnswerItem(id="q2", selected=["Appendix"], custom="Glossary"),
            AskUserQuestionAnswerItem(id="q3", selected=["No"]),
        ),
    )
    assert updated["answers"] == {
        "Which sections should I include?": "Appendix, Glossary",
        "Anything else I should know?": "No",
    }


def test_two_questions_with_the_same_text_are_refused_because_claude_keys_by_text() -> None:
    question = {"question": "Proceed?", "header": "Go", "options": [{"label": "Yes"}]}
    with pytest.raises(UserQuestionError) as caught:
        questions_from_claude({"questions": [question, question]})
    assert caught.value.code == ErrorCode.BAD_REQUEST
    assert '"Proceed?" is asked more than once' in str(caught.value)


def test_a_malformed_input_names_the_field() -> None:
    with pytest.raises(UserQuestionError) as caught:
        questions_from_claude({"questions": [{"header": "x"}]})
    assert caught.value.code == ErrorCode.BAD_REQUEST
    assert str(caught.value) == (
        'invalid AskUserQuestion input: missing required property "questions[0].question"'
    )


def test_an_answer_for_other_questions_is_a_bad_answer() -> None:
    _, input = recorded("ask_user_question")
    with pytest.raises(UserQuestionError) as caught:
        answers_to_claude(input, answer(AskUserQuestionAnswerItem(id="q1", selected=["Summary"])))
    assert caught.value.code == ErrorCode.BAD_ANSWER


async def test_the_callback_allows_ask_user_question_with_the_users_answers() -> None:
    tool, input = recorded("ask_user_question")
    provider = ScriptedProvider({"q1": "Detailed", "q2": ["Introduction"], "q3": "No"})
    result = await can_use_tool(provider)(tool, input, None)
    assert isinstance(result, PermissionAllow)
    assert result.to_dict() == {
        "behavior": "allow",
        "updatedInput": {
            **input,
            "answers": {
                "How should I format the output?": "Detailed",
                "Which sections should I include?": "Introduction",
                "Anything else I should know?": "No",
            },
        },
    }


async def test_dismissing_the_questions_denies_and_interrupts() -> None:
    tool, input = recorded("ask_user_question")
    result = await can_use_tool(ScriptedProvider({}))(tool, input, None)
    assert result == PermissionDeny(DISMISSED, interrupt=True)
    assert result.to_dict() == {"behavior": "deny", "message": DISMISSED, "interrupt": True}


async def test_an_approved_plan_is_allowed_unchanged() -> None:
    tool, input = recorded("exit_plan_mode")
    provider = ScriptedProvider({"plan-review": "Approve"})
    result = await can_use_tool(provider)(tool, input, None)
    assert result == PermissionAllow(input)
    question = provider.seen[0].questions[0]
    assert question.intent is not None
    assert question.intent.approve == "Approve"
    assert question.detail is not None
    assert question.detail.startswith("## Plan\n\n1. Add")
    assert question.detail.endswith("The plan asks to be allowed:\n\n- Bash: run the test suite")


async def test_a_declined_plan_is_denied_with_the_users_feedback() -> None:
    tool, input = recorded("exit_plan_mode")
    provider = ScriptedProvider({"plan-review": "Split step 2 into two commits"})
    result = await can_use_tool(provider)(tool, input, None)
    assert result == PermissionDeny(
        "The user did not approve the plan and said: Split step 2 into two commits\n"
        "Keep planning, then present a revised plan."
    )
    plain = await decide(ScriptedProvider({"plan-review": "Keep planning"}), tool, input)
    assert plain == PermissionDeny(
        "The user did not approve the plan. Keep planning, then present a revised plan."
    )


async def test_a_dismissed_plan_review_denies_and_interrupts_so_the_user_can_talk() -> None:
    tool, input = recorded("exit_plan_mode")
    assert await decide(ScriptedProvider({}), tool, input) == PermissionDeny(
        DISMISSED, interrupt=True
    )


async def test_a_plan_input_without_a_plan_is_denied_with_the_reason() -> None:
    result = await decide(ScriptedProvider({}), "ExitPlanMode", {"allowedPrompts": []})
    assert result == PermissionDeny(
        'Error: invalid ExitPlanMode input: missing required property "plan"'
    )


async def test_other_tools_are_asked_on_the_approval_card_showing_what_will_run() -> None:
    tool, input = recorded("bash")
    provider = ScriptedProvider({"approval": "Allow"})
    assert await decide(provider, tool, input) == PermissionAllow(input)
    question = provider.seen[0].questions[0]
    assert question.question == "Allow Claude to run Bash: rm -rf build/?"
    assert question.detail == "Remove the build directory\n\n```sh\nrm -rf build/\n```"
    assert [option.label for option in question.options or []] == ["Allow", "Deny"]
    assert await decide(ScriptedProvider({"approval": "Deny"}), tool, input) == PermissionDeny(
        "The user denied this Bash call."
    )
    typed = await decide(ScriptedProvider({"approval": "only build/cache"}), tool, input)
    assert typed == PermissionDeny("The user denied this Bash call and said: only build/cache")


SUGGESTION = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "rm -rf build/"}],
    "behavior": "allow",
    "destination": "localSettings",
}


async def test_dont_ask_again_allows_with_claudes_own_suggestions() -> None:
    tool, input = recorded("bash")
    provider = ScriptedProvider({"approval": "Allow and don't ask again"})
    result = await decide(provider, tool, input, suggestions=[SUGGESTION])
    assert result == PermissionAllow(input, [SUGGESTION])
    assert result.to_dict()["updatedPermissions"] == [SUGGESTION]
    options = provider.seen[0].questions[0].options or []
    assert options[1].description == (
        "Also allow Bash(rm -rf build/) without asking, in this project, for you "
        "(.claude/settings.local.json)."
    )
    once = await decide(
        ScriptedProvider({"approval": "Allow"}), tool, input, suggestions=[SUGGESTION]
    )
    assert once == PermissionAllow(input)


def test_the_python_sdks_permission_updates_are_read_through_to_dict() -> None:
    @dataclass
    class PermissionUpdate:  # the shape of claude_agent_sdk.PermissionUpdate
        destination: str

        def to_dict(self) -> dict[str, Any]:
            return {
                "type": "addDirectories",
                "directories": ["/srv"],
                "destination": self.destination,
            }

    update = PermissionUpdate("session")
    assert (
        describe_permission_updates([update])
        == "Give access to /srv, for the rest of this session."
    )
    assert PermissionAllow({}, [update]).to_dict()["updatedPermissions"] == [update.to_dict()]


def test_each_kind_of_permission_update_is_described_in_words() -> None:
    updates = [
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
        {"type": "addDirectories", "directories": ["/srv/data"], "destination": "userSettings"},
        {"type": "removeRules", "rules": [], "behavior": "deny", "destination": "cliArg"},
    ]
    assert describe_permission_updates(updates) == (
        "Switch to the acceptEdits permission mode, for the rest of this session. "
        "Give access to /srv/data, in every project (~/.claude/settings.json). "
        "Change the permission rules (removeRules), for this run."
    )
    assert describe_permission_updates([]) is None


async def test_a_fallback_decides_other_tools_but_never_the_question_tools() -> None:
    calls: list[str] = []

    async def fallback(tool_name: str, input: dict[str, Any], context: Any) -> str:
        calls.append(tool_name)
        return "from fallback"

    callback = can_use_tool(
        ScriptedProvider({"q1": "Summary", "q2": [], "q3": "No"}), fallback=fallback
    )
    assert await callback(*recorded("bash"), None) == "from fallback"
    assert isinstance(await callback(*recorded("ask_user_question"), None), PermissionAllow)
    assert calls == ["Bash"]


async def test_ctx_user_questions_can_be_the_provider_so_the_service_events_fire(
    ctx: Context,
) -> None:
    ctx.user_questions.register_provider(ScriptedProvider({"plan-review": "Approve"}))
    seen: list[str] = []
    ctx.on("user-questions/resolved", lambda event: seen.append(event["outcome"]))
    tool, input = recorded("exit_plan_mode")
    assert await can_use_tool(ctx.user_questions)(tool, input, None) == PermissionAllow(input)
    assert seen == ["answered"]


async def test_with_the_sdk_installed_the_callback_returns_its_own_result_classes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @dataclass
    class PermissionResultAllow:
        updated_input: dict[str, Any] | None = None

    @dataclass
    class PermissionResultDeny:
        message: str = ""
        interrupt: bool = False

    sdk = types.ModuleType("claude_agent_sdk")
    sdk.PermissionResultAllow = PermissionResultAllow  # type: ignore[attr-defined]
    sdk.PermissionResultDeny = PermissionResultDeny  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", sdk)
    tool, input = recorded("exit_plan_mode")
    allowed = await can_use_tool(ScriptedProvider({"plan-review": "Approve"}))(tool, input, None)
    assert allowed == PermissionResultAllow(updated_input=input)
    denied = await can_use_tool(ScriptedProvider({}))(tool, input, None)
    assert denied == PermissionResultDeny(message=DISMISSED, interrupt=True)


async def test_a_provider_failure_is_denied_with_its_message() -> None:
    class Broken:
        async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            return answer(AskUserQuestionAnswerItem(id="nope", selected=[]))

    tool, input = recorded("ask_user_question")
    result = await decide(Broken(), tool, input)
    assert isinstance(result, PermissionDeny)
    assert result.message.startswith('Error: provider answer for question "nope"')
    assert not result.interrupt


def answered_with(**fields: Any) -> ScriptedProvider:
    """A person's answer to the approval card, with fields beyond a label."""
    item = AskUserQuestionAnswerItem(id="approval", **fields)
    return ScriptedProvider(lambda request: AskUserQuestionAnswer(answers=[item]))


async def test_a_call_allowed_with_changes_runs_as_changed_and_a_note_reaches_a_denial() -> None:
    tool, input = recorded("bash")
    changed = {"command": "rm -rf build/tmp", "description": "Only the temporary files"}
    provider = answered_with(selected=["Allow"], edited=changed)
    assert await decide(provider, tool, input) == PermissionAllow(changed)
    approval = provider.seen[0].approval
    assert approval is not None
    assert approval.editable is True
    assert approval.input == input
    noted = answered_with(selected=["Deny"], note="keep the cache")
    assert await decide(noted, tool, input) == PermissionDeny(
        "The user denied this Bash call and said: keep the cache"
    )
    always = answered_with(selected=["Allow and don't ask again"], edited=changed)
    refused = await decide(always, tool, input, suggestions=[SUGGESTION])
    assert isinstance(refused, PermissionDeny)  # no rule is ever made from an edited call
    assert "edited goes with" in refused.message


async def test_a_note_beside_an_allowed_call_reaches_the_model_after_the_call_ran(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @dataclass
    class HookMatcher:  # the shape of claude_agent_sdk.HookMatcher
        matcher: str | None = None
        hooks: list[Any] = field(default_factory=list)

    @dataclass
    class PermissionResultAllow:
        updated_input: dict[str, Any] | None = None

    sdk = types.ModuleType("claude_agent_sdk")
    sdk.HookMatcher = HookMatcher  # type: ignore[attr-defined]
    sdk.PermissionResultAllow = PermissionResultAllow  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", sdk)
    notes = AllowedNotes()
    ((matcher,),) = notes.hooks().values()
    assert list(notes.hooks()) == ["PostToolUse"]
    (post_tool_use,) = matcher.hooks
    tool, input = recorded("bash")
    changed = {"command": "rm -rf build/tmp"}
    provider = answered_with(selected=["Allow"], edited=changed, note="CI is slow today")
    allowed = await can_use_tool(provider, notes=notes)(tool, input, None)
    assert allowed == PermissionResultAllow(updated_input=changed)
    other = {"tool_name": tool, "tool_input": input, "hook_event_name": "PostToolUse"}
    assert await post_tool_use(other, "toolu_1", None) == {}  # not the call that ran
    ran = {**other, "tool_input": changed}
    assert await post_tool_use(ran, "toolu_2", None) == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "The user changed this Bash call before allowing it. "
            "The user allowed this Bash call and noted: CI is slow today",
        }
    }
    assert await post_tool_use(ran, "toolu_2", None) == {}  # given once
