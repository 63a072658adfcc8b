"""The audit log on every backend: each settlement appended with its request's card digest, the
chain checked by `verify_store`, changes made behind the host's back found (an answer, a record,
a deleted record, a reordered pair, a settled request without a record), an export verified
offline, pruning that keeps the chain verifiable, and one chain across two PostgreSQL nodes."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest

from tests.host.conftest import StoreFactory
from user_questions import AskUserQuestionAnswer, AskUserQuestionAnswerItem
from user_questions.frames import Approval
from user_questions.host.audit.checkpoints import sealer, sign_checkpoint
from user_questions.host.audit.keys import AuditKey, load_public_key, open_key
from user_questions.host.audit.verify import export_line, verify_lines, verify_store
from user_questions.host.stores import NewQuestion, Settlement, Store
from user_questions.host.stores.audit_chain import GENESIS, canonical_json, chain_hash
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

pytestmark = pytest.mark.anyio

PICK = AskUserQuestionItem(
    id="pick",
    question="Deploy to production?",
    options=[AskUserQuestionOption(label="Yes"), AskUserQuestionOption(label="No")],
)
YES = AskUserQuestionAnswer(answers=[AskUserQuestionAnswerItem(id="pick", selected=["Yes"])])
ASKED = datetime(2025, 1, 1, tzinfo=UTC)

Tamper = Callable[[str], Awaitable[None]]
"""Runs SQL on the store behind the host's back; `{s}` is the tables' schema prefix."""


@pytest.fixture
def tamper(make_store: StoreFactory, request: pytest.FixtureRequest, tmp_path: Path) -> Tamper:
    if request.node.callspec.params["make_store"] == "postgresql":
        url: str = request.getfixturevalue("pg_url")

        async def on_postgres(sql: str) -> None:
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as connection:
                await connection.execute(sql.replace("{s}", "user_questions."))

        return on_postgres

    async def on_sqlite(sql: str) -> None:
        with sqlite3.connect(tmp_path / "host.db") as connection:
            connection.executescript(sql.replace("{s}", ""))
        connection.close()

    return on_sqlite


@pytest.fixture
def key(tmp_path: Path) -> AuditKey:
    return open_key(tmp_path / "audit.key")


def new(rpc_id: str, *, asked_at: datetime = ASKED, **fields: Any) -> NewQuestion:
    return NewQuestion(rpc_id, "agent-1", (PICK,), asked_at, **fields)


async def mixed_workload(store: Store) -> None:
    """One settlement of each kind: answered (with the digest its page sent back), dismissed,
    withdrawn, timed out, and decided by a rule as it was stored."""
    for rpc_id in ("answered", "dismissed", "withdrawn", "timed-out"):
        await store.submit(new(rpc_id))
    digest = new("answered").digest
    await store.settle(
        "answered", Settlement(Outcome.ANSWERED, YES, Surface.WEB, "alice", seen=digest)
    )
    await store.settle("dismissed", Settlement(Outcome.DISMISSED, via=Surface.LINK, channel="ntfy"))
    await store.settle(
        "withdrawn", Settlement(Outcome.WITHDRAWN, via=Surface.ASKER, note="gave up")
    )
    (pending,) = [r for r in await store.pending() if r.rpc_id == "timed-out"]
    await store.settle(
        "timed-out", Settlement(Outcome.TIMED_OUT, via=Surface.HOST), pending=pending
    )
    approval = Approval(tool="Bash", input={"command": "git status"})
    ruled = Settlement(Outcome.ANSWERED, YES, Surface.RULE, "rule:1")
    await store.submit(new("ruled", approval=approval, settlement=ruled))


async def bodies(store: Store) -> list[dict[str, Any]]:
    return [json.loads(record.body) for record in await store.audit_records()]


async def test_every_settlement_is_appended_with_its_card_digest(
    store: Store, key: AuditKey
) -> None:
    await mixed_workload(store)
    records = await store.audit_records()
    assert [r.seq for r in records] == [1, 2, 3, 4, 5]
    assert records[0].prev == GENESIS
    for before, record in itertools.pairwise(records):
        assert record.prev == before.hash
    assert all(chain_hash(r.prev, r.body) == r.hash for r in records)
    assert await store.audit_head() == (5, records[-1].hash)
    found = {body["rpc_id"]: body for body in await bodies(store)}
    answered = found["answered"]
    stored = await store.get("answered")
    assert stored is not None
    assert stored.settled_at is not None
    assert answered == {
        "v": 1,
        "event": "settled",
        "rpc_id": "answered",
        "digest": new("answered").digest,
        "seen": new("answered").digest,
        "outcome": "answered",
        "answer": json.loads(YES.model_dump_json()),
        "by": "alice",
        "via": "web",
        "channel": None,
        "note": None,
        "at": stored.settled_at.isoformat(timespec="microseconds"),
    }
    assert stored.digest == new("answered").digest
    assert (found["dismissed"]["channel"], found["withdrawn"]["note"]) == ("ntfy", "gave up")
    assert (found["timed-out"]["outcome"], found["ruled"]["via"]) == ("timed-out", "rule")
    # A request's card digest does not depend on what else it carries: the questions and the
    # approval alone.
    assert found["ruled"]["digest"] != found["answered"]["digest"]
    assert new("x").digest == new("y", asked_by="bob").digest
    verdict = await verify_store(store, key.public)
    assert verdict.report() == "5 records, chain intact, never signed"


async def test_a_settle_that_loses_appends_nothing(store: Store, key: AuditKey) -> None:
    await store.submit(new("once"))
    assert await store.settle("once", Settlement(Outcome.ANSWERED, YES, Surface.WEB))
    assert await store.settle("once", Settlement(Outcome.DISMISSED, via=Surface.WEB)) is None
    assert await store.settle("unknown", Settlement(Outcome.DISMISSED)) is None
    assert [body["outcome"] for body in await bodies(store)] == ["answered"]


async def test_checkpoints_are_signed_and_named_in_the_report(
    store: Store, key: AuditKey, tmp_path: Path
) -> None:
    await mixed_workload(store)
    checkpoint = await sign_checkpoint(store, key)
    assert (checkpoint.seq, checkpoint.pruned) == (5, False)
    await store.submit(new("later"))
    await store.settle("later", Settlement(Outcome.DISMISSED, via=Surface.WEB))
    report = (await verify_store(store, key.public)).report()
    signed = checkpoint.at.isoformat(timespec="microseconds")
    assert report == f"6 records, chain intact, last signed at {signed} (1 since)"
    other = open_key(tmp_path / "other.key")
    verdict = await verify_store(store, other.public)
    assert verdict.problem is not None
    assert "signed by another key" in verdict.problem


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            "UPDATE {s}questions SET answer = "
            """'{"answers":[{"id":"pick","selected":["No"]}]}' WHERE rpc_id = 'answered'""",
            'record 1: request "answered" as stored differs from it in answer',
        ),
        (
            """UPDATE {s}questions SET questions = '[{"id":"pick","question":"Deploy to """
            """staging?","options":[{"label":"Yes"},{"label":"No"}]}]' """
            "WHERE rpc_id = 'answered'",
            'record 1: request "answered" as stored differs from it in the card',
        ),
        (
            "UPDATE {s}audit SET body = replace(body, '\"alice\"', '\"mallory\"') WHERE seq = 1",
            "record 1: its hash does not match its contents",
        ),
        ("DELETE FROM {s}audit WHERE seq = 3", "record 4: it follows record 2"),
        (
            "UPDATE {s}audit SET seq = -1 WHERE seq = 2; UPDATE {s}audit SET seq = 2 WHERE seq = 3;"
            " UPDATE {s}audit SET seq = 3 WHERE seq = -1",
            "record 2: its prev is not the hash of record 1",
        ),
        ("DELETE FROM {s}audit WHERE seq = 5", "record 5: the chain's head is record 5"),
        (
            "INSERT INTO {s}questions (rpc_id, session_id, questions, asked_at, state, answer, "
            "settled_at, settled_via, settled_by) SELECT 'forged', session_id, questions, "
            "asked_at, 'answered', answer, settled_at, 'web', 'mallory' FROM {s}questions "
            "WHERE rpc_id = 'answered'",
            'request "forged" is settled (answered) but has no audit record',
        ),
    ],
    ids=[
        "answer-updated",
        "card-updated",
        "record-updated",
        "record-deleted",
        "pair-reordered",
        "last-record-deleted",
        "settled-without-record",
    ],
)
async def test_a_change_behind_the_hosts_back_is_named(
    store: Store, key: AuditKey, tamper: Tamper, change: str, problem: str
) -> None:
    await mixed_workload(store)
    assert (await verify_store(store, key.public)).intact
    await tamper(change)
    verdict = await verify_store(store, key.public)
    assert verdict.problem is not None
    assert verdict.problem.startswith(problem), verdict.problem


