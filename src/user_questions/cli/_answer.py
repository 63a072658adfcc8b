"""`uq answer`: answer a question waiting on a host, at this terminal, as `uq ask` asks it.

Extras `web` and `terminal`. The request comes from the host's `GET /api/pending` (the oldest, the
one named by its rpcId, or one the person picks with `--pick`) and is asked with `TerminalProvider`:
the same surfaces, keys and flow as `uq ask` (Esc dismisses). The answer or dismissal goes back
through `POST /api/respond` with `X-UQ-Surface: terminal`, under the page's rules: the first answer
wins, an answer that breaks the rules is refused and the question stays pending. While the question
is shown, the host's page WebSocket says whether it settles elsewhere (another browser, another
terminal, its asker gave up); the prompt is then withdrawn and nothing is sent.

Exit statuses (docs/notify.md): 0 answered, 1 failed otherwise (the host cannot be reached, the
token is refused), 2 bad input, 3 dismissed, 4 nothing to answer (no question waits, or none was
picked), 5 not pending (settled elsewhere first, or no such rpcId), 6 the host refused the answer
(`bad-response`), 130 interrupted, 128+N stopped by signal N; after any status but 0 and 3,
nothing was recorded.

The lines a person reads (the heading, the picker, what became of the answer) follow the
terminal's language as the prompt does; the error messages stay English (docs/translating.md).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Annotated

import anyio
from cyclopts import Parameter

from user_questions._checks import quoted
from user_questions._languages import N_, gettext, ngettext
from user_questions.cli._host_client import (
    CA_HELP,
    URL_HELP,
    HostAddress,
    HostClient,
    Settled,
    chosen_url,
    host_address,
)
from user_questions.cli._pending import (
    TOKEN_HELP,
    age,
    asked_times,
    from_line,
    quorum_text,
    summary,
)
from user_questions.cli._stopping import StoppedError, until_stopped
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import (
    AnswerResult,
    AnswerValue,
    ClientResponse,
    ErrorResult,
    QuestionRequestedFrame,
    ResponseError,
)
from user_questions.outcomes import Outcome
from user_questions.providers.terminal import TerminalProvider
from user_questions.service import AskUserQuestionRequest
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionOption

__all__ = [
    "EXIT_ANSWERED",
    "EXIT_BAD_INPUT",
    "EXIT_DISMISSED",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING",
    "EXIT_NOT_PENDING",
    "EXIT_REFUSED",
    "answer",
]

EXIT_ANSWERED = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_DISMISSED = 3
EXIT_NOTHING = 4
EXIT_NOT_PENDING = 5
EXIT_REFUSED = 6
EXIT_INTERRUPTED = 130

_BAD_INPUT = frozenset({ErrorCode.BAD_REQUEST, ErrorCode.BAD_TOKEN})
_ELSEWHERE: dict[Settled, str] = {
    Outcome.ANSWERED: N_("question {rpc_id} was answered elsewhere; nothing was sent"),
    Outcome.DISMISSED: N_("question {rpc_id} was dismissed elsewhere; nothing was sent"),
    Outcome.WITHDRAWN: N_("question {rpc_id} was withdrawn by its asker; nothing was sent"),
    Outcome.TIMED_OUT: N_("question {rpc_id} timed out for its asker; nothing was sent"),
    "gone": N_("question {rpc_id} is no longer pending; nothing was sent"),
}
_PICK_ID = "request"


class _Finished(Exception):
    """Ends the command early: the line for stderr and the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def answer(
    rpc_id: str | None = None,
    /,
    *,
    url: Annotated[str | None, Parameter(env_var="UQ_URL", help=URL_HELP)] = None,
    token: Annotated[str | None, Parameter(help=TOKEN_HELP)] = None,
    ca: Annotated[str | None, Parameter(help=CA_HELP)] = None,
    pick: Annotated[bool, Parameter(negative="")] = False,
    host: Annotated[str | None, Parameter(show=False)] = None,
) -> int:
    """Answer a question waiting on a host, here, with the keys of `uq ask`.

    Exit status: 0 answered, 1 failed, 2 bad input, 3 dismissed, 4 nothing to answer,
    5 not pending (settled elsewhere), 6 answer refused, 130 interrupted.

    Parameters
    ----------
    rpc_id
        The request to answer (as `uq pending` lists it). Default: the oldest one waiting.
    pick
        Choose the request from a list of those waiting.
    host
        The old name of --url (deprecated).
    """
    try:
        address = host_address(chosen_url("answer", url, host), token, ca)
        provider = TerminalProvider()
        message, status = anyio.run(until_stopped, lambda: _answer(address, rpc_id, pick, provider))
        return _say(message, status)
    except _Finished as finished:
        return _say(finished.message, finished.status)
    except UserQuestionError as error:
        return _say(error.message, EXIT_BAD_INPUT if error.code in _BAD_INPUT else EXIT_FAILED)
    except StoppedError as stop:
        stopped = gettext("stopped by {signal}; nothing was sent").format(signal=stop.name)
        return _say(stopped, 128 + stop.signum)
    except KeyboardInterrupt:
        return _say(gettext("interrupted; nothing was sent"), EXIT_INTERRUPTED)
    except ModuleNotFoundError as error:  # the terminal extra, with the line that installs it
        return _say(str(error), EXIT_FAILED)


def _say(message: str, status: int) -> int:
    print(f"uq answer: {message}", file=sys.stderr)
    return status


