"""Claude Agent SDK bridge: `AskUserQuestion` and `ExitPlanMode` answered by any of our providers.

Pure mapping, with no dependency on `claude-agent-sdk`. The SDK asks the application through its
permission callback, `can_use_tool(tool_name, input, context)`:

- `AskUserQuestion` input is `{"questions": [{"question", "header", "options": [{"label",
  "description"}], "multiSelect"}]}`; the callback allows it with an `updated_input` holding
  `answers` keyed by question text: a label, several labels joined with ", ", or the user's own
  text. Claude keys by text, so our question ids are made from positions (`q1`, `q2`, ...), and
  two questions with the same text are refused (`BAD_REQUEST`): their answers could not be told
  apart.
- `ExitPlanMode` input is `{"plan": ...}`: asked as our plan-review question; approve allows, a
  decline denies with the user's feedback as the message, a dismissal denies and interrupts.
- Any other tool is asked on the approval card of `user_questions.approvals` (Allow / Deny, and
  "Allow and don't ask again" when Claude suggests permission updates, which an allow then
  carries back as `updated_permissions`), unless a `fallback` callback decides it.

`can_use_tool(provider)` returns `claude_agent_sdk.PermissionResultAllow` / `PermissionResultDeny`
when that package is importable, else this module's `PermissionAllow` / `PermissionDeny`, whose
`to_dict()` is the control-protocol JSON a TypeScript or CLI bridge sends. See
`docs/bridges/claude.md` for what the mapping cannot carry.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import anyio
from pydantic import StrictBool, StrictStr

from user_questions._checks import check_answer, check_request, quoted
from user_questions._hooks.permission_call import (
    AGENT_NAMES,
    as_update_dict,
    describe_permission_updates,
)
from user_questions._reading.wire import parse_wire
from user_questions.abort import AbortSignal
from user_questions.approvals import (
    DECISION_TIMEOUT,
    allowed_note,
    approval_of,
    approval_question,
    decision_for,
    denial_message,
)
from user_questions.bridges._claude_notes import AllowedNotes
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval
from user_questions.service import AskUserQuestionRequest, UserQuestionProvider
from user_questions.tool_exit_plan_mode import plan_question, verdict, verdict_text
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    WireModel,
)

__all__ = [
    "ANSWER_SEPARATOR",
    "ASK_TOOL",
    "AllowedNotes",
    "DISMISSED",
    "PLAN_TOOL",
    "Permission",
    "PermissionAllow",
    "PermissionDeny",
    "answers_to_claude",
    "can_use_tool",
    "decide",
    "describe_permission_updates",
    "question_id",
    "questions_from_claude",
]

ASK_TOOL = "AskUserQuestion"
PLAN_TOOL = "ExitPlanMode"
ANSWER_SEPARATOR = ", "
"""Joins the labels of a multi-select answer, and custom text after them."""
DISMISSED = "The user dismissed the question without answering."
AGENT = AGENT_NAMES["claude"]
"""Who asks, on an approval card."""

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PermissionAllow:
    """Run the tool, with `updated_input` as its input; `updated_permissions` (Claude's own
    suggestions, as it gave them) also stop it asking again for calls like this one."""

    updated_input: dict[str, Any]
    updated_permissions: list[Any] | None = None
    behavior: Literal["allow"] = "allow"
    note: str | None = field(default=None, kw_only=True)
    """What the person noted beside the allow, for the model (`allowed_note`); not part of the
    response, which has no field for it: `can_use_tool` hands it to an `AllowedNotes`."""

    def to_dict(self) -> dict[str, Any]:
        """The control-protocol response: `{"behavior": "allow", "updatedInput",
        "updatedPermissions"?}`."""
        result: dict[str, Any] = {"behavior": self.behavior, "updatedInput": self.updated_input}
        if self.updated_permissions is not None:
            result["updatedPermissions"] = [as_update_dict(u) for u in self.updated_permissions]
        return result


@dataclass(frozen=True, slots=True)
class PermissionDeny:
    """Do not run the tool; the model reads `message`. `interrupt` also ends Claude's turn."""

    message: str
    interrupt: bool = False
    behavior: Literal["deny"] = "deny"

    def to_dict(self) -> dict[str, Any]:
        """The control-protocol response: `{"behavior": "deny", "message", "interrupt"?}`."""
        result: dict[str, Any] = {"behavior": self.behavior, "message": self.message}
        if self.interrupt:
            result["interrupt"] = True
        return result


Permission: TypeAlias = PermissionAllow | PermissionDeny
CanUseTool: TypeAlias = Callable[[str, dict[str, Any], Any], Awaitable[Any]]


class _Option(WireModel):
    label: StrictStr
    description: StrictStr | None = None
    preview: StrictStr | None = None


class _Question(WireModel):
    question: StrictStr
    header: StrictStr | None = None
    options: list[_Option] | None = None
    multi_select: StrictBool | None = None


