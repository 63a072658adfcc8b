"""Cancellation in the shape of the web platform's `AbortController` and `AbortSignal`.

A signal is aborted once, with a reason, and tells its listeners synchronously. A timeout signal
(`AbortSignal.timeout`) carries a deadline on the monotonic clock: it reads as aborted as soon as
the deadline passes, whether or not an event loop is running, and `wait()` wakes at the deadline.
When created inside a running asyncio loop it also schedules a timer, so its listeners run on time.
Reading a signal (`aborted`, `reason`) never changes it: without a timer, a timeout's listeners
run at the first `throw_if_aborted()`, `add_listener()` or `wait()` after its deadline, or when an
ask's cancel scope on that deadline fires.
`abort()` and listeners run on the event loop's thread; from another thread use
`anyio.from_thread.run_sync(controller.abort)`.

There is no timeout by default anywhere in the package: a timeout is a choice of the caller, and
its outcome is a typed `ASK_TIMED_OUT`, never an invented answer.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable, Iterable

import anyio

from user_questions._lifecycle.disposer import nothing
from user_questions._lifecycle.listeners import Listeners
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

    __slots__ = (
        "__weakref__",
        "_aborted",
        "_deadline",
        "_listeners",
        "_reason",
        "_sources",
        "_timeout",
    )

    def __init__(self) -> None:
        self._aborted = False
        """Whether the abort has happened: its reason set, its listeners told."""
        self._reason: object = None
        self._listeners: Listeners[[]] = Listeners(logger, "an abort listener raised")
        self._deadline: float | None = None
        self._sources: tuple[AbortSignal, ...] = ()
        self._timeout: TimeoutError | None = None
        """A timeout signal's reason, made with it: every read past the deadline gives this one."""

    def __repr__(self) -> str:
        state = f"aborted reason={self.reason!r}" if self.aborted else "pending"
        return f"<AbortSignal {state}>"

    @property
    def aborted(self) -> bool:
        """Whether the signal has aborted; a timeout signal has from its deadline on.

        A pure read: past its deadline a timeout reads as aborted even when no timer ran (no
        event loop, or not asyncio's), yet reading runs no listener. They run from the timer, or
        from the first `throw_if_aborted()`, `add_listener()` or `wait()` after the deadline.
        """
        return self._aborted or self._past_deadline()

    @property
    def reason(self) -> object:
        """Why the signal aborted: the value given to `abort()`, an `AbortError` when none was
        given, or a `TimeoutError` for a timeout; `None` while not aborted. A pure read too."""
        if self._aborted:
            return self._reason
        return self._timeout_reason() if self._past_deadline() else None

    @property
    def deadline(self) -> float | None:
        """The `time.monotonic()` instant at which the signal times out, if it can."""
        return self._deadline

    def throw_if_aborted(self) -> None:
        """Raise the reason if the signal has aborted (an `AbortError` wraps a non-exception);
        a timeout past its deadline that no timer aborted yet aborts here, telling its listeners."""
        self._poll()
        if not self._aborted:
            return
        if isinstance(self._reason, BaseException):
            raise self._reason
        raise AbortError(f"aborted: {self._reason!r}", ErrorCode.ABORTED)

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call `listener()` once when the signal aborts, or at once if it already has.

        Returns a function that removes the listener; calling it again is harmless.
        """
        self._poll()
        if self._aborted:
            listener()
            return nothing
        return self._listeners.add(listener)

    async def wait(self) -> None:
        """Return once the signal has aborted; wakes at the deadline of a timeout signal."""
        while True:
            self._poll()
            if self._aborted:
                return
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
        signal._timeout = TimeoutError("signal timed out")
        import asyncio  # here: a running loop has loaded it, and importing the package should not

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return signal  # no loop: reads check the deadline; explicit calls abort at it
        loop.call_later(seconds, signal._expire)
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
                combined._abort(source.reason)
                return combined
        # The sources hold only weak references, and forget their listeners once the combined
        # signal is gone: a long-lived signal combined per call must not grow without bound.
        ref = weakref.ref(combined)
        removers = [source.add_listener(_forward(ref, source)) for source in sources]
        weakref.finalize(combined, _call_all, removers)
        return combined

    def _past_deadline(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    def _earliest(self) -> AbortSignal:
        """The source whose deadline is ours (a combined signal with a deadline has one)."""
        return min(
            (s for s in self._sources if s._deadline is not None), key=lambda s: s._deadline or 0.0
        )

    def _timeout_reason(self) -> object:
        """The reason our deadline aborts us with: our own timeout's, or our earliest source's."""
        return self._earliest()._timeout_reason() if self._sources else self._timeout

    def _poll(self) -> None:
        """Abort now if our deadline has passed and no timer aborted us yet."""
        if not self._aborted and self._past_deadline():
            self._expire()

    def _expire(self) -> None:
        """Abort as timed out now: our timer, or a cancel scope set on our deadline, fired,
        whatever the clock says."""
        if self._aborted:
            return
        if self._sources:
            self._earliest()._expire()  # aborts us through our listener on it
        else:
            self._abort(self._timeout)

    def _abort(self, reason: object) -> None:
        if self._aborted:
            return
        if self._past_deadline():
            # The deadline came first, and reads since then have given its reason: keep it.
            reason = self._timeout_reason()
        self._aborted = True
        self._reason = reason
        self._listeners.tell()
        self._listeners.clear()


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
