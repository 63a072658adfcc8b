"""The garbage collector is paused while a host reads its pending requests, and comes back as
it was: on after the last reader is done (whichever thread it reads in), still off when the
application had turned it off."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.host.conftest import PICK
from user_questions.host.hub import Hub
from user_questions.host.stores import NewQuestion, StoredQuestion
from user_questions.host.stores.collector import collector_paused
from user_questions.host.stores.sqlite import SQLiteStore


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_paused_inside_and_on_again_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_comes_back_only_when_the_last_reader_is_done() -> None:
    inside, leave = threading.Event(), threading.Event()

    def reader() -> None:
        with collector_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=reader)
    thread.start()
    assert inside.wait(10)
    with collector_paused():
        pass
    assert not gc.isenabled()  # the other thread still reads
    leave.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_the_application_turned_off_stays_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_it_comes_back_when_the_reading_fails() -> None:
    with pytest.raises(ValueError, match="bad row"), collector_paused():
        raise ValueError("bad row")
    assert gc.isenabled()


class WatchedStore(SQLiteStore):
    """A store that notes whether the collector ran while its pending requests were read."""

    collecting: list[bool]

    async def pending(self) -> list[StoredQuestion]:
        self.collecting.append(gc.isenabled())
        return await super().pending()


@pytest.mark.anyio
async def test_a_hub_reads_its_pending_requests_with_the_collector_paused_then_resumes_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "host.db"
    async with SQLiteStore(db) as store:
        for index in range(300):
            await store.submit(NewQuestion(f"r{index}", "s", [PICK], datetime.now(UTC)))
    async with WatchedStore(db) as store:
        store.collecting = []
        async with Hub(store) as hub:
            assert len(hub.pending_frames()) == 300
            assert gc.isenabled()
    assert store.collecting == [False]
    assert gc.isenabled()