class _AskInput(WireModel):
    questions: list[_Question]


class _AllowedPrompt(WireModel):
    tool: StrictStr
    prompt: StrictStr


class _PlanInput(WireModel):
    plan: StrictStr
    allowed_prompts: list[_AllowedPrompt] | None = None


def question_id(index: int) -> str:
    """The id of the question at `index` (from 0): `q1`, `q2`, ..."""
    return f"q{index + 1}"


def questions_from_claude(
    input: Mapping[str, Any], *, tool_name: str = ASK_TOOL
) -> list[AskUserQuestionItem]:
    """Our questions for an `AskUserQuestion` (or, with `tool_name`, `ExitPlanMode`) input.

    Option previews, which a generic surface cannot show beside each option, are kept in the
    question's detail; so are the permissions an `ExitPlanMode` plan asks for.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a malformed input, or two questions with the same
            text.
    """
    if tool_name == PLAN_TOOL:
        plan = parse_wire(
            _PlanInput, dict(input), what=f"{PLAN_TOOL} input", code=ErrorCode.BAD_REQUEST
        )
        return [plan_question(_plan_detail(plan))]
    parsed = parse_wire(
        _AskInput, dict(input), what=f"{ASK_TOOL} input", code=ErrorCode.BAD_REQUEST
    )
    seen: set[str] = set()
    questions = []
    for index, question in enumerate(parsed.questions):
        if question.question in seen:
            raise UserQuestionError(
                f"invalid {ASK_TOOL} input: the question {quoted(question.question)} is asked "
                "more than once; Claude keys answers by question text, so each must differ",
                ErrorCode.BAD_REQUEST,
            )
        seen.add(question.question)
        options = question.options or []
        questions.append(
            AskUserQuestionItem(
                id=question_id(index),
                question=question.question,
                header=question.header,
                detail=_previews(options),
                options=[
                    AskUserQuestionOption(label=option.label, description=option.description)
                    for option in options
                ]
                or None,
                multi_select=question.multi_select,
            )
        )
    return questions


def answers_to_claude(input: Mapping[str, Any], answer: AskUserQuestionAnswer) -> dict[str, Any]:
    """The `updated_input` allowing `AskUserQuestion`: `input` plus `answers` keyed by question.

    A single choice is its label; several are joined with ", " in option order; custom text is
    the value (after any labels, on a multi-select). A skipped question has no key. A note
    beside an answer is in `annotations`, keyed by question too (`{"notes": ...}`, the field
    Claude's `AskUserQuestionInput` has for it).

    Raises:
        UserQuestionError: `BAD_REQUEST` for a malformed input; `BAD_ANSWER` when `answer` does
            not answer those questions.
    """
    questions = questions_from_claude(input)
    checked = check_answer(questions, answer)
    answers: dict[str, str] = {}
    annotations: dict[str, dict[str, str]] = {}
    for question, item in zip(questions, checked.answers, strict=True):
        parts = [*item.selected, *([item.custom] if item.custom is not None else [])]
        if parts:
            answers[question.question] = ANSWER_SEPARATOR.join(parts)
        if item.note is not None:
            annotations[question.question] = {"notes": item.note}
    if not annotations:
        return {**input, "answers": answers}
    return {**input, "answers": answers, "annotations": annotations}


async def decide(
    provider: UserQuestionProvider,
    tool_name: str,
    input: Mapping[str, Any],
    *,
    suggestions: Sequence[Any] = (),
    decision_timeout: float | None = DECISION_TIMEOUT,
) -> Permission:
    """Ask the user about one tool call through `provider` and return the permission.

    `suggestions` are the permission updates Claude offers for "don't ask again" (the
    `PermissionUpdate`s of its permission request); with some, the approval card offers
    `Allow and don't ask again`, which allows with them as `updated_permissions`.

    It fails closed, in bounded time. `decision_timeout` bounds the whole decision (default
    `DECISION_TIMEOUT`, half an hour; `None` for no bound): past it the question is withdrawn
    and the call denied, saying so. A malformed input, an answer the card does not offer, or a
    provider failure of any kind denies with the error as the message: the model reads it and
    can try again. A dismissal (`ASK_CANCELLED`) denies and interrupts, because the user wants to
    talk rather than answer.
    """
    timeout = decision_timeout
    signal = None if timeout is None else AbortSignal.timeout(timeout)
    try:
        with anyio.move_on_after(float("inf") if timeout is None else timeout):
            return await _decide(provider, tool_name, input, suggestions, signal)
    except UserQuestionError as error:
        if error.code == ErrorCode.ASK_CANCELLED:
            return PermissionDeny(DISMISSED, interrupt=True)
        if error.code != ErrorCode.ASK_TIMED_OUT or signal is None or not signal.aborted:
            return PermissionDeny(f"Error: {error.message}")
    except Exception as error:  # a gate fails closed, whatever failed
        logger.warning("deciding a %s call failed; it is denied", tool_name, exc_info=True)
        return PermissionDeny(f"Error: {type(error).__name__}: {error}")
    return PermissionDeny(  # `timeout` passed: the scope's deadline, or the service's signal
        f"Error: the user did not decide within {timeout:g} s, so the {tool_name} call was not "
        "allowed."
    )


