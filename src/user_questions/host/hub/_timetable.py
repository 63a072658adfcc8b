"""The timetable: when each pending request's deadline passes and its next escalation step or
reminder is due, on a clock that can be replaced (`Clock`: the real time by default, one a
test moves by hand).

A request's times are stored with it (asked, deadline, steps fired, last reminder), so a host
that starts, or another node, times them again from the record; which host fires each is the
store's conditional update's to decide (`Timers.fire`).
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import anyio

from user_questions.errors import UserQuestionError
from user_questions.host.stores import Escalation, QuestionStore, StoredQuestion

__all__ = ["RETRY_AFTER", "Clock", "Routed", "SystemClock", "Timers", "routing_moment"]

logger = logging.getLogger("user_questions.host")

RETRY_AFTER = timedelta(seconds=1)
"""How soon a timer is tried again when the store could not be written."""

Due = Callable[[str], Coroutine[Any, Any, None]]
"""What to do with a request whose time has come, by rpcId."""
Routed = tuple[StoredQuestion | None, tuple[str, ...]]
"""A step or reminder fired: the request as this host wrote it (`None`: another host won it)
and whom it was routed to (a step's target; a reminder's audience, empty for everyone)."""


class Clock(Protocol):
    """The hub's time: when a request is asked, and when its timers are due."""

    def now(self) -> datetime:
        """The time now, in UTC."""
        ...

    async def sleep_until(self, moment: datetime | None, woken: anyio.Event) -> None:
        """Return once `moment` has come (never, for `None`) or `woken` is set, whichever is
        first."""
        ...


class SystemClock:
    """The real time (`datetime.now`), slept on with anyio's timeouts."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, moment: datetime | None, woken: anyio.Event) -> None:
        wait = math.inf if moment is None else (moment - self.now()).total_seconds()
        with anyio.move_on_after(max(wait, 0.0)):
            await woken.wait()


class _Timetable:
    """When to look at which pending request again: a heap of (when, rpcId), and a loop that
    hands each to a function as its time comes (a store that fails: tried again shortly)."""

    def __init__(self, what: str, clock: Clock) -> None:
        self._what = what
        self._clock = clock
        self._heap: list[tuple[datetime, str]] = []
        self._added = anyio.Event()

    def add(self, at: datetime, rpc_id: str) -> None:
        heapq.heappush(self._heap, (at, rpc_id))
        self._added.set()

    async def run(self, due: Due) -> None:
        while True:
            now = self._clock.now()
            while self._heap and self._heap[0][0] <= now:
                _, rpc_id = heapq.heappop(self._heap)
                try:
                    await due(rpc_id)
                except UserQuestionError as error:  # the store: try again shortly
                    logger.warning("could not %s question %s: %s", self._what, rpc_id, error)
                    self.add(now + RETRY_AFTER, rpc_id)
                    break
            self._added = anyio.Event()
            await self._clock.sleep_until(self._heap[0][0] if self._heap else None, self._added)


class Timers:
    """A hub's two timetables, deadlines and routing (escalation steps and reminders), on one
    clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._deadlines = _Timetable("time out", clock)
        self._routing = _Timetable("escalate or remind of", clock)
        self._routing_at: dict[str, datetime] = {}
        """When each pending request's next step or reminder is timed for."""

    def track(self, record: StoredQuestion) -> None:
        """Time a request this host has just learnt is pending: its deadline, its routing."""
        if record.deadline_at is not None:
            self._deadlines.add(record.deadline_at, record.rpc_id)
        self.reschedule(record)

    def reschedule(self, record: StoredQuestion) -> None:
        """Time the request's next step or reminder, when it has one not timed yet."""
        at = _next_routing(record)
        if at is not None and at != self._routing_at.get(record.rpc_id):
            self._routing_at[record.rpc_id] = at
            self._routing.add(at, record.rpc_id)

    def forget(self, rpc_id: str) -> None:
        """Stop remembering a settled request's routing time."""
        self._routing_at.pop(rpc_id, None)

    async def run(self, time_out: Due, route: Due) -> None:
        """Hand each request to `time_out` at its deadline and to `route` when a step or
        reminder is due; until cancelled."""
        async with anyio.create_task_group() as timing:
            timing.start_soon(self._deadlines.run, time_out)
            timing.start_soon(self._routing.run, route)

    async def fire(self, store: QuestionStore, record: StoredQuestion) -> Routed | None:
        """Write the request's step or reminder that is due now, if this host wins it (the
        store's conditional update decides); `None` when none is due (an earlier time, since
        moved on: the current one is in the timetable)."""
        now = self.clock.now()
        step = _due_step(record, now)
        if step is not None:
            routed = await store.escalate(record.rpc_id, record.escalated)
            whom: tuple[str, ...] = (step.to,)
        elif record.remind is not None and _reminder_at(record, record.remind) <= now:
            routed = await store.remind(record.rpc_id, record.reminded_at, now)
            whom = () if routed is None else routed.audience
        else:
            return None
        self.forget(record.rpc_id)
        return routed, whom


def routing_moment(record: StoredQuestion) -> tuple[int, datetime]:
    """How far a pending record's routing has got (steps fired, last reminder): a record read
    back replaces the cached one only when it is further on."""
    return (record.escalated, record.reminded_at or record.asked_at)


def _due_step(record: StoredQuestion, now: datetime) -> Escalation | None:
    """The request's next escalation step if its time has come."""
    if record.escalated >= len(record.escalate):
        return None
    step = record.escalate[record.escalated]
    return step if record.asked_at + timedelta(seconds=step.after) <= now else None


def _reminder_at(record: StoredQuestion, every: int) -> datetime:
    return (record.reminded_at or record.asked_at) + timedelta(seconds=every)


def _next_routing(record: StoredQuestion) -> datetime | None:
    """When the request's next escalation step or reminder is due, if it has any."""
    times = []
    if record.escalated < len(record.escalate):
        times.append(record.asked_at + timedelta(seconds=record.escalate[record.escalated].after))
    if record.remind is not None:
        times.append(_reminder_at(record, record.remind))
    return min(times, default=None)
