"""Deadlines on both stores: a request still pending at its asker token's deadline ends as
`timed-out`, also when the host that stored it stopped meanwhile (a restart, a node killed
mid-wait), and a token keeps its deadline."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from starlette.testclient import TestClient

from tests.clock import WAIT, Ended, ManualClock
from tests.host.conftest import StoreFactory
from user_questions.approvals import approval_question
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.gate.durations import parse_escalation, timer_seconds, timer_steps
from user_questions.host.gate.tokens import add_token, change_token
from user_questions.host.hub import Hub
from user_questions.host.stores import Role, Store, StoredQuestion, TokenChange, TokenRecord
from user_questions.outcomes import Outcome, Surface

pytestmark = pytest.mark.anyio

CARD = approval_question("Bash", {"command": "make deploy"}, agent="Codex")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


async def stored(store: Store, rpc_id: str) -> StoredQuestion:
    record = await store.get(rpc_id)
    assert record is not None
    return record


def timed_out_by_its_deadline(record: StoredQuestion) -> None:
    assert record.outcome == Outcome.TIMED_OUT
    assert (record.settled_via, record.note) == (Surface.HOST, "its asker's deadline passed")
    assert record.deadline_at is not None
    assert record.settled_at is not None
    assert record.settled_at >= record.deadline_at


async def test_a_request_pending_at_its_deadline_times_out(
    store: Store, clock: ManualClock
) -> None:
    heard: list[StoredQuestion] = []
    async with Hub(store, clock=clock) as hub:
        ended = Ended(hub)
        record, _ = await hub.submit("r1", "s", [CARD], watcher=heard.append, deadline=30)
        assert record.pending
        assert record.deadline_at == record.asked_at + timedelta(seconds=30)
        _answered, _ = await hub.submit("r2", "s", [CARD], deadline=60)
        await clock.advance(29)
        assert ended.told == []  # not before its deadline
        await clock.advance(1)
        await ended.at_least(1)
        timed_out_by_its_deadline(await stored(store, "r1"))
        assert [r.outcome for r in heard] == [Outcome.TIMED_OUT]
        assert hub.pending_count == 1  # r2's deadline is further off
        assert (await stored(store, "r2")).pending


async def test_a_deadline_that_passed_while_the_host_was_down_ends_it_at_start(
    make_store: StoreFactory, clock: ManualClock
) -> None:
    async with make_store() as store, Hub(store, clock=clock) as hub:
        await hub.submit("r1", "s", [CARD], deadline=30)
    await clock.advance(31)  # the host is down when the deadline passes
    started = datetime.now(UTC)
    async with make_store() as store:
        hub = Hub(store, clock=clock)
        ended = Ended(hub)
        async with hub:
            await ended.at_least(1)
        record = await stored(store, "r1")
    timed_out_by_its_deadline(record)
    assert record.settled_at is not None
    assert record.settled_at >= started


async def test_another_node_times_it_out_when_the_node_that_stored_it_is_gone(
    make_store: StoreFactory, tells_changes: bool, clock: ManualClock
) -> None:
    if not tells_changes:
        pytest.skip("one host per SQLite file: the restart test covers it")
    async with make_store() as other, Hub(other, clock=clock) as survivor:
        ended = Ended(survivor)
        page = survivor.subscribe()
        async with make_store() as first, Hub(first, clock=clock) as doomed:
            await doomed.submit("r1", "s", [CARD], deadline=30)
            with anyio.fail_after(WAIT):
                await page.frames.receive()  # the survivor heard of the request
        # The first node is gone mid-wait; the survivor ends the request at its deadline.
        await clock.advance(30)
        await ended.at_least(1)
        timed_out_by_its_deadline(await stored(other, "r1"))
        assert survivor.pending_count == 0


async def test_an_askers_token_keeps_its_deadline_and_only_an_asker_has_one(store: Store) -> None:
    await add_token(store, "ci", TokenChange(role=Role.ASKER, deadline=3))
    (ci,) = await store.tokens()
    assert ci.deadline == 3
    changed = await change_token(store, "ci", TokenChange(deadline=3600))
    assert changed.deadline == 3600
    assert isinstance(changed, TokenRecord)
    with pytest.raises(UserQuestionError, match="a deadline is an asker's") as refused:
        await add_token(store, "alice", TokenChange(role=Role.PERSON, deadline=3))
    assert refused.value.code == ErrorCode.BAD_REQUEST


def test_an_admin_gives_an_asker_a_deadline_over_http(tmp_path: Path) -> None:
    admin = {"Authorization": "Bearer test-token-123"}
    config = HostConfig(store=tmp_path / "host.db", token="test-token-123")
    with TestClient(create_app(config)) as client:
        made = client.post(
            "/api/tokens", headers=admin, json={"name": "ci", "role": "asker", "deadline": "2h"}
        )
        assert made.status_code == 201
        assert made.json()["deadline"] == 7200
        changed = client.patch("/api/tokens/ci", headers=admin, json={"deadline": "30s"})
        assert changed.json()["deadline"] == 30
        refused = client.patch("/api/tokens/ci", headers=admin, json={"deadline": "soon"})
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == "BAD_REQUEST"


async def test_a_change_takes_an_askers_timers_away_and_keeps_what_it_does_not_name(
    store: Store,
) -> None:
    steps = [parse_escalation("10m:bob")]
    await add_token(
        store, "ci", TokenChange(role=Role.ASKER, deadline=60, escalate=steps, remind=300)
    )
    kept = await change_token(store, "ci", TokenChange(remind=timer_seconds("2m")))
    assert (kept.deadline, kept.escalate, kept.remind) == (60, tuple(steps), 120)
    cleared = await change_token(
        store, "ci", TokenChange(deadline=timer_seconds("none"), escalate=timer_steps(["none"]))
    )
    assert (cleared.deadline, cleared.escalate, cleared.remind) == (None, (), 120)
    (listed,) = await store.tokens()  # as stored, not only as returned
    assert (listed.deadline, listed.escalate) == (None, ())
    await add_token(store, "nightly", TokenChange(role=Role.ASKER, deadline=timer_seconds("none")))
    nightly = next(token for token in await store.tokens() if token.name == "nightly")
    assert nightly.deadline is None  # `none` on a new token is no deadline, never one of 0 s


def test_none_takes_a_deadline_away_over_http_and_on_the_command_line(tmp_path: Path) -> None:
    admin = {"Authorization": "Bearer test-token-123"}
    config = HostConfig(store=tmp_path / "host.db", token="test-token-123")
    with TestClient(create_app(config)) as client:
        asking = {"name": "ci", "role": "asker", "deadline": "2h", "escalate": ["10m:bob"]}
        assert client.post("/api/tokens", headers=admin, json=asking).status_code == 201
        changed = client.patch(
            "/api/tokens/ci", headers=admin, json={"deadline": "none", "escalate": []}
        ).json()
        assert ("deadline" in changed, changed.get("escalate", [])) == (False, [])
    for given, said in (("1h", "deadline 1h"), ("none", None)):
        change = [
            "token",
            "change",
            "ci",
            "--deadline",
            given,
            "--store",
            str(tmp_path / "host.db"),
        ]
        done = subprocess.run(
            [sys.executable, "-m", "user_questions.cli", *change],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert ("deadline" in done.stderr) == (said is not None), done.stderr
        assert said is None or said in done.stderr
