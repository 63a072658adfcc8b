"""`GroupCommit`: writes that queue up while a commit is in flight share the next commit.

Anyio only. A durable commit waits for the disk (an fsync), and the store's one connection does one
thing at a time; when many asks and answers arrive at once, each would wait for the commits of all
those before it. Here the first writer becomes the leader: it takes every write queued so far and
hands them to `execute`, which runs them in one transaction in the store's worker thread (one thread
hop and one fsync for the lot), or at once on the event loop when the store judges the commit fast
(then nothing queues behind it). Writes that arrive meanwhile queue up; when the commit returns,
each writer of the batch gets its own result, and the first writer still queued leads the next
batch.

Nothing is acknowledged early: a writer returns only after the commit that holds its write has
returned, so each write is on disk before its caller (and anyone it tells) learns of it. One
write failing does not fail the others (`execute` runs each in a savepoint); a commit failing
fails every write of its batch, none of which was committed. A writer cancelled while it waits
still waits for its batch's commit, as a write in a worker thread cannot be taken back, and then
raises the cancellation: the same as `anyio.to_thread.run_sync`. A writer whose commits run on
the event loop without waiting yields to it every `YIELD_INTERVAL` at least, so that a task that
does nothing but write never keeps the others from running.

The writes waiting for a commit are bounded: each may say its size, and one that would take the
sizes queued beyond `capacity` is refused at once (`STORE_BUSY`) while others wait; a write of
size 0 always waits its turn. On a slow disk, that is what keeps the queue's memory bounded.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
from anyio.lowlevel import checkpoint, checkpoint_if_cancelled

from user_questions.errors import ErrorCode, UserQuestionError

__all__ = ["YIELD_INTERVAL", "Execute", "GroupCommit", "Work"]

YIELD_INTERVAL = 0.005
"""Seconds, at most, between two yields to the event loop of writes whose commits ran on it
without waiting: a task that only writes, on a fast disk, would otherwise never let another
run. Yielding on every write would cost a turn of the loop each."""

T = TypeVar("T")

Work = Callable[[], Any]
"""One write, as the worker thread runs it; returns its result or raises."""
Execute = Callable[[Sequence[Work]], list[Any] | Awaitable[list[Any]]]
"""Runs a batch of writes in one transaction and commits it; each write's result, or the
exception it raised (an `Exception` instance), in order: at once when it could commit without
waiting (the store's fast path), or an awaitable of them. Raises when the commit fails."""


@dataclass(eq=False, slots=True)
class _Write:
    work: Work
    size: int
    woken: anyio.Event | None = None
    """Set when it is done, or when it is to lead the next batch; only a write that waits has
    one (the leader of a batch never waits)."""
    done: bool = False
    result: Any = None
    error: BaseException | None = None


class GroupCommit:
    """Runs writes through `execute`, batching those that queue up while a commit is in flight."""

    def __init__(self, execute: Execute, capacity: float = math.inf) -> None:
        self._execute = execute
        self._capacity = capacity
        self._queue: list[_Write] = []
        self.queued = 0
        """The sizes of the writes queued for the next commit, added up."""
        self._busy = False
        self._yield_by = 0.0
        """When a write that did not wait must next yield to the event loop (`YIELD_INTERVAL`)."""
        self.batches = 0
        """Commits made so far."""
        self.writes = 0
        """Writes committed (or failed) so far; `writes / batches` is the mean batch size."""

    def __repr__(self) -> str:
        return f"<GroupCommit {self.writes} writes in {self.batches} commits>"

    async def run(self, work: Callable[[], T], size: int = 0) -> T:
        """Run `work` in the worker thread, in the next commit; its result once committed.

        Raises:
            UserQuestionError: `STORE_BUSY` when its `size` would take the writes waiting
                beyond the capacity (nothing was written).
        """
        if size and self._queue and self.queued + size > self._capacity:
            raise UserQuestionError(
                f"{self.queued} bytes of writes are waiting for the store's disk, which is "
                "behind; ask again shortly",
                ErrorCode.STORE_BUSY,
            )
        write = _Write(work, size)
        self.queued += size
        self._queue.append(write)
        waited = self._busy
        if waited:
            write.woken = anyio.Event()
            with anyio.CancelScope(shield=True):
                await write.woken.wait()
        if not write.done:
            waited = await self._lead() or waited
        if waited:  # it let the other tasks run while it waited
            self._yield_by = time.monotonic() + YIELD_INTERVAL
            await checkpoint_if_cancelled()
        elif (now := time.monotonic()) >= self._yield_by:  # commits made on the event loop
            self._yield_by = now + YIELD_INTERVAL
            await checkpoint()
        else:
            await checkpoint_if_cancelled()
        if write.error is not None:
            raise write.error
        result: T = write.result
        return result

    async def _lead(self) -> bool:
        """Commit every queued write, then hand the lead to the first write queued meanwhile;
        whether the commit was waited for (not made at once, on the event loop)."""
        self._busy = True
        batch, self._queue = self._queue, []
        self.queued -= sum(write.size for write in batch)
        waited = False
        try:
            committing = self._execute([write.work for write in batch])
            if isinstance(committing, list):
                outcomes = committing
            else:
                waited = True
                with anyio.CancelScope(shield=True):
                    outcomes = await committing
        except BaseException as error:
            outcomes = [error] * len(batch)
        self.batches += 1
        self.writes += len(batch)
        for write, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                write.error = outcome
            else:
                write.result = outcome
            write.done = True
            _wake(write)
        if self._queue:
            _wake(self._queue[0])  # not done: it leads the next batch
        else:
            self._busy = False
        return waited


def _wake(write: _Write) -> None:
    if write.woken is not None:
        write.woken.set()
