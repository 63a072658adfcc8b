"""How an ask waiting on a host ends, on its asker's side: settled by the host, or withdrawn.

`RemoteProvider` (a client of the host, `providers/remote.py`) and the host's in-process provider
(`host/in_process.py`) end their asks the same way, so they share this module, which sits below
both: the host never imports a client.

- `withdraw_reason(signal)`: why a cancelled ask gave up, as the `withdraw` frame says it, and
  `withdraw_note(signal)`: the words its abort gave, if any, which the host keeps in the history.
- `WITHDRAW_TIMEOUT`: how long a cancelled ask waits for its withdrawal to be recorded.
- `settled_answer(outcome, answer)`: what a settled request gives its asker.
"""

from __future__ import annotations

import time

from user_questions._checks import TIMED_OUT_MESSAGE, abort_error, cancelled_error
from user_questions._reading.text import deliverable
from user_questions.abort import AbortSignal, is_timeout
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import MAX_NOTE_LENGTH, WithdrawReason
from user_questions.outcomes import Outcome
from user_questions.types import AskUserQuestionAnswer

__all__ = ["WITHDRAW_TIMEOUT", "settled_answer", "withdraw_note", "withdraw_reason"]

WITHDRAW_TIMEOUT = 5.0
"""Seconds a cancelled ask waits for the host to confirm its withdrawal before giving up."""
_CLOCK_SLACK = 0.01
"""Seconds before a signal's deadline at which a cancellation counts as its timeout: the event
loop may fire the deadline's cancel scope a hair before the signal reads its own clock."""


def withdraw_reason(signal: AbortSignal | None) -> WithdrawReason:
    """Why a cancelled ask gave up: `timed-out` when `signal` timed out (or is at its deadline),
    `aborted` when it aborted otherwise, `cancelled` when it did not abort at all."""
    if signal is None:
        return "cancelled"
    if signal.aborted:
        return "timed-out" if is_timeout(signal.reason) else "aborted"
    deadline = signal.deadline
    if deadline is not None and time.monotonic() >= deadline - _CLOCK_SLACK:
        return "timed-out"
    return "cancelled"


def withdraw_note(signal: AbortSignal | None) -> str | None:
    """The note a cancelled ask's withdrawal carries: the reason `signal` was aborted with, when
    it is text (`controller.abort("answered in the editor")`), made fit for the `withdraw`
    frame (no NUL, lone surrogates escaped, at most `MAX_NOTE_LENGTH` characters); else `None`."""
    reason = None if signal is None else signal.reason
    if not isinstance(reason, str):
        return None
    text = deliverable(reason.replace("\x00", ""))
    if len(text) > MAX_NOTE_LENGTH:
        text = text[: MAX_NOTE_LENGTH - 1] + "…"
    return text or None


def settled_answer(outcome: Outcome, answer: AskUserQuestionAnswer | None) -> AskUserQuestionAnswer:
    """What a settled request gives its asker: the answer, or the error its outcome means.

    Raises:
        UserQuestionError: `ASK_CANCELLED` when a person dismissed it, `ASK_TIMED_OUT` when its
            asker's timeout ran out, `ASK_ABORTED` when its asker withdrew it otherwise, and
            `BAD_ANSWER` for an answered request without its answer.
    """
    if outcome == Outcome.ANSWERED:
        if answer is None:
            raise UserQuestionError(
                "the host reported an answer without the answer itself", ErrorCode.BAD_ANSWER
            )
        return answer
    if outcome == Outcome.DISMISSED:
        raise cancelled_error()
    if outcome == Outcome.TIMED_OUT:
        raise UserQuestionError(TIMED_OUT_MESSAGE, ErrorCode.ASK_TIMED_OUT)
    raise abort_error(None)
