"""`uq audit verify|export|checkpoint`: the audit log of a host's store, checked, exported, signed.

Each opens the store beside any host running on it (as `uq token` does). The store is `--store`
or `--db` (both spellings, neither deprecated here: scripts and auditors call `uq audit verify
--db PATH`), else `$UQ_STORE`, else the default one. The key is `--key`, else the one beside a
SQLite store (`STORE.audit-key`, its public half `STORE.audit-key.pub`); a PostgreSQL store needs
`--key`. docs/audit.md has the formats.

`verify` prints one line and exits 0 when everything holds ("N records, chain intact, last
signed at ...") or 1 naming the first record that does not; `--file EXPORT --key KEY.pub` checks
an export offline, without a store. `export` prints JSON Lines on stdout and nothing else. Exit
status 2: bad input, a key that cannot be used, or a store that cannot be read.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, TypeVar

import anyio
from cyclopts import App, Parameter

from user_questions.cli._serve import fail
from user_questions.cli._store_option import STORE_HELP
from user_questions.errors import UserQuestionError
from user_questions.host.audit.checkpoints import sign_checkpoint
from user_questions.host.audit.keys import (
    PublicKey,
    default_key_path,
    load_public_key,
    open_key,
)
from user_questions.host.audit.verify import export_line, verify_lines, verify_store
from user_questions.host.stores import Store, default_store_path, open_store
from user_questions.host.stores.records import audit_time

__all__ = ["audit_app"]

T = TypeVar("T")

audit_app = App(
    name="audit",
    help="The audit log: every settlement, hash-chained and signed; check it, export it, sign it.",
)

AuditStoreOption = Annotated[str | None, Parameter(name=["--store", "--db"], help=STORE_HELP)]
KeyOption = Annotated[
    str | None,
    Parameter(
        help="The audit key file (its public half, FILE.pub, is enough to verify). Default: "
        "STORE.audit-key beside a SQLite store; a PostgreSQL store needs it."
    ),
]


@audit_app.command(name="verify")
def verify(
    *,
    store: AuditStoreOption = None,
    key: KeyOption = None,
    file: Annotated[str | None, Parameter(help="Check this export offline, not a store.")] = None,
) -> None:
    """Check the audit log: its chain, its signed checkpoints, and that every settled question
    in the store is as its record says. Exit status: 0 intact, 1 not (the first record that
    does not hold is named), 2 bad input."""
    if file is not None:
        if key is None:
            fail("audit verify", "--file needs --key: the host's public key (KEY.pub)", 2)
        public = _public_key(Path(key))
        try:
            with open(file, encoding="utf-8") as lines:
                verdict = verify_lines(lines, public)
        except (OSError, UnicodeDecodeError) as error:
            fail("audit verify", f"cannot read {file}: {error}", 2)
    else:
        chosen = _store(store)
        path = _key_path(chosen, key, public=True)
        # No key beside the store yet: nothing was signed, the chain is checked all the same.
        found = _public_key(path) if key is not None or path.exists() else None
        verdict = _with_store(chosen, lambda opened: verify_store(opened, found))
    print(verdict.report(), flush=True)
    if not verdict.intact:
        raise SystemExit(1)


@audit_app.command(name="export")
def export(
    *,
    store: AuditStoreOption = None,
    since: Annotated[
        str | None,
        Parameter(help="Only the records made at or after this ISO 8601 time (UTC if no zone)."),
    ] = None,
) -> None:
    """Print the audit log as JSON Lines: each record's fields with seq, prev and hash, and the
    signatures of the checkpoints over it; `uq audit verify --file` checks it offline."""
    start = None if since is None else _moment(since)

    async def write(opened: Store) -> None:
        checkpoints = await opened.checkpoints()
        after = 0 if start is None else await opened.audit_since(start)
        while page := await opened.audit_records(after):
            sys.stdout.write("".join(export_line(r, checkpoints) + "\n" for r in page))
            after = page[-1].seq
        sys.stdout.flush()

    _with_store(_store(store), write)


@audit_app.command(name="checkpoint")
def checkpoint(*, store: AuditStoreOption = None, key: KeyOption = None) -> None:
    """Sign the audit log as it stands now with the host's key (made when missing)."""
    chosen = _store(store)
    path = _key_path(chosen, key, public=False)
    try:
        private = open_key(path)
    except UserQuestionError as error:
        fail("audit checkpoint", error.message, 2)
    signed = _with_store(chosen, lambda opened: sign_checkpoint(opened, private))
    print(f"signed record {signed.seq} at {audit_time(signed.at)}", flush=True)


def _store(given: str | None) -> str:
    return given or os.environ.get("UQ_STORE") or os.environ.get("UQ_DB") or ""


def _key_path(store: str, key: str | None, *, public: bool) -> Path:
    if key is not None:
        return Path(key)
    path = default_key_path(store or str(default_store_path()))
    if path is None:
        fail("audit", "a PostgreSQL store's audit key is not beside it: give --key", 2)
    pub = Path(f"{path}.pub")
    return pub if public and pub.exists() else path


def _public_key(path: Path) -> PublicKey:
    try:
        return load_public_key(path)
    except UserQuestionError as error:
        fail("audit verify", error.message, 2)


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        fail("audit export", f"--since must be an ISO 8601 time (2025-06-01T12:00Z): {text!r}", 2)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _with_store(store: str, work: Callable[[Store], Awaitable[T]]) -> T:
    """`work` on the store, beside any host; any failure is one line on stderr, status 2."""

    async def run() -> T:
        async with open_store(store or str(default_store_path()), host=False) as opened:
            return await work(opened)

    try:
        return anyio.run(run)
    except UserQuestionError as error:
        fail("audit", error.message, 2)
