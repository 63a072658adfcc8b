"""Claude Code hooks: its questions, plan reviews and permission prompts asked through any provider.

Pure mapping. Claude Code runs a command hook with one event as JSON on stdin and reads the hook's
JSON output on stdout (`uq hook claude` does the running, `cli._hook`). The event and output shapes
are those of `@anthropic-ai/claude-agent-sdk`'s `sdk.d.ts` (`PreToolUseHookInput`,
`PermissionRequestHookInput`, `SyncHookJSONOutput`); docs/clients/claude-code.md lists every field
used and where it comes from.

- `PreToolUse` of `AskUserQuestion`: the questions as `bridges.claude` maps them (ids from
  positions). Answered -> `permissionDecision: "allow"` with `updatedInput` = the input plus
  `answers` (Claude Code needs both to skip its own question: "allow" alone is not enough for a
  tool that requires user interaction), and the person's notes as `annotations` (`{"<question>":
  {"notes": ...}}`). Dismissed -> `"deny"`, the reason telling the model.
- `PreToolUse` of `ExitPlanMode`: the plan-review card (the plan is the input's `plan`, which
  Claude Code adds from its plan file). Approve -> `"allow"` with the input echoed as
  `updatedInput` (and a note as `additionalContext`, which the model reads); "Keep planning"
  (with feedback) -> `"deny"` with `exit_plan_mode`'s text;
  "Chat about it" (a dismissal) -> `"deny"` and `continue: false`, which stops Claude's turn.
- `PermissionRequest` of any other tool: the approval card (`user_questions.approvals`), offering
  "Allow and don't ask again" when the event carries `permission_suggestions`. Allow ->
  `decision.behavior: "allow"` (with `updatedPermissions` = the suggestions, for "don't ask
  again"), or with `updatedInput` = the call as the person changed it ("Edit and allow");
  Deny or a reason typed -> `"deny"` with the reason (and a note) as `message`; a note beside an
  allow is the output's `systemMessage` (the allow has no field the model reads), and is kept
  (`_hooks.allowed_notes`) for the call's `PostToolUse`, whose `additionalContext` gives it to the
  model once the call has run; a dismissal ->
  `"deny"` with `interrupt: true`, as Esc at Claude Code's own prompt stops the turn.

What only the person reads (an allow's `permissionDecisionReason`, the `stopReason`, the
`systemMessage`) is in the terminal's language (`UQ_LANG`, `LC_ALL`, `LC_MESSAGES`, `LANG`);
what the model reads (a deny's reason or `message`, `additionalContext`) stays English.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from user_questions._hooks.allowed_notes import NotedCall, keep_note
from user_questions._hooks.events import ASK_TOOL, PLAN_TOOL, PRE_TOOL_USE, answers, hook_origin
from user_questions._hooks.permission_call import permission_call
from user_questions._languages import N_, gettext
from user_questions.bridges.claude import DISMISSED, answers_to_claude, questions_from_claude
from user_questions.bridges.hook import HookAsk, HookOutput, approval_ask, permission_decision
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.tool_exit_plan_mode import verdict, verdict_text
from user_questions.types import AskUserQuestionAnswer

__all__ = ["ANSWERED_HERE", "PLAN_DISMISSED", "hook_ask"]

ANSWERED_HERE = N_("Answered in the user-questions inbox.")
"""Why an allowed question skipped Claude Code's own prompt; shown to the user (in their
language), not the model."""
PLAN_DISMISSED = N_("The plan review was dismissed in the user-questions inbox, to talk it over.")
"""Why Claude's turn stopped after "Chat about it"; shown to the user (in their language)."""
_APPROVAL_DISMISSED = {"behavior": "deny", "message": DISMISSED, "interrupt": True}
"""A dismissed permission prompt stops the turn, as Esc at Claude Code's own prompt does."""


def hook_ask(event: Mapping[str, Any]) -> HookAsk | None:
    """What to ask about a Claude Code hook event; `None` for an event the hook leaves to
    Claude Code (see `_hooks.events.answers`).

    Raises:
        UserQuestionError: `BAD_REQUEST` for a tool input that cannot be asked (no plan in an
            `ExitPlanMode` input, two questions with the same text, a malformed question).
    """
    if not answers("claude", event):
        return None
    if event["hook_event_name"] == PRE_TOOL_USE and event["tool_name"] == ASK_TOOL:
        return _questions(_tool_input(event))
    if event["hook_event_name"] == PRE_TOOL_USE:
        return _plan_review(_tool_input(event))
    call = permission_call("claude", event)
    assert call is not None  # a permission prompt, as `answers` found
    asked = approval_ask(call, dismissed=permission_decision(_APPROVAL_DISMISSED))
    session_id = hook_origin("claude", event).session_id

    def answered(answer: AskUserQuestionAnswer) -> HookOutput:
        output = asked.answered(answer)
        note = output.get("systemMessage")
        if isinstance(note, str):  # allowed with a note: for the model, once the call has run
            runs = output["hookSpecificOutput"]["decision"].get("updatedInput", call.arguments)
            keep_note(NotedCall(session_id, call.tool, runs), note)
        return output

    return replace(asked, answered=answered)


def _questions(input: dict[str, Any]) -> HookAsk:
    questions = questions_from_claude(input)

    def answered(answer: AskUserQuestionAnswer) -> HookOutput:
        updated = answers_to_claude(input, answer)
        return _pre_tool_use("allow", gettext(ANSWERED_HERE), updated_input=updated)

    return HookAsk(questions, answered, lambda: _pre_tool_use("deny", DISMISSED))


def _plan_review(input: dict[str, Any]) -> HookAsk:
    questions = questions_from_claude(input, tool_name=PLAN_TOOL)

    def answered(answer: AskUserQuestionAnswer) -> HookOutput:
        result = verdict(answer)
        if result["approved"]:
            context = verdict_text(result) if "note" in result else None
            answered_here = gettext(ANSWERED_HERE)
            return _pre_tool_use("allow", answered_here, updated_input=input, context=context)
        return _pre_tool_use("deny", verdict_text(result))

    def dismissed() -> HookOutput:
        stopped = gettext(PLAN_DISMISSED)
        return {"continue": False, "stopReason": stopped, **_pre_tool_use("deny", DISMISSED)}

    return HookAsk(questions, answered, dismissed)


def _tool_input(event: Mapping[str, Any]) -> dict[str, Any]:
    value = event.get("tool_input")
    if not isinstance(value, dict):
        raise UserQuestionError(
            f"invalid {event.get('hook_event_name')} event: tool_input is not an object",
            ErrorCode.BAD_REQUEST,
        )
    return value


def _pre_tool_use(
    decision: str,
    reason: str,
    *,
    updated_input: dict[str, Any] | None = None,
    context: str | None = None,
) -> HookOutput:
    """A `PreToolUse` output; `context` is `additionalContext`, which the model reads beside an
    allowed call (an allow's `permissionDecisionReason` is shown to the person only)."""
    output: dict[str, Any] = {
        "hookEventName": PRE_TOOL_USE,
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }
    if updated_input is not None:
        output["updatedInput"] = updated_input
    if context is not None:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}