async def test_a_signed_chain_rewritten_from_a_record_on_is_found(
    store: Store, key: AuditKey, tamper: Tamper
) -> None:
    """Recomputing every hash after a change (what someone without the key can do) still
    breaks the checkpoint that signed the old chain."""
    await mixed_workload(store)
    await sign_checkpoint(store, key)
    records = await store.audit_records()
    prev = records[2].prev
    statements = []
    for record in records[2:]:
        body = record.body.replace('"gave up"', '"finished"')
        own = chain_hash(prev, body)
        statements.append(
            f"UPDATE {{s}}audit SET body = '{body}', prev = '{prev}', hash = '{own}' "
            f"WHERE seq = {record.seq}"
        )
        prev = own
    statements.append(f"UPDATE {{s}}audit_head SET hash = '{prev}'")
    statements.append("UPDATE {s}questions SET channel = 'finished' WHERE rpc_id = 'withdrawn'")
    await tamper(";".join(statements))
    verdict = await verify_store(store, key.public)
    assert verdict.problem is not None
    assert verdict.problem.startswith("record 5: it is not the record the checkpoint"), verdict


async def test_an_export_verifies_offline_and_a_changed_line_does_not(
    store: Store, key: AuditKey, tmp_path: Path
) -> None:
    await mixed_workload(store)
    await sign_checkpoint(store, key)
    checkpoints = await store.checkpoints()
    lines = [export_line(record, checkpoints) for record in await store.audit_records()]
    assert all({"hash", "prev", "seq"} <= json.loads(line).keys() for line in lines)
    public = load_public_key(Path(f"{key.path}.pub"))
    assert verify_lines(lines, public).report().startswith("5 records, chain intact, last signed")
    assert not verify_lines(lines, open_key(tmp_path / "other.key").public).intact
    changed = lines[:]
    changed[1] = changed[1].replace('"link"', '"web"')
    assert verify_lines(changed, public).problem == (
        "record 2: its hash does not match its contents"
    )
    assert verify_lines([*lines[:2], *lines[3:]], public).problem is not None
    # From a later record (`--since`): the chain holds from there.
    assert verify_lines(lines[2:], public).report().startswith("3 records (from record 3)")
    assert verify_lines(["not json"], public).problem == (
        "line 1: not an audit record (a JSON object with seq, prev and hash, and signatures "
        "as an export writes them)"
    )
    # The canonical body survives the round trip: the line is the record's fields.
    first = json.loads(lines[0])
    body = {k: v for k, v in first.items() if k not in {"seq", "prev", "hash", "signed"}}
    assert chain_hash(first["prev"], canonical_json(body)) == first["hash"]


