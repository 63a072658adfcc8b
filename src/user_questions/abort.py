"""Cancellation in the shape of the web platform's `AbortController` and `AbortSignal`.

A signal is aborted once, with a reason, and tells its listeners synchronously. A timeout signal
(`AbortSignal.timeout`) carries a deadline on the monotonic clock: it reads as aborted as soon as
the deadline passes, whether or not an event loop is running, and `wait()` wakes at the deadline.
When created inside a running asyncio loop it also schedules a timer, so its listeners run on time.
`abort()` and listeners run on the event loop's thread; from another thread use
`anyio.from_thread.run_sync(controller.abort)`.

There is no timeout by default anywhere in the package: a timeout is a choice of the caller, and
its outcome is a typed `ASK_TIMED_OUT`, never an invented answer.
"""

from __future__ import annotations

import contextlib
import logging
import time
import weakref
from collections.abc import Callable, Iterable

import anyio

from user_questions._disposer import nothing
from user_questions.errors import AbortError, ErrorCode

__all__ = ["AbortController", "AbortSignal", "is_timeout"]

logger = logging.getLogger(__name__)

Listener = Callable[[], object]


def is_timeout(reason: object) -> bool:
    """Whether an abort reason means a timeout (the reason `AbortSignal.timeout` gives)."""
    return isinstance(reason, TimeoutError)


class AbortSignal:
    """Tells whether, and why, an operation should stop. Made by `AbortController`, `timeout` or
    `any`; never aborted directly."""

    __slots__ = ("__weakref__", "_aborted", "_deadline", "_listeners", "_reason", "_sources")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._listeners: list[Listener] = []
        self._deadline: float | None = None
        self._sources: tuple[AbortSignal, ...] = ()

    def __repr__(self) -> str:
        state = f"aborted reason={self._reason!r}" if self.aborted else "pending"
        return f"<AbortSignal {state}>"

    @property
    def aborted(self) -> bool:
        """Whether the signal has aborted; a timeout signal aborts when its deadline passes."""
        if not self._aborted and self._deadline is not None:
            self._poll()
        return self._aborted

    @property
    def reason(self) -> object:
        """Why the signal aborted: the value given to `abort()`, an `AbortError` when none was
        given, or a `TimeoutError` for a timeout; `None` while not aborted."""
        return self._reason if self.aborted else None

    @property
    def deadline(self) -> float | None:
        """The `time.monotonic()` instant at which the signal times out, if it can."""
        return self._deadline

    def throw_if_aborted(self) -> None:
        """Raise the reason if the signal has aborted (an `AbortError` wraps a non-exception)."""
        if not self.aborted:
            return
        if isinstance(self._reason, BaseException):
            raise self._reason
        raise AbortError(f"aborted: {self._reason!r}", ErrorCode.ABORTED)

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call `listener()` once when the signal aborts, or at once if it already has.

        Returns a function that removes the listener; calling it again is harmless.
        """
        if self.aborted:
            listener()
            return nothing
        self._listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return remove

    async def wait(self) -> None:
        """Return once the signal has aborted; wakes at the deadline of a timeout signal."""
        while not self.aborted:
            event = anyio.Event()
            remove = self.add_listener(event.set)
            try:
                remaining = None if self._deadline is None else self._deadline - time.monotonic()
                with anyio.move_on_after(None if remaining is None else max(remaining, 0.0)):
                    await event.wait()
            finally:
                remove()

    @staticmethod
    def timeout(seconds: float) -> AbortSignal:
        """A signal that aborts with a `TimeoutError` reason after `seconds`."""
        if not seconds >= 0:
            raise ValueError(f"timeout must be a number of seconds >= 0, got {seconds!r}")
        signal = AbortSignal()
        signal._deadline = time.monotonic() + seconds
        import asyncio  # here: a running loop has loaded it, and importing the package should not

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return signal  # no loop: the deadline is checked whenever the signal is read
        loop.call_later(seconds, signal._poll)
        return signal

    @staticmethod
    def any(signals: Iterable[AbortSignal]) -> AbortSignal:
        """A signal that aborts, with the same reason, as soon as any of `signals` does."""
        combined = AbortSignal()
        sources = tuple(signals)
        combined._sources = sources
        deadlines = [s._deadline for s in sources if s._deadline is not None]
        combined._deadline = min(deadlines, default=None)
        for source in sources:
            if source.aborted:
                combined._abort(source._reason)
                return combined
        # The sources hold only weak references, and forget their listeners once the combined
        # signal is gone: a long-lived signal combined per call must not grow without bound.
        ref = weakref.ref(combined)
        removers = [source.add_listener(_forward(ref, source)) for source in sources]
        weakref.finalize(combined, _call_all, removers)
        return combined

    def _poll(self) -> None:
        """Abort now if a deadline (our own, or a source's) has passed."""
        if self._aborted:
            return
        if self._sources:
            for source in self._sources:
                if source.aborted:  # aborting the source aborts us through its listener
                    return
        elif self._deadline is not None and time.monotonic() >= self._deadline:
            self._abort(TimeoutError("signal timed out"))

    def _expire(self) -> None:
        """Abort as timed out now: a cancel scope set on our deadline fired, whatever the clock."""
        if self._aborted:
            return
        if self._sources:
            earliest = min(
                (s for s in self._sources if s._deadline is not None),
                key=lambda s: s._deadline or 0.0,
            )
            earliest._expire()
        else:
            self._abort(TimeoutError("signal timed out"))

    def _abort(self, reason: object) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            try:
                listener()
            except Exception:
                # One broken listener must not keep the others from learning of the abort.
                logger.exception("an abort listener raised")


def _forward(ref: weakref.ReferenceType[AbortSignal], source: AbortSignal) -> Listener:
    def forward() -> None:
        combined = ref()
        if combined is not None:
            combined._abort(source._reason)

    return forward


def _call_all(functions: list[Callable[[], None]]) -> None:
    for function in functions:
        function()


class AbortController:
    """Owns a signal and aborts it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def __repr__(self) -> str:
        return f"<AbortController signal={self.signal!r}>"

    def abort(self, reason: object = None) -> None:
        """Abort the signal once; later calls do nothing. Without a reason, an `AbortError`."""
        if reason is None:
            reason = AbortError("the operation was aborted", ErrorCode.ABORTED)
        self.signal._abort(reason)
