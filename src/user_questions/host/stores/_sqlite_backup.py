"""A copy of a `SQLiteStore`'s file, taken while a host writes to it: `uq backup`.

Standard library `sqlite3` only. The copy is made with SQLite's online backup API in one step, which
reads the whole file inside one read transaction: in WAL mode the host's writes go on meanwhile, and
the copy is the store exactly as it was when the step began, every request committed by then
included, nothing half-written. It is written to a private temporary file beside the destination,
checked (`PRAGMA quick_check`), turned into a single self-contained file (rollback journal, no
`-wal`), flushed to disk, and only then renamed into place: a destination that exists is therefore
always a whole, checked copy.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from secrets import token_hex

from user_questions.errors import ErrorCode, UserQuestionError

__all__ = ["BackupSummary", "copy_store"]


@dataclass(frozen=True, slots=True)
class BackupSummary:
    """What a backup holds."""

    destination: Path
    requests: int
    pending: int


def copy_store(source: sqlite3.Connection, destination: Path, url: str) -> BackupSummary:
    """Copy the store open on `source` (named `url` in errors) to the new file `destination`.

    Raises:
        UserQuestionError: `BAD_REQUEST` when `destination` exists or its folder does not;
            `BAD_STORE` when the copy cannot be written or does not check out.
    """
    if destination.exists():
        raise UserQuestionError(
            f"{destination} exists already; give a new file name (a backup never overwrites)",
            ErrorCode.BAD_REQUEST,
        )
    if not destination.parent.is_dir():
        raise UserQuestionError(
            f"there is no folder {destination.parent} to write the backup in",
            ErrorCode.BAD_REQUEST,
        )
    partial = destination.with_name(f".{destination.name}.{token_hex(4)}.partial")
    try:
        os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        summary = _copy(source, partial, destination)
        _flush(partial)
        os.replace(partial, destination)
        _flush(destination.parent)
    except OSError as error:
        raise UserQuestionError(
            f"cannot write the backup of {url} to {destination}: {error.strerror or error}",
            ErrorCode.BAD_STORE,
        ) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return summary


def _copy(source: sqlite3.Connection, partial: Path, destination: Path) -> BackupSummary:
    copy = sqlite3.connect(partial, isolation_level=None)
    try:
        source.backup(copy)  # every page in one step: one consistent snapshot
        copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        check = copy.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise UserQuestionError(
                f"the backup does not check out ({check}); the store itself may be damaged",
                ErrorCode.BAD_STORE,
            )
        requests, pending = copy.execute(
            "SELECT count(*), count(*) FILTER (WHERE state = 'pending') FROM questions"
        ).fetchone()
    except sqlite3.Error as error:
        raise UserQuestionError(f"cannot copy the store: {error}", ErrorCode.BAD_STORE) from None
    finally:
        copy.close()
    return BackupSummary(destination, requests, pending)


def _flush(path: Path) -> None:
    """Make what was written to `path` (a file, or a folder's entries) survive a crash."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
