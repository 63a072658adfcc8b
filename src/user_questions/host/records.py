"""Answer records kept as a side job of the host: when a request was first shown, and retention.

Level 8: imports `stores` and `errors`. The store keeps each request's whole life in its row
(asked by whom, first shown when, settled how, by whom, through which surface, when); the hub
writes the asking and the settling itself, as part of its protocol. Two things are not part of
any protocol and must never slow it down, so they run in the background here:

- `ShownRecorder` notes the requests the hub has just handed to a page (or that
  `GET /api/pending` has just listed) and writes their first-shown time in batches. A failed
  write is logged and lost: the shown time is a record, not state anything depends on.
- `keep_records` deletes, when `uq serve --retain-days N` asks for it, the requests settled more
  than N days ago, at start-up and every `RETENTION_INTERVAL`. Pending requests are never
  deleted, however old.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import anyio

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import HistoryStore, QuestionStore

__all__ = [
    "MAX_RETAIN_DAYS",
    "RETENTION_INTERVAL",
    "SHOWN_BATCH",
    "ShownRecorder",
    "check_retain_days",
    "keep_records",
]

logger = logging.getLogger("user_questions.host")

SHOWN_BATCH = 500
"""Requests marked as shown in one write at most."""
RETENTION_INTERVAL = 3600.0
"""Seconds between two deletions of expired records."""
MAX_RETAIN_DAYS = 36_500
"""The longest retention `--retain-days` takes (a hundred years); omit it to keep everything."""


class ShownRecorder:
    """Writes first-shown times in the background, batched; run `run()` in a task group."""

    def __init__(self, store: QuestionStore) -> None:
        self.store = store
        self._send, self._receive = anyio.create_memory_object_stream[str](math.inf)

    def close(self) -> None:
        """Stop taking notes; what was noted and not yet written is dropped."""
        self._send.close()
        self._receive.close()

    def note(self, rpc_ids: Iterable[str]) -> None:
        """Record (soon) that these requests were shown just now. Never blocks."""
        for rpc_id in rpc_ids:
            with contextlib.suppress(anyio.ClosedResourceError):
                self._send.send_nowait(rpc_id)

    async def run(self) -> None:
        """Write what was noted, in batches of at most `SHOWN_BATCH`, until cancelled."""
        async for first in self._receive:
            batch = [first]
            while len(batch) < SHOWN_BATCH:
                try:
                    batch.append(self._receive.receive_nowait())
                except anyio.WouldBlock:
                    break
            try:
                await self.store.mark_shown(batch)
            except UserQuestionError as error:
                logger.warning(
                    "could not record that %d questions were shown: %s", len(batch), error
                )


def check_retain_days(days: int) -> int:
    """`days` if it can serve as a retention period.

    Raises:
        UserQuestionError: `BAD_REQUEST` unless it is 1 to `MAX_RETAIN_DAYS`.
    """
    if not 1 <= days <= MAX_RETAIN_DAYS:
        raise UserQuestionError(
            f"--retain-days must be a whole number of days from 1 to {MAX_RETAIN_DAYS}, "
            f"got {days}; leave it out to keep every record",
            ErrorCode.BAD_REQUEST,
        )
    return days


async def keep_records(store: HistoryStore, days: int) -> None:
    """Delete the requests settled more than `days` days ago, now and every
    `RETENTION_INTERVAL`, until cancelled. A failure is logged and tried again next time."""
    while True:
        cutoff = datetime.now(UTC) - timedelta(days=days)
        try:
            deleted = await store.purge(cutoff)
        except UserQuestionError as error:
            logger.warning("could not delete records settled before %s: %s", cutoff, error)
        else:
            if deleted:
                logger.info("deleted %d records settled before %s", deleted, cutoff)
        await anyio.sleep(RETENTION_INTERVAL)
