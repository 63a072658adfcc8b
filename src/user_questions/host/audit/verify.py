"""Checking the audit log: a store's (`verify_store`) or an export's (`verify_lines`).

Both walk the chain in order and stop at the first record that does not hold: a hash that is not
SHA-256 of its `prev` and body, a `prev` that is not the hash of the record before it, a gap in the
numbers, a record other than the one a checkpoint signed, or a checkpoint whose signature the
key does not check. A store's check goes on to its requests: each settled one must match its
record (outcome, answer, who, through what, when, and its card's digest recomputed from the
questions as stored), and the chain's head must be its last record. docs/audit.md says what this
proves and what it does not.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from user_questions.host.audit.keys import PublicKey
from user_questions.host.stores import (
    AuditRecord,
    AuditStore,
    Checkpoint,
    HistoryQuery,
    HistoryStore,
    Store,
    StoredQuestion,
)
from user_questions.host.stores.audit_chain import (
    GENESIS,
    RESERVED_FIELDS,
    canonical_json,
    card_digest,
    chain_hash,
)
from user_questions.host.stores.records import audit_time

__all__ = ["EXPORT_FIELDS", "Verdict", "export_line", "verify_lines", "verify_store"]

EXPORT_FIELDS = RESERVED_FIELDS | {"signed", "restart"}
"""The fields of an exported line besides its record's body: `seq`, `prev`, `hash`, the
checkpoints that signed it (`signed`) and the pruning checkpoint it restarts from (`restart`)."""
_SETTLED_EVENTS = frozenset({"settled", "imported"})
_REQUESTS_PAGE = 500


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a check found: `problem` is `None` when everything holds."""

    records: int
    first: int
    """The number of the first record checked (after a pruning, or in an export `--since`)."""
    last_signed: datetime | None
    """When the last checkpoint over the records checked was signed."""
    unsigned: int
    """Records after the last signed one."""
    problem: str | None = None

    @property
    def intact(self) -> bool:
        return self.problem is None

    def report(self) -> str:
        """One line: `N records, chain intact, last signed at ...`, or the problem."""
        if self.problem is not None:
            return self.problem
        count = f"{self.records} record{'' if self.records == 1 else 's'}"
        if self.first > 1:
            count += f" (from record {self.first})"
        signed = "never signed"
        if self.last_signed is not None:
            signed = f"last signed at {audit_time(self.last_signed)}"
            if self.unsigned:
                signed += f" ({self.unsigned} since)"
        return f"{count}, chain intact, {signed}"


class _Broken(Exception):
    """The first thing that does not hold, in words that name it."""


