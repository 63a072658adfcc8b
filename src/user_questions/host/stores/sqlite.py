"""`SQLiteStore`: the embedded default store, one SQLite file in WAL mode.

Level 8. Uses the standard library's `sqlite3` through `anyio.to_thread.run_sync`, one
connection serialised by a `CapacityLimiter(1)`, so the event loop never waits on the disk.
Every write is one statement in autocommit mode, committed with `synchronous=FULL`: when a
method returns, the row survives a crash of the process and of the machine.

One host per file: opening takes an exclusive lock (`<file>.lock`, released by the kernel when
the process dies, even by SIGKILL), because a second host on the same file would never hear of
the first one's questions. So this store never calls its `on_change` listeners.

The schema carries its version in `PRAGMA user_version`; a file written by a newer version is
refused rather than guessed at.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self, TypeVar, cast

import anyio
from pydantic import TypeAdapter

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import (
    ChangeListener,
    NewQuestion,
    QuestionState,
    Settlement,
    StoredQuestion,
)
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock, one host per file by hand
    fcntl = None  # type: ignore[assignment]

__all__ = ["SCHEMA_VERSION", "SQLiteStore"]

SCHEMA_VERSION = 1
"""The schema this code writes; `_MIGRATIONS[n]` brings a file from version n to n + 1."""

_MIGRATIONS: Sequence[str] = (
    """
    CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE questions (
        seq INTEGER PRIMARY KEY,
        rpc_id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        questions TEXT NOT NULL,
        asked_at TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        answer TEXT,
        settled_at TEXT,
        settled_via TEXT
    );
    CREATE INDEX questions_pending ON questions (seq) WHERE state = 'pending';
    """,
)

_COLUMNS = "rpc_id, session_id, questions, asked_at, state, answer, settled_at, settled_via"
_QUESTIONS = TypeAdapter(list[AskUserQuestionItem])

T = TypeVar("T")


class SQLiteStore:
    """A `Store` in one SQLite file; see the module docstring for how it differs.

    `path` is the file, or an existing folder to keep `host.db` in.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            self.path = self.path / "host.db"
        self.url = str(self.path)
        self._connection: sqlite3.Connection | None = None
        self._lock_file: IO[str] | None = None
        self._limiter: anyio.CapacityLimiter | None = None

    def __repr__(self) -> str:
        return f"<SQLiteStore {self.url}>"

    async def __aenter__(self) -> Self:
        self._limiter = anyio.CapacityLimiter(1)
        await self._run(self._open)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with anyio.CancelScope(shield=True):
            await self._run(self._close)

    async def setting(self, key: str, default: str) -> str:
        return await self._run(self._setting, key, default)

    async def set_setting(self, key: str, value: str) -> None:
        await self._run(
            self._execute,
            "INSERT INTO settings (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    async def submit(self, question: NewQuestion) -> tuple[StoredQuestion, bool]:
        return await self._run(self._submit, question)

    async def settle(self, rpc_id: str, settlement: Settlement) -> StoredQuestion | None:
        answer = None if settlement.answer is None else settlement.answer.model_dump_json()
        found = await self._run(
            self._query,
            "UPDATE questions SET state = ?, answer = ?, settled_at = ?, settled_via = ? "
            f"WHERE rpc_id = ? AND state = 'pending' RETURNING {_COLUMNS}",
            (settlement.outcome, answer, _now(), settlement.via, rpc_id),
        )
        return found[0] if found else None

    async def get(self, rpc_id: str) -> StoredQuestion | None:
        found = await self._run(
            self._query, f"SELECT {_COLUMNS} FROM questions WHERE rpc_id = ?", (rpc_id,)
        )
        return found[0] if found else None

    async def pending(self) -> list[StoredQuestion]:
        return await self._run(
            self._query,
            f"SELECT {_COLUMNS} FROM questions WHERE state = 'pending' ORDER BY seq",
            (),
        )

    def on_change(self, listener: ChangeListener) -> Callable[[], None]:
        return _no_listener

    # -- in the worker thread ---------------------------------------------------------------

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(function, *args, limiter=self._limiter)

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._lock_file = _lock(self.path)
        except OSError as error:
            raise _unusable(self.url, error) from error
        try:
            # Created private before SQLite opens it; SQLite gives -wal and -shm the same mode.
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            try:
                _prepare(connection, self.url)
            except BaseException:
                connection.close()
                raise
        except BaseException as error:
            self._lock_file.close()
            self._lock_file = None
            if isinstance(error, OSError):
                raise _unusable(self.url, error) from error
            raise
        self._connection = connection

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            raise RuntimeError("the store is not open: use `async with store:`")
        return self._connection

    def _execute(self, sql: str, parameters: Sequence[object]) -> list[tuple[Any, ...]]:
        # fetchall() runs the statement to its end, which is what commits it in autocommit mode.
        return self._db().execute(sql, parameters).fetchall()

    def _query(self, sql: str, parameters: Sequence[object]) -> list[StoredQuestion]:
        # Rows are read into records here, in the worker thread, not on the event loop.
        return [_record(row) for row in self._execute(sql, parameters)]

    def _setting(self, key: str, default: str) -> str:
        db = self._db()
        with _transaction(db):
            db.execute(
                "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (key, default),
            )
            row = db.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        value: str = row[0]
        return value

    def _submit(self, question: NewQuestion) -> tuple[StoredQuestion, bool]:
        inserted = self._db().execute(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (rpc_id) DO NOTHING",
            (
                question.rpc_id,
                question.session_id,
                _QUESTIONS.dump_json(list(question.questions)).decode(),
                question.asked_at.isoformat(),
            ),
        )
        if inserted.rowcount == 1:  # stored as given: no need to read it back
            record = StoredQuestion(
                question.rpc_id,
                question.session_id,
                tuple(question.questions),
                question.asked_at,
                "pending",
            )
            return record, True
        existing = self._query(
            f"SELECT {_COLUMNS} FROM questions WHERE rpc_id = ?", (question.rpc_id,)
        )
        return existing[0], False


def _lock(path: Path) -> IO[str]:
    lock_file = open(f"{path}.lock", "a")  # noqa: SIM115 - held for as long as the store is open
    if fcntl is None:  # pragma: no cover
        return lock_file
    try:
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.close()
        raise UserQuestionError(
            f"another host is using the store {path}; stop it, or give this one its own --db",
            ErrorCode.STORE_LOCKED,
        ) from None
    return lock_file


def _unusable(url: str, error: OSError) -> UserQuestionError:
    return UserQuestionError(
        f"cannot open the store {url}: {error.strerror or error}", ErrorCode.BAD_STORE
    )


def _prepare(connection: sqlite3.Connection, url: str) -> None:
    """WAL, full sync, and the schema at `SCHEMA_VERSION`."""
    try:
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA busy_timeout = 5000")
        version: int = connection.execute("PRAGMA user_version").fetchone()[0]
        tables: int = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as error:
        raise UserQuestionError(
            f"the store {url} is not a user-questions SQLite store: {error}", ErrorCode.BAD_STORE
        ) from error
    if version == 0 and tables:
        raise UserQuestionError(
            f"the store {url} is a SQLite file of another application; give the host its own",
            ErrorCode.BAD_STORE,
        )
    if mode != "wal":
        raise UserQuestionError(
            f"the store {url} cannot use WAL mode (got {mode!r}); put it on a local disk",
            ErrorCode.BAD_STORE,
        )
    if version > SCHEMA_VERSION:
        raise UserQuestionError(
            f"the store {url} has schema version {version}, newer than this user-questions "
            f"understands ({SCHEMA_VERSION}); upgrade user-questions",
            ErrorCode.BAD_STORE,
        )
    for number in range(version, SCHEMA_VERSION):
        with _transaction(connection):
            for statement in _MIGRATIONS[number].split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {number + 1}")


@contextlib.contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _record(row: tuple[Any, ...]) -> StoredQuestion:
    rpc_id, session_id, questions, asked_at, state, answer, settled_at, settled_via = row
    return StoredQuestion(
        rpc_id=rpc_id,
        session_id=session_id,
        questions=tuple(_QUESTIONS.validate_json(questions)),
        asked_at=datetime.fromisoformat(asked_at),
        state=cast(QuestionState, state),
        answer=None if answer is None else AskUserQuestionAnswer.model_validate_json(answer),
        settled_at=None if settled_at is None else datetime.fromisoformat(settled_at),
        settled_via=settled_via,
    )


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _no_listener() -> None:
    return None
