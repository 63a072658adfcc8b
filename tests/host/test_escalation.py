"""Escalation and reminders on both stores: a request still pending after an escalation step's
time is routed to its target as well (seen by them, their page pushed it, they are told), its
audience is reminded every so often, after a restart too, and of two nodes exactly one fires
each step."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import anyio
import pytest
from starlette.testclient import TestClient

from tests.clock import WAIT, Heard, ManualClock
from tests.host.conftest import StoreFactory
from user_questions.approvals import approval_question
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.gate.durations import parse_escalation
from user_questions.host.gate.roles import sees
from user_questions.host.gate.security import Identity
from user_questions.host.gate.tokens import add_token, change_token
from user_questions.host.hub import Hub
from user_questions.host.stores import Escalation, Role, Store, StoredQuestion, TokenChange
from user_questions.outcomes import Surface

pytestmark = pytest.mark.anyio

CARD = approval_question("Bash", {"command": "make deploy"}, agent="Codex")
BOB = Identity("bob", "h-bob", Role.PERSON)
ONCALL = Identity("carol", "h-carol", Role.PERSON, groups=("oncall",))


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


async def stored(store: Store, rpc_id: str) -> StoredQuestion:
    record = await store.get(rpc_id)
    assert record is not None
    return record


async def test_a_step_routes_a_pending_request_to_its_target_and_not_before(
    store: Store, clock: ManualClock
) -> None:
    async with Hub(store, clock=clock) as hub:
        heard = Heard(hub)
        bobs_page = hub.subscribe(lambda record: sees(BOB, record))
        asked, _ = await hub.submit(
            "r1", "s", [CARD], audience=("alice",), escalate=(Escalation(1, "bob"),)
        )
        assert not sees(BOB, asked)
        assert bobs_page.snapshot == []
        await clock.advance(0.9)  # before the step: bob sees nothing
        assert heard.told == []
        assert not sees(BOB, await stored(store, "r1"))
        assert hub.pending_frames(lambda record: sees(BOB, record)) == []

        await clock.advance(0.1)
        await heard.at_least(1)
        assert heard.told == [("r1", ("bob",))]
        record = await stored(store, "r1")
        assert record.pending
        assert record.audience == ("alice", "bob")
        assert record.escalated == 1
        assert sees(BOB, record)
        with anyio.fail_after(WAIT):
            pushed = await bobs_page.frames.receive()  # his page got it the moment it was routed
        assert '"rpcId":"r1"' in pushed
        assert len(hub.pending_frames(lambda r: sees(BOB, r))) == 1


async def test_steps_fire_in_order_and_a_group_target_joins_the_audience(
    store: Store, clock: ManualClock
) -> None:
    steps = (parse_escalation("1s:@oncall"), parse_escalation("2s:bob"))
    async with Hub(store, clock=clock) as hub:
        heard = Heard(hub)
        await hub.submit("r1", "s", [CARD], audience=("alice",), escalate=steps)
        await clock.advance(1)
        await heard.at_least(1)
        assert heard.told == [("r1", ("@oncall",))]  # the second step is not due yet
        await clock.advance(1)
        await heard.at_least(2)
        assert heard.told == [("r1", ("@oncall",)), ("r1", ("bob",))]
        record = await stored(store, "r1")
        assert record.audience == ("alice", "@oncall", "bob")
        assert sees(ONCALL, record)
        await clock.advance(60)
        assert len(heard.told) == 2  # each step fires once


async def test_a_request_routed_to_everyone_stays_so_and_its_target_is_still_told(
    store: Store, clock: ManualClock
) -> None:
    async with Hub(store, clock=clock) as hub:
        heard = Heard(hub)
        await hub.submit("r1", "s", [CARD], escalate=(Escalation(1, "bob"),))
        await clock.advance(1)
        await heard.at_least(1)
        assert heard.told == [("r1", ("bob",))]
        assert (await stored(store, "r1")).audience == ()


async def test_its_audience_is_reminded_every_period_while_it_is_pending(
    store: Store, clock: ManualClock
) -> None:
    async with Hub(store, clock=clock) as hub:
        heard = Heard(hub)
        asked, _ = await hub.submit("r1", "s", [CARD], audience=("alice", "@ops"), remind=60)
        await clock.advance(59)
        assert heard.told == []  # not before its period
        await clock.advance(1)
        await heard.at_least(1)
        await clock.advance(60)
        await heard.at_least(2)
        assert heard.told == [("r1", ("alice", "@ops")), ("r1", ("alice", "@ops"))]
        assert (await stored(store, "r1")).reminded_at == asked.asked_at + timedelta(seconds=120)
        await hub.withdraw("r1", via=Surface.API)
        await clock.advance(600)
        assert len(heard.told) == 2  # a settled request is reminded of no more


async def test_a_step_due_while_the_host_was_down_fires_at_start(
    make_store: StoreFactory, clock: ManualClock
) -> None:
    async with make_store() as store, Hub(store, clock=clock) as hub:
        await hub.submit(
            "r1", "s", [CARD], audience=("alice",), escalate=(Escalation(1, "bob"),), remind=60
        )
    await clock.advance(1.2)  # the host is down when the step is due
    async with make_store() as store:
        hub = Hub(store, clock=clock)
        heard = Heard(hub)  # before it starts: the step is due at once
        async with hub:
            await heard.at_least(1)
            assert heard.told == [("r1", ("bob",))]
            record = await stored(store, "r1")
            assert record.audience == ("alice", "bob")
            assert record.remind == 60  # kept with the request
            assert len(hub.pending_frames(lambda r: sees(BOB, r))) == 1


async def test_of_two_nodes_one_fires_each_step_and_both_show_it_to_the_target(
    make_store: StoreFactory, tells_changes: bool, clock: ManualClock
) -> None:
    if not tells_changes:
        pytest.skip("one host per SQLite file: the restart test covers it")
    async with (
        make_store() as one,
        make_store() as two,
        Hub(one, clock=clock) as first,
        Hub(two, clock=clock) as second,
    ):
        heard = Heard(first, second)
        seconds_page = second.subscribe()
        seconds_bob = second.subscribe(lambda record: sees(BOB, record))
        await first.submit(
            "r1", "s", [CARD], audience=("alice",), escalate=(Escalation(1, "bob"),), remind=1
        )
        with anyio.fail_after(WAIT):
            await seconds_page.frames.receive()  # the other node has it pending
        await clock.advance(1)  # the step and the first reminder are due on both nodes
        await heard.at_least(2)
        await clock.advance(1)  # the second reminder
        await heard.at_least(3)
        with anyio.fail_after(WAIT):
            pushed = await seconds_bob.frames.receive()  # the other node's page heard it
        assert '"rpcId":"r1"' in pushed
        for hub in (first, second):
            assert len(hub.pending_frames(lambda r: sees(BOB, r))) == 1
        assert [whom for _, whom in heard.told].count(("bob",)) == 1  # one node fired the step
        reminders = [whom for _, whom in heard.told if whom != ("bob",)]
        assert reminders == [("alice", "bob")] * 2  # one node fired each reminder, once


async def test_an_askers_token_keeps_its_steps_and_reminders_and_only_an_asker_has_them(
    store: Store,
) -> None:
    steps = [parse_escalation("1h:admin"), parse_escalation("10m:@oncall")]
    await add_token(store, "ci", TokenChange(role=Role.ASKER, escalate=steps, remind=300))
    (ci,) = await store.tokens()
    assert ci.escalate == (Escalation(600, "@oncall"), Escalation(3600, "admin"))  # in order
    assert ci.remind == 300
    changed = await change_token(store, "ci", TokenChange(escalate=[Escalation(2, "bob")]))
    assert (changed.escalate, changed.remind) == ((Escalation(2, "bob"),), 300)
    for made in ({"escalate": steps}, {"remind": 60}):
        with pytest.raises(UserQuestionError, match="is an asker's") as refused:
            await add_token(store, "alice", TokenChange(role=Role.PERSON, **made))
        assert refused.value.code == ErrorCode.BAD_REQUEST
    with pytest.raises(UserQuestionError, match="escalation target") as bad:
        await change_token(store, "ci", TokenChange(escalate=[Escalation(2, "@no good")]))
    assert bad.value.code == ErrorCode.BAD_REQUEST
    with pytest.raises(UserQuestionError, match="AFTER:TARGET"):
        parse_escalation("10m")


def test_an_admin_gives_an_asker_steps_and_reminders_over_http(tmp_path: Path) -> None:
    admin = {"Authorization": "Bearer test-token-123"}
    config = HostConfig(store=tmp_path / "host.db", token="test-token-123")
    with TestClient(create_app(config)) as client:
        made = client.post(
            "/api/tokens",
            headers=admin,
            json={"name": "ci", "role": "asker", "escalate": ["10m:@oncall"], "remind": "5m"},
        )
        assert made.status_code == 201
        assert (made.json()["escalate"], made.json()["remind"]) == (["10m:@oncall"], 300)
        changed = client.patch("/api/tokens/ci", headers=admin, json={"escalate": ["2h:admin"]})
        assert changed.json()["escalate"] == ["2h:admin"]
        listed = client.get("/api/tokens", headers=admin).json()["tokens"]
        assert [t.get("escalate") for t in listed] == [["2h:admin"]]
        for bad in ({"escalate": ["soon:bob"]}, {"escalate": ["1h"]}, {"remind": "often"}):
            refused = client.patch("/api/tokens/ci", headers=admin, json=bad)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == "BAD_REQUEST"
        person = client.post(
            "/api/tokens", headers=admin, json={"name": "bob", "escalate": ["1m:alice"]}
        )
        assert person.status_code == 400
