"""A withdrawal's note, on every backend: kept with the settlement, in the column an answer link's
channel takes (a request is settled one way or the other, never both), and read back as what it
is."""

from __future__ import annotations

import pytest

from tests.host.stores.test_store_contract import ANSWER, new
from user_questions.host.stores import HistoryQuery, Settlement, Store
from user_questions.outcomes import Outcome, Surface

pytestmark = pytest.mark.anyio

NOTE = "answered in the editor: Allow once"


@pytest.mark.parametrize("outcome", [Outcome.WITHDRAWN, Outcome.TIMED_OUT])
async def test_a_withdrawals_note_is_kept_and_read_back_as_a_note(
    store: Store, outcome: Outcome
) -> None:
    pending, _ = await store.submit(new("r1"))
    settlement = Settlement(outcome, via=Surface.ASKER, by="agents", note=NOTE)
    settled = await store.settle("r1", settlement, pending=pending)
    assert settled is not None
    assert (settled.note, settled.channel) == (NOTE, None)
    assert await store.get("r1") == settled  # the record made from `pending` is the stored one
    (listed,) = (await store.history(HistoryQuery())).records
    assert (listed.note, listed.channel) == (NOTE, None)


async def test_an_answer_links_channel_is_no_note(store: Store) -> None:
    await store.submit(new("r1"))
    settlement = Settlement(Outcome.ANSWERED, ANSWER, via=Surface.LINK, channel="ntfy")
    settled = await store.settle("r1", settlement)
    assert settled is not None
    assert (settled.channel, settled.note) == ("ntfy", None)
    assert await store.get("r1") == settled
