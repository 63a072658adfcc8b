"""Answer records kept in the background: when a request was first shown, and retention."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from tests.host.conftest import PICK, answer, next_frame
from user_questions import ErrorCode, UserQuestionError
from user_questions.host.hub import Hub
from user_questions.host.stores import Seal, Settlement
from user_questions.host.stores.retention import MAX_RETAIN_DAYS, check_retain_days, keep_records
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Outcome, Surface

pytestmark = pytest.mark.anyio


class WatchedStore(SQLiteStore):
    """A SQLite store that reports every `mark_shown` and `purge` it carries out."""

    def __init__(self, path: Path, *, fail: bool = False) -> None:
        super().__init__(path)
        self.shown: list[list[str]] = []
        self.purged: list[datetime] = []
        self.wrote = anyio.Event()
        self.fail = fail

    async def mark_shown(self, rpc_ids: Sequence[str]) -> None:
        if self.fail:
            self.fail = False
            self.wrote.set()
            raise UserQuestionError("the disk is full", ErrorCode.STORE_UNAVAILABLE)
        await super().mark_shown(rpc_ids)
        self.shown.append(list(rpc_ids))
        self.wrote.set()

    async def purge(self, settled_before: datetime, seal: Seal | None = None) -> int:
        deleted = await super().purge(settled_before, seal)
        self.purged.append(settled_before)
        self.wrote.set()
        return deleted

    async def written(self) -> None:
        with anyio.fail_after(5):
            await self.wrote.wait()
        self.wrote = anyio.Event()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[WatchedStore]:
    async with WatchedStore(tmp_path / "host.db") as opened:
        yield opened


async def test_a_request_is_recorded_as_shown_once_a_page_gets_it(store: WatchedStore) -> None:
    async with Hub(store) as hub:
        await hub.submit("before-any-page", "s", [PICK])
        page = hub.subscribe()  # gets it replayed: recorded in the background
        await store.written()
        record, _ = await hub.submit("while-watched", "s", [PICK])
        assert record.shown_at is not None  # stored as shown, with no second write
        await next_frame(page)
        hub.subscribe()  # a second page: both were shown already
        hub.pending_frames()
        assert store.shown == [["before-any-page"]]
        for rpc_id in ("before-any-page", "while-watched"):
            stored = await store.get(rpc_id)
            assert stored is not None
            assert stored.shown_at is not None
            assert stored.shown_at >= stored.asked_at


async def test_reading_the_pending_frames_records_nothing_until_someone_is_shown_them(
    store: WatchedStore,
) -> None:
    async with Hub(store) as hub:
        await hub.submit("only-read", "s", [PICK])
        assert [json.loads(frame)["rpcId"] for frame in hub.pending_frames()] == ["only-read"]
        receipt = await hub.respond(
            answer("only-read", "s", {"id": "pick", "selected": ["a"]}), via=Surface.API
        )
        assert receipt.accepted
        await hub.submit("shown", "s", [PICK])
        hub.record_shown()  # what a listing for a person does
        await store.written()
        assert store.shown == [["shown"]]
        read = await store.get("only-read")
        assert read is not None
        assert read.shown_at is None


async def test_a_request_no_page_has_seen_has_no_shown_time(store: WatchedStore) -> None:
    async with Hub(store) as hub:
        await hub.submit("r1", "s", [PICK])
        receipt = await hub.respond(
            answer("r1", "s", {"id": "pick", "selected": ["a"]}), via=Surface.API
        )
        assert receipt.accepted
        record = await store.get("r1")
        assert record is not None
        assert record.shown_at is None
        assert store.shown == []


async def test_a_shown_time_that_cannot_be_written_never_stops_the_host(tmp_path: Path) -> None:
    async with WatchedStore(tmp_path / "host.db", fail=True) as store, Hub(store) as hub:
        await hub.submit("r1", "s", [PICK])
        hub.subscribe()
        await store.written()
        await hub.submit("r2", "s", [PICK])
        receipt = await hub.respond(
            answer("r2", "s", {"id": "pick", "selected": ["b"]}), via=Surface.WEB
        )
        assert receipt.accepted


def test_a_retention_is_a_whole_number_of_days() -> None:
    assert check_retain_days(1) == 1
    assert check_retain_days(MAX_RETAIN_DAYS) == MAX_RETAIN_DAYS
    for days in (0, -3, MAX_RETAIN_DAYS + 1):
        with pytest.raises(UserQuestionError) as caught:
            check_retain_days(days)
        assert caught.value.code == ErrorCode.BAD_REQUEST
        assert "--retain-days must be a whole number of days" in str(caught.value)


async def test_retention_deletes_only_requests_settled_longer_ago(tmp_path: Path) -> None:
    db = tmp_path / "host.db"
    async with SQLiteStore(db) as setup, Hub(setup) as hub:
        for rpc_id in ("settled-long-ago", "settled-lately", "pending-long-ago"):
            await hub.submit(rpc_id, "s", [PICK])
        for rpc_id in ("settled-long-ago", "settled-lately"):
            await setup.settle(rpc_id, Settlement(Outcome.DISMISSED, via=Surface.WEB, by="alice"))
    long_ago = (datetime.now(UTC) - timedelta(days=8)).isoformat(timespec="microseconds")
    with sqlite3.connect(db) as connection:
        connection.execute(
            "UPDATE questions SET settled_at = ? WHERE rpc_id = 'settled-long-ago'", (long_ago,)
        )
        connection.execute(
            "UPDATE questions SET asked_at = ? WHERE rpc_id = 'pending-long-ago'", (long_ago,)
        )
    async with WatchedStore(db) as store, anyio.create_task_group() as task_group:
        task_group.start_soon(keep_records, store, 7)
        await store.written()
        task_group.cancel_scope.cancel()
        assert await store.get("settled-long-ago") is None
        assert await store.get("settled-lately") is not None
        assert [record.rpc_id for record in await store.pending()] == ["pending-long-ago"]
        (cutoff,) = store.purged
        assert abs(cutoff - (datetime.now(UTC) - timedelta(days=7))) < timedelta(minutes=1)
