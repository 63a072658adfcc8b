"""A quorum in the store, on both backends: each person's approval of a call counted once under
the request's lock, the request settled allowed when the call has as many as it needs, votes
for a changed call counted apart, every vote in the audit chain, and the count kept across a
restart and across two handles (two nodes on PostgreSQL) voting at the same moment."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from tests.host.conftest import StoreFactory
from user_questions.frames import Approval
from user_questions.host.audit.keys import open_key
from user_questions.host.audit.verify import verify_store
from user_questions.host.stores import (
    NewQuestion,
    Settlement,
    Store,
    Tally,
    Vote,
    open_store,
)
from user_questions.host.stores.audit_chain import canonical_json
from user_questions.outcomes import Outcome, RequestState, Surface
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionOption

pytestmark = pytest.mark.anyio

CARD = (
    AskUserQuestionItem(
        id="approval",
        question="Allow Bash: kubectl apply -f prod.yaml?",
        options=[AskUserQuestionOption(label="Allow"), AskUserQuestionOption(label="Deny")],
    ),
)
CALL = {"command": "kubectl apply -f prod.yaml"}
CHANGED = {"command": "kubectl apply -f prod.yaml --dry-run=server"}
ASKED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
ALLOW = AskUserQuestionAnswer.model_validate(
    {"answers": [{"id": "approval", "selected": ["Allow"]}]}
)


def quorum(rpc_id: str, needed: int = 2) -> NewQuestion:
    approval = Approval(tool="Bash", input=CALL)
    return NewQuestion(rpc_id, "agent-1", CARD, ASKED, approval=approval, approvals=needed)


def vote(rpc_id: str, person: str, call: dict[str, str] = CALL) -> Vote:
    return Vote(rpc_id, person, canonical_json(call), Surface.WEB, datetime.now(UTC))


def allowed(person: str) -> Settlement:
    return Settlement(Outcome.ANSWERED, ALLOW, Surface.WEB, person)


async def test_a_quorum_of_two_settles_only_at_the_second_persons_approval(store: Store) -> None:
    await store.submit(quorum("deploy"))
    first = await store.approve(vote("deploy", "alice"), allowed("alice"))
    assert first == Tally(("alice",), 2, counted=True)
    again = await store.approve(vote("deploy", "alice"), allowed("alice"))
    assert again == Tally(("alice",), 2, counted=False)
    pending = await store.get("deploy")
    assert pending is not None
    assert (pending.state, pending.approvals) == (RequestState.PENDING, 2)
    second = await store.approve(vote("deploy", "bob"), allowed("bob"))
    assert second is not None
    assert (second.people, second.counted) == (("alice", "bob"), True)
    assert second.settled is not None
    assert (second.settled.state, second.settled.settled_by) == (RequestState.ANSWERED, "bob")
    assert second.settled.answer == ALLOW
    assert await store.approve(vote("deploy", "carol"), allowed("carol")) is None
    assert [one.person for one in await store.votes("deploy")] == ["alice", "bob"]


async def test_votes_for_a_changed_call_are_counted_apart(store: Store) -> None:
    await store.submit(quorum("deploy"))
    await store.approve(vote("deploy", "alice"), allowed("alice"))
    changed = await store.approve(vote("deploy", "bob", CHANGED), allowed("bob"))
    assert changed == Tally(("bob",), 2, counted=True)  # the editor's own first approval
    done = await store.approve(vote("deploy", "alice", CHANGED), allowed("alice"))
    assert done is not None
    assert done.people == ("bob", "alice")
    assert done.settled is not None


async def test_every_vote_is_in_the_audit_chain_which_still_verifies(
    store: Store, tmp_path: Path
) -> None:
    await store.submit(quorum("deploy"))
    for person in ("alice", "alice", "bob"):
        await store.approve(vote("deploy", person), allowed(person))
    bodies = [json.loads(record.body) for record in await store.audit_records()]
    events = [(body["event"], body["by"]) for body in bodies]
    assert events == [("approved", "alice"), ("approved", "bob"), ("settled", "bob")]
    key = open_key(tmp_path / "audit.key")
    assert (await verify_store(store, key.public)).intact


async def test_the_count_survives_a_restart(make_store: StoreFactory) -> None:
    async with make_store() as store:
        await store.submit(quorum("deploy", needed=3))
        await store.approve(vote("deploy", "alice"), allowed("alice"))
    async with make_store() as store:
        (waiting,) = await store.pending()
        assert waiting.approvals == 3
        assert [one.person for one in await store.votes("deploy")] == ["alice"]
        tally = await store.approve(vote("deploy", "bob"), allowed("bob"))
        assert tally == Tally(("alice", "bob"), 3, counted=True)


async def approve_at_once(stores: list[Store], rpc_id: str) -> list[Tally]:
    """One person per store approves the call of `rpc_id` at the same moment; their tallies."""
    tallies: list[Tally] = []

    async def approve(store: Store, person: str) -> None:
        tally = await store.approve(vote(rpc_id, person), allowed(person))
        assert tally is not None
        tallies.append(tally)

    async with anyio.create_task_group() as group:
        for number, store in enumerate(stores):
            group.start_soon(approve, store, f"person-{number}")
    return tallies


def counted_once_each(tallies: list[Tally]) -> None:
    """Every approval counted, one count each, and exactly the last one settled."""
    assert sorted(len(tally.people) for tally in tallies) == list(range(1, len(tallies) + 1))
    assert all(tally.counted for tally in tallies)
    assert [tally.settled is not None for tally in tallies].count(True) == 1


async def test_approvals_at_once_on_one_host_count_once_each(store: Store) -> None:
    for number in range(5):
        await store.submit(quorum(f"deploy-{number}", needed=3))
        counted_once_each(await approve_at_once([store] * 3, f"deploy-{number}"))


async def test_three_postgres_nodes_approving_at_once_count_once_each(pg_url: str) -> None:
    """Three nodes each take one person's approval of the same call at the same moment: all
    three are counted, under the request's row lock, and exactly one of them settles it."""
    async with open_store(pg_url) as one, open_store(pg_url) as two, open_store(pg_url) as three:
        for number in range(10):
            rpc_id = f"deploy-{number}"
            await one.submit(quorum(rpc_id, needed=3))
            counted_once_each(await approve_at_once([one, two, three], rpc_id))
            settled = await three.get(rpc_id)
            assert settled is not None
            assert settled.state is RequestState.ANSWERED
            assert len(await two.votes(rpc_id)) == 3


async def test_pruning_history_deletes_a_settled_requests_approvals_not_their_audit(
    store: Store, tmp_path: Path
) -> None:
    await store.submit(quorum("old"))
    await store.submit(quorum("waiting"))
    for person in ("alice", "bob"):
        await store.approve(vote("old", person), allowed(person))
    await store.approve(vote("waiting", "alice"), allowed("alice"))
    audited = len(await store.audit_records())
    assert await store.purge(datetime.now(UTC)) == 1
    assert await store.get("old") is None
    assert await store.votes("old") == []
    assert [one.person for one in await store.votes("waiting")] == ["alice"]  # still pending
    assert len(await store.audit_records()) == audited  # the audit log keeps every approval
    key = open_key(tmp_path / "audit.key")
    assert (await verify_store(store, key.public)).intact
