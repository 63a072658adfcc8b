"""When each request was first shown to a person, written in the background.

The store keeps each request's whole life in its row (asked by whom, first shown when, settled
how, by whom, through which surface, when); the hub writes the asking and the settling itself,
as part of its protocol. The first-shown time is not part of any protocol and must never slow it
down: `ShownRecorder` notes the requests the hub has just handed to a page (or that
`GET /api/pending` has just listed) and writes their first-shown time in batches. A failed write
is lost: the shown time is a record, not state anything depends on. It is logged unless it is a
fault of the store (a full disk, a database out of reach), which the store reports once for all.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterable

import anyio

from user_questions.errors import UserQuestionError
from user_questions.host.stores import FAULT_CODES, QuestionStore

__all__ = ["SHOWN_BATCH", "ShownRecorder"]

logger = logging.getLogger("user_questions.host")

SHOWN_BATCH = 500
"""Requests marked as shown in one write at most."""


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
                if error.code not in FAULT_CODES:
                    logger.warning(
                        "could not record that %d questions were shown: %s", len(batch), error
                    )
