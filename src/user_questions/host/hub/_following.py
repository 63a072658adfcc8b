"""Following the store: the hub's cache brought up to what the store holds, at the start and
whenever another host sharing the store reports a change (`Store.on_change`)."""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterable

import anyio

from user_questions.errors import UserQuestionError
from user_questions.host.hub._quorum import approved_by
from user_questions.host.stores import QuestionStore, StoredQuestion
from user_questions.host.stores.collector import collector_paused

__all__ = ["StoreFollower"]

logger = logging.getLogger("user_questions.host")


class StoreFollower:
    """Reads what the store holds into the hub through `apply` (the hub's one way to update its
    cache), and re-reads what other hosts changed, as the store reports it; of a pending
    request that needs several approvals, who approved it so far goes to `tallied`."""

    def __init__(
        self,
        store: QuestionStore,
        apply: Callable[[StoredQuestion], None],
        tallied: Callable[[StoredQuestion, tuple[str, ...]], None],
    ) -> None:
        self._store = store
        self._apply = apply
        self._tallied = tallied
        self._changes_in, self._changes = anyio.create_memory_object_stream[str | None](math.inf)

    def listen(self, stack: contextlib.AsyncExitStack) -> None:
        """Hear the store's changes from now on, queued until `follow` runs (call before the
        first `load`: a change committed before is in the read, one after is queued)."""
        stack.callback(self._changes.close)
        stack.callback(self._changes_in.close)
        stack.callback(self._store.on_change(self._changes_in.send_nowait))

    async def load(self) -> list[StoredQuestion]:
        """Read every pending request from the store and apply it (when the hub starts, and
        when a shared store reconnects); the garbage collector is paused meanwhile (see
        `stores/collector.py`), so that it scans the new records once, afterwards."""
        with collector_paused():
            pending = await self._store.pending()
            for record in pending:
                self._apply(record)
        for record in pending:
            await self._count(record)
        return pending

    async def refresh(self, rpc_id: str) -> None:
        """Read one request back from the store and apply it (another host may have changed
        it); an unknown one changes nothing."""
        record = await self._store.get(rpc_id)
        if record is not None:
            self._apply(record)
            await self._count(record)

    async def _count(self, record: StoredQuestion) -> None:
        """Read who approved `record` so far, when it is pending and needs several approvals
        (a vote is a change of its own: the store reports it like any other)."""
        if record.pending and record.approvals > 1:
            self._tallied(record, approved_by(record, await self._store.votes(record.rpc_id)))

    async def follow(self, cached: Callable[[], Iterable[str]]) -> None:
        """Apply what other hosts changed, as the store reports it; `None` (a store that
        reconnected) re-reads everything, and each request `cached` still names that the store
        no longer has pending. A failed re-read is logged, not fatal: the next full re-read
        catches up."""
        async for rpc_id in self._changes:
            try:
                if rpc_id is not None:
                    await self.refresh(rpc_id)
                    continue
                still = {record.rpc_id for record in await self.load()}
                for gone in [cached_id for cached_id in cached() if cached_id not in still]:
                    await self.refresh(gone)
            except UserQuestionError as error:
                logger.warning("could not re-read the store after a change: %s", error)
