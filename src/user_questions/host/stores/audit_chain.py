"""The audit log's arithmetic: canonical JSON, a card's digest, and the hash chain (stdlib only).

Every settlement a store commits is appended, in the same transaction, to its audit log as one
record (`AuditRecord`): a JSON object `body` in canonical form, the hash of the record before it
(`prev`) and its own `hash`, SHA-256 of `prev` followed by `body`. Changing, removing or
reordering a record changes a hash the next record names, so a later reader finds the first
record that does not hold (`host/audit/verify.py`); docs/audit.md defines every byte.

Nothing here needs more than the standard library: the store appends on every answer, and an
auditor recomputes the chain with any SHA-256.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "AUDIT_VERSION",
    "GENESIS",
    "RESERVED_FIELDS",
    "canonical_json",
    "card_digest",
    "chain_hash",
    "record_body",
]

GENESIS = "0" * 64
"""The `prev` of the first record of a chain: no record came before it."""
AUDIT_VERSION = 1
"""The version of the records' format, in each record's `v`."""
RESERVED_FIELDS = frozenset({"seq", "prev", "hash"})
"""The fields of an exported line that are not the record's body."""

_CANONICAL = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
)


def canonical_json(value: Any) -> str:
    """`value` as canonical JSON text: object keys sorted by code point, no whitespace, non-ASCII
    characters as they are (the text is hashed as UTF-8), only `"`, `\\` and control characters
    escaped; numbers as Python writes them (integers in decimal, floats shortest round-trip)."""
    return _CANONICAL.encode(value)


def card_digest(questions_json: str, approval_json: str | None) -> str:
    """A card's digest: SHA-256 (hexadecimal) of the canonical JSON of the object
    `{"approval": ..., "questions": [...]}`, the questions and the approval (`null` for plain
    questions) as the host stored them. Whatever key order or spacing the database gives
    back, the digest is the same."""
    card = {
        "approval": None if approval_json is None else json.loads(approval_json),
        "questions": json.loads(questions_json),
    }
    return hashlib.sha256(canonical_json(card).encode()).hexdigest()


def chain_hash(prev: str, body: str) -> str:
    """A record's hash: SHA-256 (hexadecimal) of the UTF-8 of `prev` (64 hexadecimal digits)
    followed by `body` (its canonical JSON)."""
    return hashlib.sha256((prev + body).encode()).hexdigest()


def record_body(event: str, rpc_id: str, fields: Mapping[str, Any]) -> str:
    """The canonical body of an audit record of `event` about request `rpc_id`: `v`, `event`,
    `rpc_id` and `fields` (none of them named `seq`, `prev` or `hash`)."""
    assert not RESERVED_FIELDS & fields.keys()
    return canonical_json({"v": AUDIT_VERSION, "event": event, "rpc_id": rpc_id, **fields})
