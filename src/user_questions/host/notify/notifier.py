"""Notifiers: tell people and programs that a question waits or settled, never delaying an ask.

`notifying(notifiers)` is a host task (`create_app(tasks=...)`, `serve(tasks=...)`) that listens to
the hub (`Hub.on_event`) and hands each event to every notifier. A `Notifier` subclass says how one
event is delivered (`WebhookNotifier`, `CommandNotifier`); the base class owns the rules every
notifier shares:

- `notify(event)` is synchronous and never waits: it queues the event in memory, at most
  `capacity` events (`QUEUE_CAPACITY`); beyond that the event is dropped, counted in `dropped`,
  and logged on one line. A dead or slow receiver therefore costs memory up to that bound and
  never time: the ask that caused the event has already moved on.
- Events of one request are delivered in order, one after the other (a lane per rpcId); up to
  `concurrency` requests are delivered at once, so one slow request does not hold up the others.
- When the host stops, queued events get `FLUSH_SECONDS` to go out; the rest are dropped, with a
  log line. Events live only in memory: a host that crashes loses the ones it had not sent.
- Every notifier reports its queue to the host's metrics (`queued`, `delivered`, `failed`,
  `dropped`: `uq_notifier_*{notifier="<target>"}`) while `notifying` runs it.

Only the host that wrote a change reports it (see `Hub.on_event`), so hosts sharing a PostgreSQL
store send every event once between them.
"""

from __future__ import annotations

import abc
import contextlib
import logging
from collections import deque
from collections.abc import Sequence

import anyio

from user_questions._lifecycle.lifetime import AsyncLifetime
from user_questions.host.hub import HostTask, Hub
from user_questions.host.notify.events import HostEvent, event_of
from user_questions.host.notify.telling import Telling
from user_questions.host.stores import StoredQuestion

__all__ = ["FLUSH_SECONDS", "QUEUE_CAPACITY", "Notifier", "notifying"]

logger = logging.getLogger("user_questions.host.notify")

QUEUE_CAPACITY = 1000
"""Events one notifier holds (queued or being delivered); more are dropped and counted."""
FLUSH_SECONDS = 2.0
"""How long queued events may still take to go out when the host stops."""


