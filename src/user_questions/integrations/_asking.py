"""How the framework adapters ask: several things at once, each within its own timeout, and
approval cards."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio

from user_questions.abort import AbortSignal
from user_questions.approvals import (
    ApprovalDecision,
    approval_of,
    approval_question,
    decision_for,
)
from user_questions.asker import Asker

__all__ = ["all_or_none", "decide", "timeout_signal"]

T = TypeVar("T")


def timeout_signal(seconds: float | None) -> AbortSignal | None:
    """A fresh signal bounding one ask to `seconds`; `None` waits until answered."""
    return None if seconds is None else AbortSignal.timeout(seconds)


async def all_or_none(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Run `calls` concurrently and return their results in order; the first failure cancels
    the others (their questions are withdrawn) and is raised as it is, not in a group."""
    results: dict[int, T] = {}
    failures: list[Exception] = []

    async def run(index: int, call: Callable[[], Awaitable[T]]) -> None:
        try:
            results[index] = await call()
        except Exception as error:
            failures.append(error)
            group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(run, index, call)
    if failures:
        raise failures[0]
    return [results[index] for index in range(len(calls))]


async def decide(
    asker: Asker,
    tool_name: str,
    arguments: Mapping[str, Any],
    *,
    agent: str | None = None,
    always: str | None = None,
    question_timeout: float | None = None,
) -> ApprovalDecision:
    """Ask a person to approve one call with the shared approval card, and read the decision
    as every gate reads it (`approvals.decision_for`). Without `question_timeout` the card waits
    `approvals.DECISION_TIMEOUT` at most, as every approval card an `Asker` asks.

    Raises:
        UserQuestionError: `ASK_CANCELLED` when the card was dismissed, `ASK_TIMED_OUT`,
            `BAD_ANSWER` for an answer the card does not offer, or the asker's other codes.
            Nothing is approved on any failure.
    """
    card = approval_question(tool_name, arguments, agent=agent, always=always)
    answer = await asker.ask(
        [card],
        signal=timeout_signal(question_timeout),
        approval=approval_of(tool_name, arguments, agent=agent),
    )
    return decision_for(card, answer)
