"""AG-UI: the interrupts a run ended with, asked in the inbox, and the `resume` list that answers
them.

Needs the `ag-ui` extra (`ag-ui-protocol`, whose types these are). An AG-UI 1.0 run that needs a
person ends with `RUN_FINISHED` whose outcome is `{"type": "interrupt", "interrupts": [...]}`; the
next run on the thread must carry a `resume` entry for every one of them. `resume_interrupts(
interrupts, asker)` asks them all as one request, a question per interrupt in their order, and
returns that list:

- `tool_call` (bound to `toolCallId`): the approval card (`approvals.approval_question`) showing
  the call, when `tool_calls` names it (the run's `ToolCall`s), else the interrupt's message;
  `Allow` resolves it `{"approved": true}`, `Deny` `{"approved": false}`, and a reason typed
  instead denies it too, the reason in the entry's metadata (`{"user-questions": {"feedback":
  ...}}`), since the payload has no place for one. A lone tool call goes with its `approval`, so
  the host's rules may decide it; when its response schema offers `editedArgs` the card is
  editable, and a call the person changed resolves `{"approved": true, "editedArgs": {...}}`
  (the whole new arguments, as AG-UI says);
- `confirmation`: Yes or No, resolved `true` or `false` (AG-UI's boolean default), or
  `{"<name>": ...}` when the response schema is an object of one boolean; typed text is a No,
  with the text as feedback, as on an approval card;
- a response schema that is a form (`_reading.forms`: a flat object of strings, numbers,
  booleans and choices) is asked as that form, and resolved with the object the person filled
  in, typed as the schema says;
- `input_required` and any other reason: a free-text question (the message, its metadata's
  `detail` when a string), resolved with the typed text, when the response schema is absent or
  a plain string; a boolean one is asked as a confirmation.

A note the person adds beside any answer goes in the entry's metadata too (`{"user-questions":
{"note": ...}}`): AG-UI's payloads are the agent's own shape, which a note must not break.

A question the person skips is `cancelled` (abandoned without input), and so is every interrupt
when they dismiss the request; nothing is ever resolved that the person did not answer. The
earliest `expiresAt` bounds the whole request: past it the ask ends with `ASK_TIMED_OUT` and no
resume list, since AG-UI forbids resuming past an interrupt's expiry (an interrupt already past it
ends so before anything is asked).

A response schema no form reads (an enumeration, a number or an array on its own, nested objects)
is refused with `BAD_REQUEST` before anything is asked, naming what the form checker found.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

try:
    from ag_ui.core import Interrupt, ResumeEntry, ToolCall
except ImportError as error:  # pragma: no cover - exercised by hand without the extra
    raise ImportError(
        "user_questions.integrations.ag_ui needs the AG-UI SDK: pip install 'user-questions[ag-ui]'"
    ) from error

from user_questions._checks import quoted
from user_questions._reading.forms import schema_problem
from user_questions.abort import AbortSignal
from user_questions.approvals import (
    ALLOW,
    DENY,
    approval_decision,
    approval_of,
    approval_question,
)
from user_questions.asker import Asker
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval
from user_questions.types import (
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
)

__all__ = [
    "CONFIRMATION",
    "FEEDBACK_KEY",
    "INPUT_REQUIRED",
    "EDITED_ARGS",
    "METADATA_KEY",
    "NO",
    "NOTE_KEY",
    "TOOL_CALL",
    "YES",
    "resume_interrupts",
]

logger = logging.getLogger("user_questions.integrations.ag_ui")

TOOL_CALL = "tool_call"
CONFIRMATION = "confirmation"
INPUT_REQUIRED = "input_required"
YES, NO = "Yes", "No"
METADATA_KEY = "user-questions"
"""Our key in a resume entry's metadata (AG-UI reserves `ag-ui`; every other key is user space)."""
FEEDBACK_KEY = "feedback"
"""The text a person typed instead of choosing, under `METADATA_KEY`."""
NOTE_KEY = "note"
"""The note a person added beside their answer, under `METADATA_KEY`."""
EDITED_ARGS = "editedArgs"
"""The key of an approval's payload holding the call's changed arguments (AG-UI's own)."""

Payload = Callable[[AskUserQuestionAnswerItem], tuple[Any, str | None]]
"""Reads an answer item as the interrupt's payload and the feedback that goes with it."""


@dataclass(frozen=True, slots=True)
class _Asked:
    """One interrupt as asked: its question, and how its answer becomes the payload."""

    interrupt: Interrupt
    question: AskUserQuestionItem
    payload: Payload
    approval: Approval | None = None


