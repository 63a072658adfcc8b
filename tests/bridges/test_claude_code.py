"""Claude Code hook events asked as our questions, and the hook output each outcome gives.

The events are the fixtures in `fixtures/claude_code/` (each field cites its source); every
output is validated against the JSON Schema transcribed there from the SDK's output types.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.bridges.conftest import hook_event
from user_questions._hooks.allowed_notes import delivered_note
from user_questions.bridges.claude import DISMISSED
from user_questions.bridges.claude_code import ANSWERED_HERE, PLAN_DISMISSED, hook_ask
from user_questions.bridges.hook import HookAsk, HookOutput
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionAnswerItem

FIXTURES = Path(__file__).parent / "fixtures" / "claude_code"
OUTPUT_SCHEMA = json.loads((FIXTURES / "hook-output.schema.json").read_text(encoding="utf-8"))


def event(name: str) -> dict[str, Any]:
    return hook_event("claude_code", name)


def asked(name: str) -> HookAsk:
    hook = hook_ask(event(name))
    assert hook is not None
    return hook


def answer(*items: tuple[str, list[str], str | None]) -> AskUserQuestionAnswer:
    return AskUserQuestionAnswer(
        answers=[AskUserQuestionAnswerItem(id=i, selected=s, custom=c) for i, s, c in items]
    )


def valid(output: HookOutput) -> HookOutput:
    jsonschema.validate(output, OUTPUT_SCHEMA)
    return output


def test_every_fixture_cites_a_source_for_every_field_of_its_event() -> None:
    for path in sorted(FIXTURES.glob("*_*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        for key in document["event"]:
            assert key in document["sources"], f"{path.name}: {key} has no source"


@pytest.mark.parametrize(
    "name", [path.stem for path in sorted((FIXTURES / "captured").glob("*.json"))]
)
def test_events_captured_from_claude_code_have_the_fields_of_the_written_ones(name: str) -> None:
    captured = json.loads((FIXTURES / "captured" / f"{name}.json").read_text(encoding="utf-8"))
    written = event(
        {
            "ask_user_question_pre_tool_use": "pre_tool_use_ask_user_question",
            "bash_permission_request": "permission_request_bash",
            "exit_plan_mode_pre_tool_use": "pre_tool_use_exit_plan_mode",
        }[name]
    )
    assert set(captured) <= set(written) | {"tool_use_id"}
    assert set(captured["tool_input"]) <= set(written["tool_input"]) | {"timeout"}
    hook = hook_ask(captured)
    assert hook is not None
    assert hook.questions


def test_the_captured_suggestions_are_all_offered_and_all_given_back() -> None:
    captured = json.loads(
        (FIXTURES / "captured" / "bash_permission_request.json").read_text(encoding="utf-8")
    )
    hook = hook_ask(captured)
    assert hook is not None
    options = hook.questions[0].options or []
    assert options[1].description == (
        "Also allow Bash(rm -rf build && echo removed) without asking, in this project, for you "
        "(.claude/settings.local.json). Give access to /tmp/ccreal/proj/build, for the rest of "
        "this session. Switch to the acceptEdits permission mode, for the rest of this session."
    )
    output = valid(hook.answered(answer(("approval", ["Allow and don't ask again"], None))))
    updates = output["hookSpecificOutput"]["decision"]["updatedPermissions"]
    assert updates == captured["permission_suggestions"]


def test_the_questions_are_asked_as_they_are_with_ids_from_their_positions() -> None:
    hook = asked("pre_tool_use_ask_user_question")
    first, second = hook.questions
    assert (first.id, second.id) == ("q1", "q2")
    assert first.question == "Which database should the shop use?"
    assert first.header == "Database"
    assert [o.label for o in first.options or []] == ["PostgreSQL (Recommended)", "SQLite"]
    assert first.detail == "**SQLite**\n\nDATABASE_URL=sqlite:///shop.db"
    assert second.multi_select is True


def test_an_answer_allows_with_the_input_and_the_answers_keyed_by_question_text() -> None:
    hook = asked("pre_tool_use_ask_user_question")
    output = valid(
        hook.answered(
            answer(("q1", ["PostgreSQL (Recommended)"], None), ("q2", ["Search", "Billing"], "RSS"))
        )
    )
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "allow"
    assert specific["permissionDecisionReason"] == ANSWERED_HERE
    original = event("pre_tool_use_ask_user_question")["tool_input"]
    assert specific["updatedInput"] == {
        **original,
        "answers": {
            "Which database should the shop use?": "PostgreSQL (Recommended)",
            "Which features do you want to enable?": "Search, Billing, RSS",
        },
    }


def test_free_text_is_the_answer_as_typed() -> None:
    hook = asked("pre_tool_use_ask_user_question")
    output = hook.answered(answer(("q1", [], "  DuckDB "), ("q2", [], None)))
    answers = output["hookSpecificOutput"]["updatedInput"]["answers"]
    assert answers == {"Which database should the shop use?": "  DuckDB "}


def test_dismissed_questions_deny_with_a_message_the_model_reads() -> None:
    output = valid(asked("pre_tool_use_ask_user_question").dismissed())
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": DISMISSED,
        }
    }


def test_two_questions_with_the_same_text_are_left_to_claude_code() -> None:
    claude_event = event("pre_tool_use_ask_user_question")
    questions = claude_event["tool_input"]["questions"]
    claude_event["tool_input"]["questions"] = [questions[0], questions[0]]
    with pytest.raises(UserQuestionError) as caught:
        hook_ask(claude_event)
    assert caught.value.code == ErrorCode.BAD_REQUEST


def test_the_plan_is_asked_on_the_plan_review_card() -> None:
    (question,) = asked("pre_tool_use_exit_plan_mode").questions
    assert question.intent is not None
    assert question.intent.approve == "Approve"
    assert question.detail == event("pre_tool_use_exit_plan_mode")["tool_input"]["plan"]


def test_an_approved_plan_allows_with_the_input_echoed() -> None:
    output = valid(
        asked("pre_tool_use_exit_plan_mode").answered(answer(("plan-review", ["Approve"], None)))
    )
    specific = output["hookSpecificOutput"]
    assert specific["permissionDecision"] == "allow"
    assert specific["updatedInput"] == event("pre_tool_use_exit_plan_mode")["tool_input"]


def test_keep_planning_with_feedback_denies_with_the_feedback() -> None:
    hook = asked("pre_tool_use_exit_plan_mode")
    output = valid(hook.answered(answer(("plan-review", [], "Cache reads only."))))
    assert output["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert output["hookSpecificOutput"]["permissionDecisionReason"] == (
        "The user did not approve the plan and said: Cache reads only.\n"
        "Keep planning, then present a revised plan."
    )
    plain = hook.answered(answer(("plan-review", ["Keep planning"], None)))
    assert plain["hookSpecificOutput"]["permissionDecisionReason"] == (
        "The user did not approve the plan. Keep planning, then present a revised plan."
    )


def test_chat_about_it_denies_and_stops_claudes_turn() -> None:
    output = valid(asked("pre_tool_use_exit_plan_mode").dismissed())
    assert output["continue"] is False
    assert output["stopReason"] == PLAN_DISMISSED
    assert output["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_plan_event_without_a_plan_cannot_be_asked() -> None:
    claude_event = event("pre_tool_use_exit_plan_mode")
    claude_event["tool_input"] = {}
    with pytest.raises(UserQuestionError) as caught:
        hook_ask(claude_event)
    assert caught.value.code == ErrorCode.BAD_REQUEST


def test_a_permission_prompt_is_the_approval_card_with_dont_ask_again_from_the_suggestions() -> (
    None
):
    (card,) = asked("permission_request_bash").questions
    assert card.question == "Allow Claude to run Bash: npm test -- --watch=false?"
    assert card.detail == "Run the test suite\n\n```sh\nnpm test -- --watch=false\n```"
    assert [(o.label, o.description) for o in card.options or []] == [
        ("Allow", "Run this call once."),
        (
            "Allow and don't ask again",
            "Also allow Bash(npm test:*) without asking, in this project, for you "
            "(.claude/settings.local.json).",
        ),
        ("Deny", "Do not run it. Type a reason instead to tell the agent why."),
    ]


@pytest.mark.parametrize(
    ("selected", "custom", "decision"),
    [
        (["Allow"], None, {"behavior": "allow"}),
        (
            ["Allow and don't ask again"],
            None,
            {
                "behavior": "allow",
                "updatedPermissions": [
                    {
                        "type": "addRules",
                        "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                        "behavior": "allow",
                        "destination": "localSettings",
                    }
                ],
            },
        ),
        (["Deny"], None, {"behavior": "deny", "message": "The user denied this Bash call."}),
        (
            [],
            "use the staging db",
            {
                "behavior": "deny",
                "message": "The user denied this Bash call and said: use the staging db",
            },
        ),
        ([], None, {"behavior": "deny", "message": "The user denied this Bash call."}),
    ],
)
def test_each_answer_to_a_permission_prompt_gives_its_decision(
    selected: list[str], custom: str | None, decision: dict[str, Any]
) -> None:
    output = valid(
        asked("permission_request_bash").answered(answer(("approval", selected, custom)))
    )
    assert output == {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}
    }


def test_a_dismissed_permission_prompt_denies_and_interrupts() -> None:
    output = valid(asked("permission_request_bash").dismissed())
    assert output["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": DISMISSED,
        "interrupt": True,
    }


def test_an_edit_is_shown_as_a_diff_and_accept_edits_is_offered() -> None:
    hook = asked("permission_request_edit")
    (card,) = hook.questions
    assert card.detail is not None
    assert "-TAX = 0.19\n+TAX = 0.21" in card.detail
    options = card.options or []
    assert options[1].description == (
        "Switch to the acceptEdits permission mode, for the rest of this session."
    )
    output = valid(hook.answered(answer(("approval", ["Allow and don't ask again"], None))))
    assert output["hookSpecificOutput"]["decision"]["updatedPermissions"] == [
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
    ]


def test_an_mcp_tool_names_its_server_and_offers_no_dont_ask_again_without_suggestions() -> None:
    (card,) = asked("permission_request_mcp").questions
    assert card.header == "create_issue (github)"
    assert [o.label for o in card.options or []] == ["Allow", "Deny"]
    assert card.detail is not None
    assert '"title": "Checkout fails on empty cart"' in card.detail


@pytest.mark.parametrize(
    "change",
    [
        {},  # PreToolUse of Bash: runs for every call, also allowed ones
        {"hook_event_name": "PermissionRequest", "tool_name": "AskUserQuestion"},
        {"hook_event_name": "PostToolUse"},
        {"hook_event_name": "Notification", "tool_name": None},
    ],
)
def test_events_the_hook_does_not_answer_are_left_to_claude_code(change: dict[str, Any]) -> None:
    claude_event = {**event("pre_tool_use_bash"), **change}
    assert hook_ask(claude_event) is None


# -- notes and changed calls (issue 38) ------------------------------------------------------------


def noted(item_id: str, selected: list[str], **fields: Any) -> AskUserQuestionAnswer:
    return AskUserQuestionAnswer(
        answers=[AskUserQuestionAnswerItem(id=item_id, selected=selected, **fields)]
    )


def test_a_note_beside_an_answer_is_in_the_annotations_claude_reads() -> None:
    # `AskUserQuestionInput.annotations` (sdk-tools.d.ts): per question text, `{preview?, notes?}`.
    hook = asked("pre_tool_use_ask_user_question")
    output = valid(
        hook.answered(
            AskUserQuestionAnswer(
                answers=[
                    AskUserQuestionAnswerItem(id="q1", selected=["SQLite"], note="just for tests"),
                    AskUserQuestionAnswerItem(id="q2", selected=["Search"]),
                ]
            )
        )
    )
    updated = output["hookSpecificOutput"]["updatedInput"]
    assert updated["answers"]["Which database should the shop use?"] == "SQLite"
    assert updated["annotations"] == {
        "Which database should the shop use?": {"notes": "just for tests"}
    }


def test_an_approved_plan_with_a_note_gives_the_note_as_context_the_model_reads() -> None:
    output = valid(
        asked("pre_tool_use_exit_plan_mode").answered(
            noted("plan-review", ["Approve"], note="skip the migration step")
        )
    )
    specific = output["hookSpecificOutput"]
    assert specific["permissionDecision"] == "allow"
    assert specific["additionalContext"] == (
        "The user approved the plan. Leave plan mode and carry it out.\n"
        "The user noted: skip the migration step"
    )


def test_a_permission_prompt_is_sent_as_an_editable_approval() -> None:
    hook = asked("permission_request_bash")
    assert hook.approval is not None
    assert hook.approval.editable is True


def test_allowed_with_changes_the_decision_carries_the_whole_changed_call() -> None:
    hook = asked("permission_request_bash")
    changed = {"command": "npm test -- --runInBand", "description": "Run the tests, one by one"}
    output = valid(hook.answered(noted("approval", ["Allow"], edited=changed)))
    assert output["hookSpecificOutput"]["decision"] == {
        "behavior": "allow",
        "updatedInput": changed,
    }
    assert output["systemMessage"] == "The user changed this Bash call before allowing it."


def test_a_note_beside_a_denial_is_in_the_message_and_beside_an_allow_kept_for_the_model(
    tmp_path: Path,  # $XDG_STATE_HOME (conftest.py)
) -> None:
    hook = asked("permission_request_bash")
    denied = valid(hook.answered(noted("approval", ["Deny"], note="not on main")))
    assert denied["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "The user denied this Bash call and said: not on main",
    }
    allowed = valid(hook.answered(noted("approval", ["Allow"], note="once only")))
    assert allowed["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    assert allowed["systemMessage"] == "The user allowed this Bash call and noted: once only"
    ran = {**event("permission_request_bash"), "hook_event_name": "PostToolUse"}
    given = delivered_note(ran)  # the call's PostToolUse gives it to the model
    assert given == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "The user allowed this Bash call and noted: once only",
        }
    }
    assert list((tmp_path / "user-questions" / "hook-notes").iterdir()) == []  # given once


def test_an_edit_with_anything_but_allow_is_no_decision() -> None:
    hook = asked("permission_request_bash")
    for selected in (["Deny"], ["Allow and don't ask again"], []):
        with pytest.raises(UserQuestionError) as caught:
            hook.answered(noted("approval", selected, edited={"command": "true"}))
        assert caught.value.code == ErrorCode.BAD_ANSWER


@pytest.fixture
def korean_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook runs in a Korean shell: the tests' own `UQ_LANG=en` cleared."""
    for name in ("UQ_LANG", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "ko_KR.UTF-8")


