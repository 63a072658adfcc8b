"""Checkpoints: the host signs the chain's latest hash with its key, so that no one without the
key can rewrite the records up to it unnoticed.

A host signs every `CHECKPOINT_INTERVAL` when records were appended since the last checkpoint, and
once more as it stops; `uq audit checkpoint` signs at once. A pruning (`--retain-days`) signs a
checkpoint marked `pruned` at the last record it deletes (`sealer`), and the chain goes on from it.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import anyio

from user_questions.errors import UserQuestionError
from user_questions.host.audit.keys import AuditKey
from user_questions.host.stores import AuditStore, Checkpoint, Seal
from user_questions.host.stores.records import checkpoint_message

__all__ = ["CHECKPOINT_INTERVAL", "keep_signing", "sealer", "sign", "sign_checkpoint"]

logger = logging.getLogger("user_questions.host")

CHECKPOINT_INTERVAL = 600.0
"""Seconds between a host's checkpoints, when records were appended meanwhile."""


def sign(key: AuditKey, seq: int, hash: str, *, pruned: bool = False) -> Checkpoint:
    """A checkpoint, signed now by `key`, of record `seq` whose hash is `hash`."""
    at = datetime.now(UTC)
    signature = key.sign(checkpoint_message(seq, hash, at, pruned))
    return Checkpoint(seq, hash, at, pruned, key.public.text, signature)


def sealer(key: AuditKey) -> Seal:
    """What signs the checkpoint of a pruning (`HistoryStore.purge(seal=...)`)."""
    return lambda seq, hash: sign(key, seq, hash, pruned=True)


async def sign_checkpoint(store: AuditStore, key: AuditKey) -> Checkpoint:
    """Sign the chain as it stands now, and keep the checkpoint in the store."""
    seq, hash = await store.audit_head()
    checkpoint = sign(key, seq, hash)
    await store.add_checkpoint(checkpoint)
    return checkpoint


async def keep_signing(
    store: AuditStore, key: AuditKey, interval: float = CHECKPOINT_INTERVAL
) -> None:
    """Sign a checkpoint every `interval` seconds when the chain grew meanwhile, and as the host
    stops; until cancelled. A failure is logged and tried again next time."""
    signed: tuple[int, str] | None = None
    try:
        while True:
            await anyio.sleep(interval)
            signed = await _sign_if_grown(store, key, signed)
    finally:
        with anyio.CancelScope(shield=True):
            await _sign_if_grown(store, key, signed)


async def _sign_if_grown(
    store: AuditStore, key: AuditKey, signed: tuple[int, str] | None
) -> tuple[int, str] | None:
    try:
        head = await store.audit_head()
        if head == signed or head[0] == 0:
            return signed
        await store.add_checkpoint(sign(key, *head))
    except UserQuestionError as error:
        logger.warning("could not sign the audit log's checkpoint: %s", error)
        return signed
    return head