class _Chain:
    """The walk along the chain, record by record."""

    def __init__(self, key: PublicKey | None) -> None:
        self.key = key
        self.count = 0
        self.first = 0
        self.last: AuditRecord | None = None
        self.signed_seq = 0
        self.last_signed: datetime | None = None

    def signature(self, checkpoint: Checkpoint) -> None:
        """Check a checkpoint's signature, and count it as the latest signing so far."""
        where = f"the checkpoint of {audit_time(checkpoint.at)} (record {checkpoint.seq})"
        if self.key is None:
            raise _Broken(f"{where} cannot be checked without the host's public key (--key)")
        if checkpoint.key != self.key.text:
            raise _Broken(f"{where} was signed by another key ({checkpoint.key})")
        if not self.key.holds(checkpoint.message, checkpoint.signature):
            raise _Broken(f"{where}: its signature does not hold")
        if checkpoint.seq >= self.signed_seq:
            self.signed_seq = checkpoint.seq
            if self.last_signed is None or checkpoint.at > self.last_signed:
                self.last_signed = checkpoint.at

    def start(self, record: AuditRecord, restart: Sequence[Checkpoint], partial: bool) -> None:
        """The first record: the chain's first, or the one after a signed pruning (or, in an
        export from a later record, any)."""
        for checkpoint in restart:
            if checkpoint.pruned and checkpoint.seq == record.seq - 1:
                self.signature(checkpoint)
                if checkpoint.hash != record.prev:
                    raise _Broken(
                        f"record {record.seq}: its prev is not the hash the pruning checkpoint "
                        f"of {audit_time(checkpoint.at)} signed"
                    )
                return
        if record.seq == 1 and record.prev == GENESIS:
            return
        if not partial:
            raise _Broken(
                f"record {record.seq}: the records before it are missing, and no signed "
                "checkpoint says they were pruned"
            )

    def add(self, record: AuditRecord, checkpoints: Sequence[Checkpoint], partial: bool) -> Any:
        """Check `record` after the ones before it, and the checkpoints that signed it; its body,
        parsed."""
        if self.last is None:
            self.first = record.seq
            self.start(record, checkpoints, partial)
        elif record.seq != self.last.seq + 1:
            raise _Broken(
                f"record {record.seq}: it follows record {self.last.seq} "
                f"(record {self.last.seq + 1} is missing or out of order)"
            )
        elif record.prev != self.last.hash:
            raise _Broken(
                f"record {record.seq}: its prev is not the hash of record {self.last.seq}"
            )
        if chain_hash(record.prev, record.body) != record.hash:
            raise _Broken(f"record {record.seq}: its hash does not match its contents")
        for checkpoint in checkpoints:
            if checkpoint.seq != record.seq:
                continue
            self.signature(checkpoint)
            if checkpoint.hash != record.hash:
                raise _Broken(
                    f"record {record.seq}: it is not the record the checkpoint of "
                    f"{audit_time(checkpoint.at)} signed"
                )
        self.count += 1
        self.last = record
        try:
            body = json.loads(record.body)
        except ValueError:
            raise _Broken(f"record {record.seq}: its body is not JSON") from None
        if not isinstance(body, dict):
            raise _Broken(f"record {record.seq}: its body is not a JSON object")
        return body

    def verdict(self) -> Verdict:
        last = 0 if self.last is None else self.last.seq
        unsigned = last - self.signed_seq if self.last_signed is not None else self.count
        return Verdict(self.count, self.first, self.last_signed, max(unsigned, 0))


async def verify_store(store: Store, key: PublicKey | None) -> Verdict:
    """Check the store's chain, its checkpoints, its head and its settled requests with `key`
    (`None`: a store with no checkpoint needs none)."""
    checkpoints = await store.checkpoints()
    by_seq: dict[int, list[Checkpoint]] = defaultdict(list)
    for checkpoint in checkpoints:
        by_seq[checkpoint.seq].append(checkpoint)
    chain = _Chain(key)
    recorded: dict[str, tuple[int, dict[str, Any]]] = {}
    try:
        after = 0
        while page := await store.audit_records(after):
            for record in page:
                restart = by_seq.get(record.seq - 1, []) if chain.last is None else []
                body = chain.add(record, [*restart, *by_seq.get(record.seq, [])], False)
                if body.get("event") in _SETTLED_EVENTS:
                    recorded[str(body.get("rpc_id"))] = (record.seq, body)
            after = page[-1].seq
        await _check_end(store, chain, checkpoints)
        await _check_requests(store, recorded)
    except _Broken as broken:
        return _broken(chain, str(broken))
    return chain.verdict()


async def _check_end(store: AuditStore, chain: _Chain, checkpoints: list[Checkpoint]) -> None:
    """The head names the last record, and no checkpoint signed one after it."""
    seq, hash = await store.audit_head()
    last = chain.last
    if last is None:
        restarted = any(c.pruned and (c.seq, c.hash) == (seq, hash) for c in checkpoints)
        if (seq, hash) != (0, GENESIS) and not restarted:
            raise _Broken(f"records 1 to {seq} are missing (the chain's head is record {seq})")
    elif (last.seq, last.hash) != (seq, hash):
        raise _Broken(
            f"record {last.seq + 1 if seq > last.seq else last.seq}: the chain's head is record "
            f"{seq}, but the last record is {last.seq}"
            + (" (the records after it are missing)" if seq > last.seq else "")
        )
    for checkpoint in checkpoints:
        chain.signature(checkpoint)
        if checkpoint.seq > seq:
            raise _Broken(
                f"record {seq + 1}: missing, though the checkpoint of "
                f"{audit_time(checkpoint.at)} signed the chain up to record {checkpoint.seq}"
            )


