"""`Worker`: the one thread that runs a `SQLiteStore`'s calls on its connection, in order.

Standard library and anyio. One thread, so the connection does one thing at a time, and a
transaction is never seen half done. Handing a call over costs one queue put (a futex wake) and the
answer one `call_soon_threadsafe`: about half the CPU of `anyio.to_thread.run_sync`, whose worker
pool and capacity limiter a single connection does not need.

On a disk whose commits take a fraction of a millisecond, the wake-ups of an asynchronous hop
cost more than the commit itself (`benchmarks/`): so a caller that expects its call to be quick
may `call()` it, waiting for it with the event loop blocked, but for `wait` seconds at most: a
call that takes longer (a disk turned slow) is then awaited as any other, so the loop never
stalls for longer than `wait`, whatever the disk does.

Runs on asyncio, as the host does under uvicorn. A caller cancelled while its call runs waits
for the call to end and then raises the cancellation, as with `anyio.to_thread.run_sync`: a call
that has started cannot be taken back.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
from anyio.lowlevel import checkpoint_if_cancelled

__all__ = ["Worker"]

T = TypeVar("T")

_Outcome = tuple[Any, BaseException | None]


@dataclass(eq=False, slots=True)
class _Job:
    function: Callable[..., Any]
    args: tuple[Any, ...]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any] | None
    """Where the outcome is delivered; `None` while the event loop waits for it in `call()`."""
    ended: threading.Lock | None = None
    """Held until the call ends, when `call()` waits for it."""
    outcome: _Outcome | None = None


class Worker:
    """A thread running calls in order; `start()` it, `run()` calls on it, `stop()` it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._handoff = threading.Lock()
        """Guards a job's `future` and `outcome` while `call()` gives up waiting for it."""
        self._thread: threading.Thread | None = None
        self._outstanding = 0
        """Calls handed to the thread whose result has not been delivered yet; counted on the
        event loop only (a call is counted until its delivery runs there)."""

    def __repr__(self) -> str:
        return f"<Worker {self.name}>"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        """Let the calls queued so far finish, then end the thread."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            with anyio.CancelScope(shield=True):  # closing a cancelled store still ends it
                await anyio.to_thread.run_sync(thread.join)

    @property
    def idle(self) -> bool:
        """Whether no call is queued or running, so that a call handed over now starts at
        once (read on the event loop, where calls are handed over)."""
        return self._outstanding == 0

    def submit(self, function: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Queue `function(*args)` to run after every call queued before it; the future of its
        result, which the caller awaits uncancelled (`run` does)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._queue(_Job(function, args, loop, future))
        return future

    def call(self, function: Callable[..., T], *args: Any, wait: float) -> T | asyncio.Future[T]:
        """`function(*args)` in the thread, after every call queued before it: its result when
        it ends within `wait` seconds (the event loop waits that long at most), else the future
        of its result, as `submit` gives."""
        job = _Job(function, args, asyncio.get_running_loop(), None, threading.Lock())
        assert job.ended is not None
        job.ended.acquire()
        self._queue(job)
        if not job.ended.acquire(timeout=wait):
            with self._handoff:
                if job.outcome is None:  # still running: its outcome is delivered later
                    job.future = job.loop.create_future()
                    return job.future
        self._outstanding -= 1
        assert job.outcome is not None
        result, error = job.outcome
        if error is not None:
            raise error
        return result  # type: ignore[no-any-return]

    def _queue(self, job: _Job) -> None:
        if self._thread is None:
            raise RuntimeError("the store is not open: use `async with store:`")
        self._outstanding += 1
        self._jobs.put(job)

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` in the thread, after every call queued before it; its result."""
        future = self.submit(function, *args)
        with anyio.CancelScope(shield=True):
            result = await future
        await checkpoint_if_cancelled()
        return result

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                outcome: _Outcome = (job.function(*job.args), None)
            except BaseException as error:
                outcome = (None, error)
            with self._handoff:
                job.outcome, future = outcome, job.future
            if job.ended is not None:
                job.ended.release()
            if future is not None:
                with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                    job.loop.call_soon_threadsafe(self._deliver, future, *outcome)

    def _deliver(
        self, future: asyncio.Future[Any], result: Any, error: BaseException | None
    ) -> None:
        """On the event loop, once the thread is done with the call (even one whose future was
        cancelled meanwhile): only then may a call run on the loop."""
        self._outstanding -= 1
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