class Notifier(AsyncLifetime, abc.ABC):
    """Delivers host events somewhere; use as `async with`, which runs its delivery tasks.

    Subclasses implement `deliver` (one event, with any retries of its own) and set `target`.
    """

    target: str
    """What the notifier delivers to, fit for a log line (no secret in it)."""
    for_people: bool = False
    """Whether a person reads what it delivers: it is told one notification per card and a
    digest of a flood (`telling.Telling`); a program (a webhook, a command) gets every event."""

    def __init__(self, *, concurrency: int, capacity: int = QUEUE_CAPACITY) -> None:
        if concurrency < 1 or capacity < 1:
            raise ValueError("a notifier needs a concurrency and a capacity of at least 1")
        self.concurrency = concurrency
        self.capacity = capacity
        self.delivered = 0
        """Events delivered so far."""
        self.failed = 0
        """Events given up on after the notifier's tries (each with its log line)."""
        self.dropped = 0
        """Events dropped unsent: the queue was full, or the host stopped before they went out."""
        self._lanes: dict[str, deque[HostEvent]] = {}
        """The queued events of each request, in order; the first is being delivered."""
        self._ready: deque[str] = deque()
        """Requests whose lane waits for a delivery task."""
        self._held = 0
        self._wake: anyio.Event | None = None
        self._drained: anyio.Event | None = None
        self._workers: list[anyio.CancelScope] = []
        """Each delivery task's scope: shielded from the host's own cancellation, so that queued
        events can still go out while it stops; cancelled once they have (or time is up)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.target} held={self._held} dropped={self.dropped}>"

    @property
    def queued(self) -> int:
        """Events waiting, or being delivered (at most `capacity`)."""
        return self._held

    @abc.abstractmethod
    async def deliver(self, event: HostEvent) -> bool:
        """Deliver one event, retrying as the notifier's policy says; whether it went out.

        A notifier that gives up logs one line saying why. An exception that escapes is logged
        with its traceback (a bug), counted as a failure, and the next event goes ahead.
        """

    def notify(self, event: HostEvent) -> None:
        """Queue `event` for delivery; drop it (counted, logged) when the queue is full."""
        if self._held >= self.capacity:
            self.dropped += 1
            logger.warning(
                "%s: %d events are waiting already; dropped %s of question %s (%d dropped so far)",
                self.target,
                self._held,
                event.type,
                event.rpc_id,
                self.dropped,
            )
            return
        lane = self._lanes.get(event.rpc_id)
        if lane is None:
            lane = self._lanes[event.rpc_id] = deque()
            self._ready.append(event.rpc_id)
            if self._wake is not None:
                self._wake.set()
                self._wake = None
        lane.append(event)
        self._held += 1

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        stack.callback(self._drop_undelivered)  # last: after the workers have stopped
        workers = await stack.enter_async_context(anyio.create_task_group())
        for _ in range(self.concurrency):
            workers.start_soon(self._work)
        stack.callback(workers.cancel_scope.cancel)
        stack.push_async_callback(self._flush)

    async def _flush(self) -> None:
        """Give queued events `FLUSH_SECONDS` to go out, then stop the workers."""
        with anyio.move_on_after(FLUSH_SECONDS, shield=True):
            await self.drained()
        for worker in self._workers:
            worker.cancel()

    def _drop_undelivered(self) -> None:
        self._workers.clear()
        if self._held:
            self.dropped += self._held
            logger.warning(
                "%s: the host stopped with %d events not delivered; dropped them",
                self.target,
                self._held,
            )
            self._lanes.clear()
            self._ready.clear()
            self._held = 0

    async def drained(self) -> None:
        """Wait until every queued event has been delivered or given up on."""
        while self._held:
            if self._drained is None:
                self._drained = anyio.Event()
            await self._drained.wait()

    async def _work(self) -> None:
        with anyio.CancelScope(shield=True) as scope:
            self._workers.append(scope)
            await self._deliver_forever()

    async def _deliver_forever(self) -> None:
        while True:
            if not self._ready:
                if self._wake is None:
                    self._wake = anyio.Event()
                await self._wake.wait()
                continue
            rpc_id = self._ready.popleft()
            lane = self._lanes[rpc_id]
            while lane:
                try:
                    delivered = await self.deliver(lane[0])
                except Exception:
                    logger.exception("%s: delivering %s failed", self.target, lane[0].id)
                    delivered = False
                self.delivered += delivered
                self.failed += not delivered
                lane.popleft()
                self._held -= 1
            del self._lanes[rpc_id]
            if self._held == 0 and self._drained is not None:
                self._drained.set()
                self._drained = None


def notifying(notifiers: Sequence[Notifier]) -> HostTask:
    """A host task that hands every event of the hub to each of `notifiers` while the host runs
    (to those people read, through a `Telling`)."""

    async def run(hub: Hub) -> None:
        programs = [notifier for notifier in notifiers if not notifier.for_people]
        tellings = [Telling(notifier.notify, hub) for notifier in notifiers if notifier.for_people]

        def fan_out(record: StoredQuestion) -> None:
            event = event_of(record)
            for notifier in programs:
                notifier.notify(event)
            for telling in tellings:
                telling.tell(record, event)

        # Listen before the first await, so nothing committed while the notifiers start is
        # missed; stop listening before they flush, so nothing is queued that cannot go out.
        stop = hub.on_event(fan_out)
        try:
            async with contextlib.AsyncExitStack() as stack:
                for notifier in notifiers:
                    await stack.enter_async_context(notifier)
                stack.callback(stop)
                stack.callback(hub.metrics.watch_notifiers(notifiers))
                async with anyio.create_task_group() as digests:
                    for telling in tellings:
                        digests.start_soon(telling.run)
                    await anyio.sleep_forever()
        finally:
            stop()  # idempotent; here for a notifier that failed to start

    return run