async def _check_requests(
    store: HistoryStore, recorded: dict[str, tuple[int, dict[str, Any]]]
) -> None:
    """Every settled request matches its record."""
    cursor = None
    while True:
        page = await store.history(HistoryQuery(before=cursor, limit=_REQUESTS_PAGE))
        for request in page.records:
            found = recorded.get(request.rpc_id)
            if found is None:
                raise _Broken(
                    f"request {json.dumps(request.rpc_id)} is settled ({request.state}) but "
                    "has no audit record"
                )
            seq, body = found
            differs = _differences(request, body)
            if differs:
                raise _Broken(
                    f"record {seq}: request {json.dumps(request.rpc_id)} as stored differs "
                    f"from it in {', '.join(differs)}"
                )
        if page.next is None:
            return
        cursor = page.next


def _differences(request: StoredQuestion, body: dict[str, Any]) -> list[str]:
    """The fields of the settled `request` that are not as its record says."""
    approval = None if request.approval is None else request.approval.model_dump_json()
    assert request.questions_json is not None  # read from the store
    answer = None if request.answer is None else json.loads(request.answer.model_dump_json())
    stored = {
        "digest": card_digest(request.questions_json, approval),
        "outcome": str(request.state),
        "answer": None if answer is None else canonical_json(answer),
        "by": request.settled_by,
        "via": None if request.settled_via is None else str(request.settled_via),
        "channel": request.channel,
        "note": request.note,
        "at": None if request.settled_at is None else audit_time(request.settled_at),
    }
    kept = dict(body)
    if kept.get("answer") is not None:
        kept["answer"] = canonical_json(kept["answer"])
    names = {"digest": "the card (its questions or approval)"}
    return [names.get(name, name) for name, value in stored.items() if kept.get(name) != value]


def export_line(record: AuditRecord, checkpoints: Sequence[Checkpoint]) -> str:
    """`record` as a line of an export: its body's fields, `seq`, `prev`, `hash`, and the
    signatures of the checkpoints at it (`signed`) or of the pruning it follows (`restart`)."""
    line: dict[str, Any] = json.loads(record.body)
    line |= {"seq": record.seq, "prev": record.prev, "hash": record.hash}
    signed = [_signature(c) for c in checkpoints if c.seq == record.seq]
    restart = [c for c in checkpoints if c.pruned and c.seq == record.seq - 1]
    if signed:
        line["signed"] = signed
    if restart:
        line["restart"] = _signature(restart[-1])
    return canonical_json(line)


def verify_lines(lines: Iterable[str], key: PublicKey) -> Verdict:
    """Check an export (`export_line`s, in order) with `key`, offline."""
    chain = _Chain(key)
    try:
        for number, text in enumerate(lines, 1):
            if not text.strip():
                continue
            record, checkpoints = _read_line(number, text)
            chain.add(record, checkpoints, True)
    except _Broken as broken:
        return _broken(chain, str(broken))
    return chain.verdict()


def _read_line(number: int, text: str) -> tuple[AuditRecord, list[Checkpoint]]:
    try:
        line = json.loads(text)
        seq, prev, hash = line["seq"], line["prev"], line["hash"]
        if not (type(seq) is int and isinstance(prev, str) and isinstance(hash, str)):
            raise TypeError
        body = canonical_json({k: v for k, v in line.items() if k not in EXPORT_FIELDS})
        checkpoints = [_checkpoint(seq, hash, False, entry) for entry in line.get("signed", [])]
        if "restart" in line:
            checkpoints.append(_checkpoint(seq - 1, prev, True, line["restart"]))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise _Broken(
            f"line {number}: not an audit record (a JSON object with seq, prev and hash, and "
            "signatures as an export writes them)"
        ) from None
    return AuditRecord(seq, prev, hash, body), checkpoints


def _signature(checkpoint: Checkpoint) -> dict[str, Any]:
    return {
        "at": audit_time(checkpoint.at),
        "pruned": checkpoint.pruned,
        "key": checkpoint.key,
        "signature": checkpoint.signature,
    }


def _checkpoint(seq: int, hash: str, pruned: bool, entry: dict[str, Any]) -> Checkpoint:
    at, key, signature = entry["at"], entry["key"], entry["signature"]
    if not (isinstance(key, str) and isinstance(signature, str)):
        raise TypeError
    return Checkpoint(seq, hash, datetime.fromisoformat(at), pruned, key, signature)


def _broken(chain: _Chain, problem: str) -> Verdict:
    verdict = chain.verdict()
    return Verdict(verdict.records, verdict.first, verdict.last_signed, verdict.unsigned, problem)
