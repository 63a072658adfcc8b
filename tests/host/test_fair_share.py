"""Fair share on both stores: an asker token's pending cap and rate hold it alone (another asker
asks at once), a re-attachment is never refused, the count survives a restart and is shared by
two nodes of one PostgreSQL database, and a token keeps its cap and rate."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.clock import ManualClock
from tests.host.conftest import StoreFactory, answer, next_frame
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import ClientResponse
from user_questions.host.gate.fair_share import (
    DEFAULT_MAX_PENDING,
    DEFAULT_RATE,
    Share,
    parse_max_pending,
    parse_rate,
    rate_text,
    share_of,
)
from user_questions.host.gate.security import Identity
from user_questions.host.gate.tokens import add_token, change_token, token_json
from user_questions.host.hub import Hub, PageSubscription
from user_questions.host.stores import Rate, Role, Store, TokenChange
from user_questions.outcomes import Surface
from user_questions.types import AskUserQuestionItem

pytestmark = pytest.mark.anyio

QUESTION = AskUserQuestionItem.model_validate(
    {
        "id": "again",
        "question": "Run the migration again?",
        "header": "Migration",
        "options": [{"label": "Yes"}, {"label": "No"}],
    }
)
RUNAWAY = Share("runaway", max_pending=3, rate=Rate(1.0, 100))
OTHER = Share("other", max_pending=3, rate=Rate(1.0, 100))


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def distinct(rpc_id: str) -> AskUserQuestionItem:
    """`QUESTION` made distinct by its request (identical ones would be one card)."""
    return QUESTION.model_copy(update={"question": f"{QUESTION.question} ({rpc_id})"})


async def ask(hub: Hub, rpc_id: str, share: Share) -> None:
    record, _ = await hub.submit(rpc_id, "s", [distinct(rpc_id)], asked_by=share.asker, share=share)
    assert record.pending


async def refused(hub: Hub, rpc_id: str, share: Share) -> UserQuestionError:
    with pytest.raises(UserQuestionError) as refusal:
        await hub.submit(rpc_id, "s", [distinct(rpc_id)], asked_by=share.asker, share=share)
    return refusal.value


def yes(rpc_id: str) -> ClientResponse:
    return answer(rpc_id, "s", {"id": "again", "selected": ["Yes"]})


async def test_an_asker_beyond_its_cap_is_refused_while_another_asks_at_once(
    store: Store, clock: ManualClock
) -> None:
    async with Hub(store, clock=clock) as hub:
        for number in range(3):
            await ask(hub, f"r{number}", RUNAWAY)
        refusal = await refused(hub, "r3", RUNAWAY)
        assert refusal.code == ErrorCode.TOO_MANY_PENDING
        assert "its cap of 3" in refusal.message
        assert "runaway" in refusal.message
        assert refusal.retry_after is None
        await ask(hub, "o0", OTHER)  # another token's share is its own
        await ask(hub, "r1", RUNAWAY)  # re-attaching is never refused
        assert hub.pending_count == 4
        assert (await hub.respond(yes("r0"), via=Surface.WEB)).accepted
        await ask(hub, "r3", RUNAWAY)  # an answer frees a place
        assert (await refused(hub, "r4", RUNAWAY)).code == ErrorCode.TOO_MANY_PENDING


async def test_asks_at_once_never_take_more_than_the_cap(store: Store) -> None:
    outcomes: list[str] = []

    async def one(rpc_id: str) -> None:
        try:
            await ask(hub, rpc_id, RUNAWAY)
            outcomes.append("pending")
        except UserQuestionError as error:
            outcomes.append(str(error.code))

    async with Hub(store) as hub:
        async with anyio.create_task_group() as asking:
            for number in range(10):
                asking.start_soon(one, f"r{number}")
        assert sorted(outcomes) == ["TOO_MANY_PENDING"] * 7 + ["pending"] * 3
        assert hub.pending_count == 3


async def test_an_asker_beyond_its_rate_waits_the_time_it_is_told(
    store: Store, clock: ManualClock
) -> None:
    slow = Share("slow", max_pending=100, rate=Rate(0.5, 2))
    async with Hub(store, clock=clock) as hub:
        await ask(hub, "r0", slow)
        await ask(hub, "r1", slow)  # the burst
        refusal = await refused(hub, "r2", slow)
        assert refusal.code == ErrorCode.RATE_LIMITED
        assert refusal.retry_after == 2.0  # one ask at half an ask a second
        assert "rate of 0.5:2" in refusal.message
        await ask(hub, "o0", OTHER)  # another token's bucket is its own
        await clock.advance(1.9)
        refused_again = await refused(hub, "r2", slow)
        assert refused_again.retry_after is not None
        assert 0.1 <= refused_again.retry_after <= 0.102  # 0.05 of an ask to go
        await clock.advance(refused_again.retry_after)
        await ask(hub, "r2", slow)
        await ask(hub, "r1", slow)  # a re-attachment takes nothing from the bucket
        assert hub.pending_count == 4


async def test_a_restart_keeps_the_count(make_store: StoreFactory, clock: ManualClock) -> None:
    async with make_store() as store, Hub(store, clock=clock) as hub:
        for number in range(3):
            await ask(hub, f"r{number}", RUNAWAY)
    async with make_store() as store, Hub(store, clock=clock) as hub:
        assert (await refused(hub, "r3", RUNAWAY)).code == ErrorCode.TOO_MANY_PENDING
        await ask(hub, "r2", RUNAWAY)  # re-attaching after the restart
        await ask(hub, "o0", OTHER)


async def heard(page: PageSubscription, kind: str, rpc_id: str) -> None:
    """Wait for the page's frame of `kind` about `rpc_id` (what its node's cache has heard)."""
    while True:
        frame: dict[str, Any] = await next_frame(page)
        if frame["payload"]["type"] == kind and frame.get("rpcId", rpc_id) == rpc_id:
            return


@pytest.mark.parametrize("make_store", ["postgresql"], indirect=True)
async def test_two_nodes_count_one_share(make_store: StoreFactory) -> None:
    async with (
        make_store() as store_a,
        make_store() as store_b,
        Hub(store_a) as node_a,
        Hub(store_b) as node_b,
    ):
        page_a, page_b = node_a.subscribe(), node_b.subscribe()
        await ask(node_a, "r0", RUNAWAY)
        await ask(node_a, "r1", RUNAWAY)
        await heard(page_b, "question/requested", "r1")
        await ask(node_b, "r2", RUNAWAY)
        assert (await refused(node_b, "r3", RUNAWAY)).code == ErrorCode.TOO_MANY_PENDING
        await heard(page_a, "question/requested", "r2")
        assert (await refused(node_a, "r3", RUNAWAY)).code == ErrorCode.TOO_MANY_PENDING
        assert (await node_a.respond(yes("r2"), via=Surface.WEB)).accepted
        await heard(page_b, "question/resolved", "r2")
        await ask(node_b, "r3", RUNAWAY)  # node b counts the answer given on node a


async def test_a_token_keeps_its_cap_and_rate_and_can_go_back_to_the_defaults(
    store: Store,
) -> None:
    grants = TokenChange(role=Role.ASKER, max_pending=200, rate=Rate(5.0, 50))
    await add_token(store, "ci", grants)
    (token,) = await store.tokens()
    assert (token.max_pending, token.rate) == (200, Rate(5.0, 50))
    assert token_json(token)["maxPending"] == 200
    assert token_json(token)["rate"] == "5:50"
    identity = Identity("ci", token.token_hash, Role.ASKER, max_pending=200, rate=token.rate)
    assert share_of(identity) == Share("ci", 200, Rate(5.0, 50))
    changed = await change_token(store, "ci", TokenChange(max_pending=0, rate=Rate(0.0, 0)))
    assert (changed.max_pending, changed.rate) == (None, None)
    assert "maxPending" not in token_json(changed)
    assert "rate" not in token_json(changed)
    defaults = Identity("ci", token.token_hash, Role.ASKER)
    assert share_of(defaults) == Share("ci", DEFAULT_MAX_PENDING, DEFAULT_RATE)
    assert share_of(Identity("alice", "hash", Role.PERSON)) is None
    with pytest.raises(UserQuestionError, match="a pending cap is an asker's"):
        await add_token(store, "alice", TokenChange(max_pending=5))


def test_caps_and_rates_are_read_as_written_and_bounded() -> None:
    assert parse_max_pending("200") == parse_max_pending(200) == 200
    assert parse_max_pending("default") == 0
    assert parse_rate("20:200") == Rate(20.0, 200)
    assert parse_rate("0.5") == Rate(0.5, 1)  # one second of asks, at least one
    assert parse_rate("default") == Rate(0.0, 0)
    assert rate_text(Rate(0.25, 3)) == "0.25:3"
    assert rate_text(DEFAULT_RATE) == "10:100"
    for bad in ("0", "-1", "50001", "ten", "1.5"):
        with pytest.raises(UserQuestionError, match="invalid pending cap") as error:
            parse_max_pending(bad)
        assert error.value.code == ErrorCode.BAD_REQUEST
    for bad in ("0", "fast", "5:0", "1e3", "200000", "5:", ":5"):
        with pytest.raises(UserQuestionError, match="invalid rate"):
            parse_rate(bad)