async def resume_interrupts(
    interrupts: Sequence[Interrupt],
    asker: Asker,
    *,
    tool_calls: Sequence[ToolCall] = (),
    agent: str | None = None,
    question_timeout: float | None = None,
    rpc_id: str | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> list[ResumeEntry]:
    """Ask a person about every interrupt of a run at once, and return the `resume` list that
    answers them, in their order (see the module docstring).

    Args:
        tool_calls: The run's tool calls, so a `tool_call` interrupt's card shows its call.
        agent: How the cards name the agent (`"the agent"` by default).
        question_timeout: Seconds the request may wait, besides the interrupts' `expiresAt`.
        rpc_id: The request's id on the host: a process that restarts asks again under the
            same id (the run's id and the interrupts', say) and re-attaches to it.
        now: The clock `expiresAt` is read against.

    Raises:
        UserQuestionError: `BAD_REQUEST` for no interrupts or one asking for a form;
            `ASK_TIMED_OUT` at the deadline, or for an interrupt expired already; the asker's
            other codes (`HOST_UNREACHABLE`, ...). A dismissal is not an error: every entry is
            `cancelled`.
    """
    if not interrupts:
        raise UserQuestionError(
            "a run that interrupted has at least one interrupt", ErrorCode.BAD_REQUEST
        )
    calls = {call.id: call for call in tool_calls}
    asked = [_asked(interrupt, calls, agent) for interrupt in interrupts]
    seconds = _seconds_left(interrupts, now())
    if question_timeout is not None:
        seconds = question_timeout if seconds is None else min(seconds, question_timeout)
    approval = asked[0].approval if len(asked) == 1 else None
    try:
        answer = await asker.ask(
            [one.question for one in asked],
            signal=None if seconds is None else AbortSignal.timeout(seconds),
            rpc_id=rpc_id,
            approval=approval,
        )
    except UserQuestionError as error:
        if error.code != ErrorCode.ASK_CANCELLED:
            raise
        return [ResumeEntry(interrupt_id=one.interrupt.id, status="cancelled") for one in asked]
    return [_entry(one, item) for one, item in zip(asked, answer.answers, strict=True)]


def _entry(asked: _Asked, item: AskUserQuestionAnswerItem) -> ResumeEntry:
    """The resume entry an answer item gives: `cancelled` when skipped."""
    if not item.selected and item.custom is None and item.value is None:
        return ResumeEntry(interrupt_id=asked.interrupt.id, status="cancelled")
    payload, feedback = asked.payload(item)
    said = {FEEDBACK_KEY: feedback, NOTE_KEY: item.note}
    ours = {key: text for key, text in said.items() if text is not None}
    metadata = {METADATA_KEY: ours} if ours else None
    return ResumeEntry(
        interrupt_id=asked.interrupt.id, status="resolved", payload=payload, metadata=metadata
    )


def _asked(interrupt: Interrupt, calls: Mapping[str, ToolCall], agent: str | None) -> _Asked:
    """How one interrupt is asked (docs/integrations/ag-ui.md)."""
    schema = interrupt.response_schema
    if interrupt.reason == TOOL_CALL:
        return _tool_call(interrupt, calls, agent)
    if interrupt.reason == CONFIRMATION or _type(schema) == "boolean":
        return _confirmation(interrupt, schema)
    if schema is None or (_type(schema) == "string" and "enum" not in schema):
        question = AskUserQuestionItem(
            id=interrupt.id,
            question=interrupt.message or "The agent needs your input.",
            detail=_detail(interrupt),
        )
        return _Asked(
            interrupt, question, lambda item: (item.custom or ", ".join(item.selected), None)
        )
    return _form(interrupt, schema)


def _form(interrupt: Interrupt, schema: Mapping[str, Any]) -> _Asked:
    """A response schema asked as a form, resolved with the object the person filled in."""
    problem = schema_problem(schema)
    if problem is not None:
        raise UserQuestionError(
            f"interrupt {quoted(interrupt.id)} asks for a responseSchema the inbox cannot ask as "
            f"a form ({problem}): answer it in your app",
            ErrorCode.BAD_REQUEST,
        )
    question = AskUserQuestionItem.model_validate(
        {
            "id": interrupt.id,
            "question": interrupt.message or "The agent needs your input.",
            "detail": _detail(interrupt),
            "schema": dict(schema),
        }
    )
    return _Asked(interrupt, question, lambda item: (item.value, None))


def _tool_call(interrupt: Interrupt, calls: Mapping[str, ToolCall], agent: str | None) -> _Asked:
    call = calls.get(interrupt.tool_call_id or "")
    arguments = None if call is None else _arguments(call)
    if call is not None and arguments is not None:
        name = call.function.name
        question = approval_question(
            name, arguments, id=interrupt.id, agent=agent, reason=interrupt.message
        )
        editable = EDITED_ARGS in _properties(interrupt.response_schema)
        approval: Approval | None = approval_of(name, arguments, agent=agent, editable=editable)
    else:
        question = _yes_no(interrupt, ALLOW, DENY, "Run this tool call.", "Do not run it.")
        approval = None
    boolean = _type(interrupt.response_schema) == "boolean"

    def payload(item: AskUserQuestionAnswerItem) -> tuple[Any, str | None]:
        decision = approval_decision(item)
        if boolean:
            return decision.allowed, decision.feedback
        payload: dict[str, Any] = {"approved": decision.allowed}
        if decision.edited is not None:
            payload[EDITED_ARGS] = decision.edited
        return payload, decision.feedback

    return _Asked(interrupt, question, payload, approval)


def _confirmation(interrupt: Interrupt, schema: Mapping[str, Any] | None) -> _Asked:
    properties = (schema or {}).get("properties")
    named = None
    if _type(schema) == "object" and isinstance(properties, Mapping) and len(properties) == 1:
        [(named, kind)] = properties.items()
        if _type(kind) != "boolean":
            named = None
    if schema is not None and _type(schema) != "boolean" and named is None:
        raise UserQuestionError(
            f"interrupt {quoted(interrupt.id)} asks to confirm with a responseSchema of "
            f"{json.dumps(schema)[:200]}; the inbox answers a confirmation with a boolean, "
            "or an object of one boolean",
            ErrorCode.BAD_REQUEST,
        )
    question = _yes_no(interrupt, YES, NO, None, None)

    def payload(item: AskUserQuestionAnswerItem) -> tuple[Any, str | None]:
        yes = item.custom is None and item.selected == [YES]
        return (yes if named is None else {named: yes}), item.custom

    return _Asked(interrupt, question, payload)


def _yes_no(
    interrupt: Interrupt, yes: str, no: str, yes_text: str | None, no_text: str | None
) -> AskUserQuestionItem:
    return AskUserQuestionItem(
        id=interrupt.id,
        question=interrupt.message or "Go ahead?",
        detail=_detail(interrupt),
        options=[
            AskUserQuestionOption(label=yes, description=yes_text),
            AskUserQuestionOption(label=no, description=no_text),
        ],
    )


def _detail(interrupt: Interrupt) -> str | None:
    """What the interrupt's metadata says for people (`detail`, when a string)."""
    detail = (interrupt.metadata or {}).get("detail")
    return detail if isinstance(detail, str) and detail.strip() else None


def _arguments(call: ToolCall) -> dict[str, Any] | None:
    """A tool call's arguments as an object, `None` when they are not one (kept as written)."""
    try:
        arguments = json.loads(call.function.arguments or "{}")
    except ValueError:
        return None
    return arguments if isinstance(arguments, dict) else None


def _properties(schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    properties = None if schema is None else schema.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _type(schema: Mapping[str, Any] | None) -> str | None:
    kind = None if schema is None else schema.get("type")
    return kind if isinstance(kind, str) else None


def _seconds_left(interrupts: Sequence[Interrupt], now: datetime) -> float | None:
    """Seconds until the earliest `expiresAt`; `None` when none has one that reads as a date
    (AG-UI: such an interrupt looks permanently unexpired).

    Raises:
        UserQuestionError: `ASK_TIMED_OUT` when one has expired already.
    """
    left: float | None = None
    for interrupt in interrupts:
        if not interrupt.expires_at:
            continue
        try:
            at = datetime.fromisoformat(interrupt.expires_at.replace("Z", "+00:00"))
        except ValueError:
            logger.warning(
                "interrupt %s: expiresAt %r is not a date", interrupt.id, interrupt.expires_at
            )
            continue
        at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
        seconds = (at - now).total_seconds()
        if seconds <= 0:
            raise UserQuestionError(
                f"interrupt {quoted(interrupt.id)} expired at {interrupt.expires_at}; a run "
                "cannot be resumed past an interrupt's expiry",
                ErrorCode.ASK_TIMED_OUT,
            )
        left = seconds if left is None else min(left, seconds)
    return left