async def _answer(
    address: HostAddress, rpc_id: str | None, pick: bool, provider: TerminalProvider
) -> tuple[str, int]:
    """Choose, show, send; what to say and the exit status."""
    async with HostClient(address) as client:
        listed = await client.pending()
        unreadable = dict(listed.unreadable)
        if rpc_id is not None and rpc_id in unreadable:
            why = f"{unreadable[rpc_id]}; answer it on the host's page"
            raise _Finished(f"question {quoted(rpc_id)} cannot be shown here: {why}", EXIT_REFUSED)
        waiting = listed.frames
        frame = await _choose(waiting, rpc_id, pick, provider)
        print(_heading(frame, waiting), file=sys.stderr, flush=True)
        given = await _shown(client, frame.rpc_id, frame.payload.questions, provider)
        if isinstance(given, str):
            return gettext(_ELSEWHERE[given]).format(rpc_id=frame.rpc_id), EXIT_NOT_PENDING
        receipt = await client.respond(_response(frame, given))
    if receipt.accepted and given is None:
        return gettext("dismissed; the asker is told so (ASK_CANCELLED)"), EXIT_DISMISSED
    if receipt.accepted and receipt.message is not None:  # one approval of several needed
        counted = gettext("approval counted: {message}").format(message=receipt.message)
        return counted, EXIT_ANSWERED
    if receipt.accepted:
        return gettext("answer sent"), EXIT_ANSWERED
    if receipt.reason == "not-pending":
        return f"not recorded: {receipt.message}", EXIT_NOT_PENDING
    return f"the host refused the answer: {receipt.message}", EXIT_REFUSED


async def _choose(
    waiting: list[QuestionRequestedFrame],
    rpc_id: str | None,
    pick: bool,
    provider: TerminalProvider,
) -> QuestionRequestedFrame:
    if rpc_id is not None:
        return _by_id(waiting, rpc_id)
    if not waiting:
        raise _Finished(gettext("no question is waiting"), EXIT_NOTHING)
    if not pick or len(waiting) == 1:
        return waiting[0]
    labels = _pick_labels(waiting)
    item = AskUserQuestionItem(
        id=_PICK_ID,
        question=ngettext(
            "{count} request is waiting. Which one do you answer?",
            "{count} requests are waiting. Which one do you answer?",
            len(waiting),
        ).format(count=len(waiting)),
        options=[
            AskUserQuestionOption(label=label, description=_described(frame))
            for label, frame in labels.items()
        ],
    )
    try:
        chosen = await provider.ask(AskUserQuestionRequest([item]))
    except UserQuestionError as error:
        if error.code != ErrorCode.ASK_CANCELLED:
            raise
        chosen = None
    picked = chosen.answers[0] if chosen is not None else None
    if picked is not None and picked.custom:  # an rpcId typed under Other…
        return _by_id(waiting, picked.custom.strip())
    if picked is None or not picked.selected:  # dismissed, or skipped
        raise _Finished(gettext("no request was picked"), EXIT_NOTHING)
    return labels[picked.selected[0]]


def _by_id(waiting: list[QuestionRequestedFrame], rpc_id: str) -> QuestionRequestedFrame:
    for frame in waiting:
        if frame.rpc_id == rpc_id:
            return frame
    raise _Finished(f"no question waiting has rpcId {quoted(rpc_id)}", EXIT_NOT_PENDING)


def _pick_labels(waiting: list[QuestionRequestedFrame]) -> dict[str, QuestionRequestedFrame]:
    """One unique option label per request: its session and first question."""
    labels: dict[str, QuestionRequestedFrame] = {}
    for frame in waiting:
        label = f"{from_line(frame)}: {summary(frame)}"
        while label in labels:
            label += " " + gettext("(again)")
        labels[label] = frame
    return labels


def _described(frame: QuestionRequestedFrame) -> str:
    asked = gettext("asked {age}").format(age=age(frame.asked_at, datetime.now(UTC)))
    return f"{asked} · rpcId {frame.rpc_id}"


def _heading(frame: QuestionRequestedFrame, waiting: list[QuestionRequestedFrame]) -> str:
    others = len(waiting) - 1
    notes = asked_times(frame) + quorum_text(frame)
    asker = gettext("From {asker}").format(asker=from_line(frame) + notes)
    parts = [asker, _described(frame)]
    if others:
        parts.append(gettext("{count} more waiting").format(count=others))
    return " · ".join(parts)


async def _shown(
    client: HostClient,
    rpc_id: str,
    questions: list[AskUserQuestionItem],
    provider: TerminalProvider,
) -> AskUserQuestionAnswer | Settled | None:
    """The person's answer, `None` for a dismissal, or how the request settled elsewhere first
    (the prompt is then withdrawn)."""
    outcome: list[AskUserQuestionAnswer | Settled | BaseException | None] = []
    async with anyio.create_task_group() as group:

        async def prompt() -> None:
            try:
                outcome.append(await provider.ask(AskUserQuestionRequest(questions)))
            except UserQuestionError as error:
                outcome.append(None if error.code == ErrorCode.ASK_CANCELLED else error)
            except (Exception, KeyboardInterrupt) as error:
                outcome.append(error)
            group.cancel_scope.cancel()

        async def watch() -> None:
            outcome.append(await client.settled(rpc_id))
            group.cancel_scope.cancel()

        group.start_soon(watch)
        group.start_soon(prompt)
    given = outcome[0]
    if isinstance(given, BaseException):
        raise given
    return given


def _response(frame: QuestionRequestedFrame, given: AskUserQuestionAnswer | None) -> ClientResponse:
    if given is None:
        return ClientResponse(
            rpc_id=frame.rpc_id,
            result=ErrorResult(
                ok=False, error=ResponseError(code="cancelled", message="dismissed at a terminal")
            ),
            digest=frame.digest,
        )
    value = AnswerValue(session_id=frame.payload.session_id, answer=given)
    return ClientResponse(
        rpc_id=frame.rpc_id, result=AnswerResult(ok=True, value=value), digest=frame.digest
    )
