"""The intake: a new request made ready to store, as the host keeps it.

An approval's card is written by the host from the call it approves (the asker's own words only
at the end, fenced), with the rules' note when they could not read the call, and is settled
already when a rule decides it, naming the rules' version the decision was made at (the store
checks it as it commits); the details are rendered once, off the event loop, within a budget; the
request is timed on the hub's clock; and the page frame of a request left pending is written once
for its first broadcast and checked to fit in a frame (a request a rule settles is never shown
pending, so it has none).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

import anyio

from user_questions._checks import check_request
from user_questions._hooks.approval_card import host_card_fields
from user_questions.host._frame_text import requested_frame
from user_questions.host.hub._checks import check_frame_size
from user_questions.host.hub._requests import Asking
from user_questions.host.hub._timetable import Clock
from user_questions.host.markdown import render_details
from user_questions.host.rules import InboxRules, Match, Verdict
from user_questions.host.stores import Escalation, NewQuestion
from user_questions.types import AskUserQuestionItem

__all__ = ["RENDER_WORKERS", "Intake", "New", "Timing"]

RENDER_WORKERS = 2
"""Worker threads rendering details at once; more requests wait for one (within their budget)."""


@dataclass(frozen=True, slots=True)
class Timing:
    """An asker token's timers and quorum for a new request (`Hub.submit`'s `deadline`,
    `escalate`, `remind`, `approvals`)."""

    deadline: float | None = None
    escalate: Sequence[Escalation] = ()
    remind: int | None = None
    approvals: int = 1


@dataclass(frozen=True, slots=True)
class New:
    """A new request ready to store, and either the rule that decides it or its page frame."""

    question: NewQuestion
    frame: str | None
    """Its `question/requested` frame, when no rule decides it."""
    decided: Match | None


class Intake:
    """Makes new requests ready to store for one hub."""

    def __init__(self, rules: InboxRules, clock: Clock) -> None:
        self._rules = rules
        self._clock = clock
        self._rendering = anyio.CapacityLimiter(RENDER_WORKERS)

    async def new(
        self,
        asking: Asking,
        stored_id: str,
        timing: Timing,
        *,
        shown: bool,
        verdict: Verdict | None,
    ) -> New:
        """The request `asking` asked, as it is stored under `stored_id`; recorded as shown
        the moment it is stored when `shown` (pages are connected: one write, not two) and no
        rule settles it. `verdict` is what the rules made of its approval (`None`: a plain
        question, or no rule may decide it: a person is asked)."""
        approval, questions = asking.approval, asking.questions
        if approval is not None:
            fields = host_card_fields(
                approval.tool,
                approval.input,
                questions[0].model_dump(mode="json", exclude_none=True),
                agent=approval.agent,
                note=None if verdict is None else verdict.unreadable,
            )
            questions = (AskUserQuestionItem.model_validate(fields),)
            check_request(questions, None, None, None)
        decided = None if verdict is None else self._rules.settlement(verdict, questions)
        approvals = timing.approvals
        if decided is not None and decided[0].rule.rule.approvals > 1:
            # An allow rule with a quorum asks that many people instead of allowing outright.
            approvals = max(approvals, decided[0].rule.rule.approvals)
            decided = None
        rendered = await render_details(questions, self._rendering)
        now = self._clock.now()
        deadline = timing.deadline
        question = NewQuestion(
            stored_id,
            sys.intern(asking.session_id),  # one string for an agent's many requests
            questions,
            now,
            asking.asked_by,
            now if shown and decided is None else None,
            asking.origin,
            rendered,
            asking.audience,
            approval,
            None if deadline is None else now + timedelta(seconds=deadline),
            None if decided is None else decided[1],
            escalate=tuple(timing.escalate),
            remind=timing.remind,
            asker_rpc_id=None if stored_id == asking.rpc_id else asking.rpc_id,
            approvals=approvals,
            rules_version=None if verdict is None else verdict.version,
            rules_used=() if decided is None else decided[0].ids,
        )
        if decided is not None:
            return New(question, None, decided[0])
        frame = requested_frame(question, self._rules.offer(question))
        check_frame_size(frame)
        return New(question, frame, None)
