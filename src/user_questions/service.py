"""The seam itself: a request, the provider protocol, and `ctx.user_questions`.

A tool or a permission plugin calls `ask()`; one UI surface (terminal, web host, a bridge, a test
script) registers the provider that shows the questions to a human. The service checks the request
where the mistake is, races the provider against the request's abort signal, checks the answer, and
emits events so notifications and audit logs can follow every question.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import anyio

from user_questions._checks import abort_error, check_answer, check_request
from user_questions.abort import AbortSignal
from user_questions.agents import Agent
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval
from user_questions.kernel import Context, Service
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = [
    "REQUESTED_EVENT",
    "RESOLVED_EVENT",
    "AskUserQuestionRequest",
    "UserQuestionProvider",
    "UserQuestionService",
]

REQUESTED_EVENT = "user-questions/requested"
RESOLVED_EVENT = "user-questions/resolved"

_OUTCOMES: dict[str, str] = {
    ErrorCode.ASK_CANCELLED: "cancelled",
    ErrorCode.ASK_ABORTED: "aborted",
    ErrorCode.ASK_TIMED_OUT: "timed-out",
}


@dataclass(eq=False, slots=True)
class AskUserQuestionRequest:
    """A request for a human answer; a runtime object, handed to the provider as it is."""

    questions: Sequence[AskUserQuestionItem]
    """The questions, shown as one flow; each answer item echoes its question's id."""
    agent: Agent | None = None
    """The exact live calling agent, when the request comes from an agent's tool call."""
    signal: AbortSignal | None = None
    """Aborts the ask: the provider withdraws its prompt and the ask fails with a typed error."""
    approval: Approval | None = None
    """What the request approves, when it is an approval card (`user_questions.approvals`); a
    host may settle it by a rule."""


@runtime_checkable
class UserQuestionProvider(Protocol):
    """A surface that shows questions to a human and returns the answer.

    `ask` shows every question of `request` and returns one answer item per question id, built
    from the option labels and the text the human gave; a question the human skipped is
    `{id, selected: []}`. When the human dismisses the questions it raises `ASK_CANCELLED`. It
    must withdraw its prompt when its task is cancelled, which is how the service aborts it. It
    never invents an answer: no default choice, no consent on a timeout.
    """

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer: ...


class UserQuestionService(Service):
    """`ctx.user_questions`: one active provider and `ask()`."""

    provides = "user_questions"

    def __init__(self, ctx: Context, config: Any = None) -> None:
        super().__init__(ctx, config)
        self._provider: UserQuestionProvider | None = None
        self._registration: object = None

    @property
    def provider(self) -> UserQuestionProvider | None:
        """The registered provider, if any."""
        return self._provider

    def register_provider(self, provider: UserQuestionProvider) -> Callable[[], None]:
        """Make `provider` the one that answers; returns its idempotent disposer.

        The registration belongs to the fiber of the context the service was reached through, so
        unloading or hot-reloading the plugin that registered it unregisters it. A stale disposer
        never removes a later registration.

        Raises:
            UserQuestionError: `DUPLICATE_PROVIDER` when one is registered; the first one stays.
        """
        if self._provider is not None:
            raise UserQuestionError(
                "a user-questions provider is already registered", ErrorCode.DUPLICATE_PROVIDER
            )

        def register() -> Callable[[], None]:
            token = object()
            self._provider, self._registration = provider, token

            def unregister() -> None:
                if self._registration is token:
                    self._provider, self._registration = None, None

            return unregister

        return self.caller.effect(register)

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Ask the active provider and wait for the human's answer.

        Checks, in order: an aborted signal (`ASK_ABORTED`, or `ASK_TIMED_OUT` for a timeout); no
        questions (`EMPTY_QUESTIONS`); a supplied agent that is not the exact live instance
        (`CALLER_NOT_LIVE`) or is owned by another live agent (`DELEGATED_CALLER`); an intent
        whose approve label names no option, or that lacks its detail (`BAD_INTENT`); a repeated
        question id or option label (`BAD_QUESTION`); the limits of `user_questions.limits`
        (`TOO_MANY_QUESTIONS`, `LIMIT_EXCEEDED`) and a text holding a NUL or a lone surrogate
        (`BAD_QUESTION`); no provider (`NO_PROVIDER`).

        While the provider waits, an abort of `request.signal` withdraws the prompt and raises
        `ASK_ABORTED` or `ASK_TIMED_OUT` (the provider's error as `__cause__`; a provider
        `UserQuestionError` such as `ASK_CANCELLED` is raised as it is). Cancelling the awaiting
        task cancels the provider's wait too. Any other provider error propagates unchanged.

        Returns:
            The answer, with one item per question in question order.

        Raises:
            UserQuestionError: with one of the codes above, `ASK_CANCELLED` when the human
                dismissed the questions, or `BAD_ANSWER` when the provider's answer breaks the
                rules of the vocabulary.
        """
        signal = request.signal
        check_request(request.questions, request.agent, signal, self.ctx.get("agents"))
        provider = self._provider
        if provider is None:
            raise UserQuestionError(
                "no user-questions provider is registered", ErrorCode.NO_PROVIDER
            )
        self.ctx.emit(REQUESTED_EVENT, {"request": request})
        try:
            if signal is None:
                answer = await provider.ask(request)
            else:
                answer = await _ask_until_aborted(provider, request, signal)
            answer = check_answer(request.questions, answer, request.approval)
        except anyio.get_cancelled_exc_class():
            self._resolved(request, "aborted", error=abort_error(None))
            raise
        except UserQuestionError as error:
            self._resolved(request, _OUTCOMES.get(error.code, "failed"), error=error)
            raise
        except Exception as error:
            self._resolved(request, "failed", error=error)
            raise
        except BaseException as error:  # KeyboardInterrupt, SystemExit: the ask was cut short
            self._resolved(request, "aborted", error=error)
            raise
        self._resolved(request, "answered", answer=answer)
        return answer

    def _resolved(
        self,
        request: AskUserQuestionRequest,
        outcome: str,
        *,
        answer: AskUserQuestionAnswer | None = None,
        error: BaseException | None = None,
    ) -> None:
        event: dict[str, object] = {"request": request, "outcome": outcome}
        if answer is not None:
            event["answer"] = answer
        else:
            event["error"] = error
        self.ctx.emit(RESOLVED_EVENT, event)


async def _ask_until_aborted(
    provider: UserQuestionProvider, request: AskUserQuestionRequest, signal: AbortSignal
) -> AskUserQuestionAnswer:
    """Await the provider inside a cancel scope that the signal's abort (or deadline) cancels."""
    scope = anyio.CancelScope()
    if signal.deadline is not None:
        scope.deadline = anyio.current_time() + (signal.deadline - time.monotonic())
    remove = signal.add_listener(scope.cancel)
    try:
        with scope:
            answer = await provider.ask(request)
    except UserQuestionError:
        raise
    except Exception as error:
        if signal.aborted or scope.cancel_called:
            _expire_if_deadline(signal, scope)
            raise abort_error(signal, cause=error) from error
        raise
    finally:
        remove()
    if scope.cancel_called:
        _expire_if_deadline(signal, scope)
        raise abort_error(signal)
    return answer


def _expire_if_deadline(signal: AbortSignal, scope: anyio.CancelScope) -> None:
    # The scope's deadline is the signal's, and can fire a hair before the signal reads its own
    # clock, or where no timer of the signal runs: the signal times out now, telling its listeners.
    if scope.cancelled_caught:
        signal._expire()
