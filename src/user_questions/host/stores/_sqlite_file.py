"""Opening the file of a `SQLiteStore`: created private, locked against a second host, prepared.

Standard library only. A host's store holds an exclusive lock on `<file>.lock`, which the kernel
releases when the process dies, even by SIGKILL. A command beside the host opens the file without
the lock, and only if it exists.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import IO

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores._sqlite_schema import prepare

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock, one host per file by hand
    fcntl = None  # type: ignore[assignment]

__all__ = ["lock", "open_file"]


def open_file(path: Path, url: str, *, host: bool) -> tuple[sqlite3.Connection, IO[str] | None]:
    """An autocommit connection to the store file at `path`, at the current schema, and (for a
    `host`) the open lock file: close it after the connection. `url` names the store in errors.

    Raises:
        UserQuestionError: `STORE_LOCKED` when another host holds the lock; `BAD_STORE` when
            the file cannot be opened or is not a store, or (not for a host) does not exist.
    """
    if not host and not path.is_file():
        raise UserQuestionError(
            f"there is no store at {url}; give the --store of a host (`uq serve --store "
            f"{url}` creates it)",
            ErrorCode.BAD_STORE,
        )
    lock_file = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if host:
            lock_file = lock(path)
    except OSError as error:
        raise _unusable(url, error) from error
    try:
        # Created private before SQLite opens it; SQLite gives -wal and -shm the same mode.
        os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            prepare(connection, url)
        except BaseException:
            connection.close()
            raise
    except BaseException as error:
        if lock_file is not None:
            lock_file.close()
        if isinstance(error, OSError):
            raise _unusable(url, error) from error
        raise
    return connection, lock_file


def lock(path: Path) -> IO[str]:
    """The open lock file of the store at `path`, locked; `STORE_LOCKED` if another host
    holds it."""
    lock_file = open(f"{path}.lock", "a")  # noqa: SIM115 - held for as long as the store is open
    if fcntl is None:  # pragma: no cover
        return lock_file
    try:
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.close()
        raise UserQuestionError(
            f"another host is using the store {path}; stop it, or give this one its own --store",
            ErrorCode.STORE_LOCKED,
        ) from None
    return lock_file


def _unusable(url: str, error: OSError) -> UserQuestionError:
    return UserQuestionError(
        f"cannot open the store {url}: {error.strerror or error}", ErrorCode.BAD_STORE
    )