async def test_pruning_restarts_the_chain_from_a_signed_checkpoint(
    store: Store, key: AuditKey
) -> None:
    now = datetime.now(UTC)
    old, kept = now - timedelta(days=40), now - timedelta(days=1)
    ruled = Settlement(Outcome.ANSWERED, YES, Surface.RULE, "rule:1")
    for number in range(3):
        await store.submit(new(f"old-{number}", asked_at=old, settlement=ruled))
    await store.submit(new("pending", asked_at=old))
    await store.submit(new("recent", asked_at=kept, settlement=ruled))
    assert await store.purge(now - timedelta(days=30), sealer(key)) == 3
    records = await store.audit_records()
    assert [r.seq for r in records] == [4]
    (checkpoint,) = await store.checkpoints()
    assert (checkpoint.seq, checkpoint.pruned, checkpoint.hash) == (3, True, records[0].prev)
    report = (await verify_store(store, key.public)).report()
    assert report.startswith("1 record (from record 4), chain intact, last signed at")
    lines = [export_line(r, await store.checkpoints()) for r in records]
    assert "restart" in json.loads(lines[0])
    assert verify_lines(lines, key.public).intact
    # Later appends go on from the kept chain.
    await store.settle("pending", Settlement(Outcome.DISMISSED, via=Surface.WEB))
    assert (await verify_store(store, key.public)).report().startswith("2 records (from")


async def test_pruning_without_a_key_keeps_the_audit_records(
    store: Store, key: AuditKey, tamper: Tamper
) -> None:
    old = datetime.now(UTC) - timedelta(days=40)
    ruled = Settlement(Outcome.ANSWERED, YES, Surface.RULE, "rule:1")
    await store.submit(new("old", asked_at=old, settlement=ruled))
    assert await store.purge(datetime.now(UTC) - timedelta(days=30)) == 1
    assert await store.get("old") is None
    assert [r.seq for r in await store.audit_records()] == [1]
    assert (await verify_store(store, key.public)).report() == (
        "1 record, chain intact, never signed"
    )
    # Deleting pruned history without a signed checkpoint that says so is found.
    await tamper("DELETE FROM {s}audit WHERE seq = 1")
    verdict = await verify_store(store, key.public)
    assert verdict.problem == "records 1 to 1 are missing (the chain's head is record 1)"


async def test_two_postgres_nodes_append_to_one_chain(pg_url: str, key: AuditKey) -> None:
    """Settlements committed at once on two nodes are serialised in the database: one chain,
    one record each, every link whole."""
    from user_questions.host.stores import open_store

    async with open_store(pg_url) as one, open_store(pg_url) as two:
        count = 40
        for number in range(count):
            await one.submit(new(f"r{number}"))

        async def settle(node: Store, numbers: range) -> None:
            for number in numbers:
                settled = Settlement(Outcome.ANSWERED, YES, Surface.WEB, f"node-{number % 2}")
                await node.settle(f"r{number}", settled)

        async with anyio.create_task_group() as group:
            for start in range(4):
                group.start_soon(settle, one if start % 2 else two, range(start, count, 4))
        records = await one.audit_records()
        assert [r.seq for r in records] == list(range(1, count + 1))
        assert sorted(json.loads(r.body)["rpc_id"] for r in records) == sorted(
            f"r{n}" for n in range(count)
        )
        await sign_checkpoint(two, key)
        assert (
            (await verify_store(one, key.public))
            .report()
            .startswith(f"{count} records, chain intact, last signed at")
        )