@pytest.mark.usefixtures("korean_terminal")
def test_what_the_person_reads_follows_the_terminals_language_and_the_model_reads_english() -> None:
    hook = asked("permission_request_bash")
    allowed = valid(hook.answered(noted("approval", ["Allow"], note="이번만")))
    assert allowed["systemMessage"] == "사용자가 이 Bash 호출을 허용하며 메모를 남겼습니다: 이번만"
    denied = valid(hook.answered(noted("approval", ["Deny"], note="main에서는 안 돼요")))
    assert denied["hookSpecificOutput"]["decision"]["message"] == (
        "The user denied this Bash call and said: main에서는 안 돼요"  # for the model
    )
    question = asked("pre_tool_use_ask_user_question")
    answered = question.answered(answer(("q1", ["SQLite"], None), ("q2", ["Search"], None)))
    reason = valid(answered)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == "user-questions 받은 질문에서 답했습니다."
    plan = asked("pre_tool_use_exit_plan_mode")
    stopped = valid(plan.dismissed())
    assert stopped["stopReason"] == (
        "계획 검토를 user-questions 받은 질문에서 취소했습니다. 이야기를 나눠 보세요."
    )
    assert stopped["hookSpecificOutput"]["permissionDecisionReason"] == DISMISSED  # the model's
    approved = valid(plan.answered(noted("plan-review", ["Approve"], note="캐시만")))
    assert approved["hookSpecificOutput"]["additionalContext"].startswith("The user approved")