async def _decide(
    provider: UserQuestionProvider,
    tool_name: str,
    input: Mapping[str, Any],
    suggestions: Sequence[Any],
    signal: AbortSignal | None,
) -> Permission:
    if tool_name == ASK_TOOL:
        answer = await _ask(provider, questions_from_claude(input), signal=signal)
        return PermissionAllow(answers_to_claude(input, answer))
    if tool_name == PLAN_TOOL:
        questions = questions_from_claude(input, tool_name=PLAN_TOOL)
        result = verdict(await _ask(provider, questions, signal=signal))
        if result["approved"]:
            return PermissionAllow(dict(input))
        return PermissionDeny(verdict_text(result))
    always = describe_permission_updates(suggestions)
    card = approval_question(tool_name, input, agent=AGENT, always=always)
    approval = approval_of(tool_name, input, agent="claude", editable=True)
    decision = decision_for(card, await _ask(provider, [card], approval, signal))
    if not decision.allowed:
        return PermissionDeny(denial_message(decision, tool_name))
    note = allowed_note(decision, tool_name) if decision.note else None
    if note is not None:
        logger.info(
            "the note beside the allowed %s call has no field in Claude's allow: %s",
            tool_name,
            decision.note,
        )
    call = dict(input) if decision.edited is None else decision.edited
    return PermissionAllow(call, list(suggestions) if decision.always else None, note=note)


def can_use_tool(
    provider: UserQuestionProvider,
    *,
    fallback: CanUseTool | None = None,
    decision_timeout: float | None = DECISION_TIMEOUT,
    notes: AllowedNotes | None = None,
) -> CanUseTool:
    """A `can_use_tool` callback for `ClaudeAgentOptions` answering through `provider`.

    `provider` may be any provider, or `ctx.user_questions` so that the service's events and
    checks apply. `AskUserQuestion` and `ExitPlanMode` are always asked; other tools go to
    `fallback` when given, else are asked as Allow / Deny. Each call is decided as `decide`
    decides it, within `decision_timeout` seconds. A note beside an allowed call is kept in
    `notes`, whose `PostToolUse` hook (`AllowedNotes.hooks()`, in the same options) gives it to
    the model once the call has run; without `notes` it is logged.
    """

    async def callback(tool_name: str, input: dict[str, Any], context: Any = None) -> Any:
        if fallback is not None and tool_name not in (ASK_TOOL, PLAN_TOOL):
            return await fallback(tool_name, input, context)
        suggestions = getattr(context, "suggestions", None) or ()
        permission = await decide(
            provider, tool_name, input, suggestions=suggestions, decision_timeout=decision_timeout
        )
        if isinstance(permission, PermissionAllow) and permission.note and notes is not None:
            notes.keep(tool_name, permission.updated_input, permission.note)
        return _for_sdk(permission)

    return callback


async def _ask(
    provider: UserQuestionProvider,
    questions: Sequence[AskUserQuestionItem],
    approval: Approval | None = None,
    signal: AbortSignal | None = None,
) -> AskUserQuestionAnswer:
    check_request(questions, None, None, None)
    request = AskUserQuestionRequest(questions=questions, approval=approval, signal=signal)
    return check_answer(questions, await provider.ask(request), approval)


def _previews(options: Sequence[_Option]) -> str | None:
    shown = [f"**{option.label}**\n\n{option.preview}" for option in options if option.preview]
    return "\n\n".join(shown) or None


def _plan_detail(plan: _PlanInput) -> str:
    if not plan.allowed_prompts:
        return plan.plan
    asks = "\n".join(f"- {item.tool}: {item.prompt}" for item in plan.allowed_prompts)
    return f"{plan.plan}\n\n---\n\nThe plan asks to be allowed:\n\n{asks}"


def _for_sdk(permission: Permission) -> Any:
    """The SDK's own result classes when `claude_agent_sdk` is installed; ours otherwise."""
    try:
        sdk = importlib.import_module("claude_agent_sdk")
    except ImportError:
        return permission
    if isinstance(permission, PermissionAllow):
        if permission.updated_permissions is None:
            return sdk.PermissionResultAllow(updated_input=permission.updated_input)
        return sdk.PermissionResultAllow(
            updated_input=permission.updated_input,
            updated_permissions=permission.updated_permissions,
        )
    return sdk.PermissionResultDeny(message=permission.message, interrupt=permission.interrupt)
