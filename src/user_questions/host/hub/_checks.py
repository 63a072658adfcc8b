"""The request checks: what an ask must be before it is stored, what a response must be before
it settles anything, and what each is refused with (a stable code, a message that says why)."""

from __future__ import annotations

from collections.abc import Sequence

from user_questions._checks import check_answer, check_request, quoted
from user_questions._reading.text import text_problem
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import (
    MAX_FRAME_BYTES,
    MAX_ID_LENGTH,
    Approval,
    ClientResponse,
    ErrorResult,
    Origin,
    Receipt,
)
from user_questions.host.hub._requests import Asking
from user_questions.host.stores import Settlement, StoredQuestion
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem

__all__ = [
    "ACCEPTED",
    "check_frame_size",
    "check_same_request",
    "checked_ask",
    "not_pending",
    "settlement_of",
]

ACCEPTED = Receipt(accepted=True)
"""The receipt of every answer that won (a frozen model: one serves them all)."""


def not_pending(message: str) -> Receipt:
    """The receipt of a response to no pending request (or one it may not see)."""
    return Receipt(accepted=False, reason="not-pending", message=message)


def checked_ask(
    rpc_id: str,
    session_id: str,
    origin: Origin | None,
    questions: Sequence[AskUserQuestionItem],
    approval: Approval | None,
) -> tuple[AskUserQuestionItem, ...]:
    """The ask's questions, once its ids, origin and questions pass the checks.

    Raises:
        UserQuestionError: `BAD_REQUEST` for an id or an origin that is not text of a usable
            length, or an approval with more than one question; the request checks of
            `ask()` for the questions.
    """
    _check_id("rpcId", rpc_id)
    _check_id("sessionId", session_id)
    _check_origin(origin)
    checked = tuple(questions)
    check_request(checked, None, None, None)
    if approval is not None and len(checked) != 1:
        raise UserQuestionError(
            f"an approval goes with exactly one question, its card; got {len(checked)}",
            ErrorCode.BAD_REQUEST,
        )
    return checked


def check_same_request(known: StoredQuestion, asking: Asking) -> None:
    """Refuse a re-attachment under an rpcId its asker used for a different request (an
    approval's card is the host's: the call it approves is compared instead)."""
    same = known.session_id == asking.session_id and known.approval == asking.approval
    if same and asking.approval is None:
        same = known.questions == asking.questions
    if not same:
        raise UserQuestionError(
            f"rpcId {quoted(asking.rpc_id)} already names another request; use a new rpcId",
            ErrorCode.BAD_REQUEST,
        )


def check_frame_size(frame: str) -> None:
    """Refuse a request whose `question/requested` frame no page could be sent."""
    size = len(frame.encode("utf-8"))
    if size > MAX_FRAME_BYTES:
        raise UserQuestionError(
            f"this request makes a frame of {size} bytes, more than the {MAX_FRAME_BYTES} a frame "
            "may hold; shorten its details or split it",
            ErrorCode.REQUEST_TOO_LARGE,
        )


def settlement_of(
    record: StoredQuestion,
    response: ClientResponse,
    via: Surface,
    by: str | None,
    channel: str | None,
) -> Settlement:
    """What a response settles the request as, or `UserQuestionError` when it breaks the rules
    (a digest that is not the stored card's among them: the card changed since it was shown)."""
    seen = response.digest
    if seen is not None and seen != record.card:
        raise UserQuestionError("the card changed since it was shown", ErrorCode.BAD_ANSWER)
    result = response.result
    if isinstance(result, ErrorResult):
        if result.error.code != "cancelled":
            raise UserQuestionError(
                f"error code {quoted(result.error.code)} is not understood; "
                'dismiss with code "cancelled"',
                ErrorCode.BAD_ANSWER,
            )
        return Settlement(Outcome.DISMISSED, via=via, by=by, channel=channel, seen=seen)
    named = result.value.session_id
    if named is not None and named != record.session_id:
        raise UserQuestionError(
            f"question {quoted(record.rpc_id)} belongs to session {quoted(record.session_id)}, "
            f"not {quoted(named)}",
            ErrorCode.BAD_ANSWER,
        )
    answer = check_answer(record.questions, result.value.answer, record.approval)
    return Settlement(Outcome.ANSWERED, answer, via, by, channel, seen=seen)


def _check_id(what: str, value: str) -> None:
    if not value or len(value) > MAX_ID_LENGTH:
        raise UserQuestionError(
            f"{what} must be 1 to {MAX_ID_LENGTH} characters, got {len(value)}",
            ErrorCode.BAD_REQUEST,
        )
    problem = text_problem(value)
    if problem is not None:
        raise UserQuestionError(f"{what} {problem}", ErrorCode.BAD_REQUEST)


def _check_origin(origin: Origin | None) -> None:
    for name in ("client", "cwd"):
        value = None if origin is None else getattr(origin, name)
        problem = None if value is None else text_problem(value)
        if problem is not None:
            raise UserQuestionError(f"origin.{name} {problem}", ErrorCode.BAD_REQUEST)
