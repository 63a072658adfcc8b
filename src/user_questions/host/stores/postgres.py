"""`PostgresStore`: one PostgreSQL database shared by several hosts (`uq serve` nodes).

Level 8; needs the `postgres` extra (psycopg 3) and the asyncio backend. The tables are the
source of truth. Every write is one statement that also sends `NOTIFY user_questions, '<rpcId>'`,
so the notification is committed with the write, or not at all. A notification only wakes the
other nodes, which re-read the row: a dedicated connection `LISTEN`s, reconnects with backoff
when it is cut, and after every (re)connection tells the listeners `None` (re-read everything),
because notifications sent while it was away are gone. So a lost notification delays a change
until the next reconnection at worst, and loses nothing. Adding or revoking a named token sends
`NOTIFY user_questions_tokens` the same way, so every node reloads its tokens at once.

A store opened with `host=False` (`uq token`, `uq history`) does not listen at all.

Settling is `UPDATE ... WHERE rpc_id = ? AND state = 'pending' RETURNING ...`: of two nodes
answering at once exactly one gets the row back. Each settle carries a fresh `settle_id`, so
retrying it after a connection cut mid-statement recognises its own earlier win.

Queries run on at most `POOL_SIZE` connections, opened on demand. A connection that fails is
dropped; a statement that failed on a connection that had been idle (it may have died with a
database restart) is retried once on a new one, and otherwise raises `STORE_UNAVAILABLE`. The
next call connects again, so the store recovers by itself when the database is back.

The schema lives in the PostgreSQL schema `user_questions` (so it shares a database with other
applications without clashing) and carries its version in `user_questions.schema_version`. The
store creates and migrates it at start-up, under an advisory lock, so nodes that start together
migrate once; a database written by a newer version is refused.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeVar, cast

import anyio
import psycopg
from anyio.abc import TaskGroup, TaskStatus
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import TupleRow
from pydantic import TypeAdapter

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import (
    ChangeListener,
    HistoryPage,
    HistoryQuery,
    NewQuestion,
    QuestionState,
    Settlement,
    StoredQuestion,
    TokenRecord,
    TokensListener,
)
from user_questions.host.stores._shared import (
    answer_text,
    decode_cursor,
    encode_cursor,
    like_pattern,
    question_text,
)
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = [
    "CHANNEL",
    "TOKENS_CHANNEL",
    "LISTEN_HEARTBEAT",
    "POOL_SIZE",
    "SCHEMA",
    "SCHEMA_VERSION",
    "PostgresStore",
    "printable_url",
]

logger = logging.getLogger("user_questions.host")

SCHEMA = "user_questions"
"""The PostgreSQL schema holding the store's tables."""
SCHEMA_VERSION = 2
"""The schema this code writes; `_MIGRATIONS[n]` brings a database from version n to n + 1."""
CHANNEL = "user_questions"
"""The NOTIFY channel; each payload is the rpcId of the request that changed."""
TOKENS_CHANNEL = "user_questions_tokens"
"""The NOTIFY channel of named tokens; each payload is the name of the token added or revoked."""
POOL_SIZE = 4
"""Connections one store uses for its queries at most (the listener has its own)."""
CONNECT_TIMEOUT = 10
"""Seconds to wait for a connection, unless the URL sets `connect_timeout`."""
LISTEN_HEARTBEAT = 30.0
"""Seconds of silence after which the listening connection is checked with a query."""
BACKOFF_FIRST = 0.05
"""Seconds before the listener's first reconnection attempt; doubled after each failure."""
BACKOFF_MAX = 2.0
"""The longest pause between the listener's reconnection attempts."""
APPLICATION_NAME = "user-questions"
"""How the store's connections appear in `pg_stat_activity`, unless the URL names them."""

_LOCK_KEY = 0x75715F7363686D61  # "uq_schma": the advisory lock that serialises migrations

Connection = psycopg.AsyncConnection[TupleRow]
T = TypeVar("T")
_QUESTIONS = TypeAdapter(list[AskUserQuestionItem])


async def _records_and_people(connection: Connection) -> None:
    """Version 2: who asked, when first shown, who settled, the search text, the `timed-out`
    state; named tokens."""
    await connection.execute(
        f"""
        ALTER TABLE {SCHEMA}.questions
            ADD COLUMN asked_by text,
            ADD COLUMN shown_at timestamptz,
            ADD COLUMN settled_by text,
            ADD COLUMN search text NOT NULL DEFAULT '',
            DROP CONSTRAINT questions_state_check,
            ADD CONSTRAINT questions_state_check CHECK (
                state IN ('pending', 'answered', 'cancelled', 'withdrawn', 'timed-out'));
        CREATE INDEX questions_settled ON {SCHEMA}.questions (settled_at DESC, seq DESC)
            WHERE state <> 'pending';
        CREATE TABLE {SCHEMA}.tokens (
            name text PRIMARY KEY,
            token_hash text NOT NULL UNIQUE,
            created_at timestamptz NOT NULL,
            last_used_at timestamptz,
            revoked_at timestamptz
        );
        """
    )
    cursor = await connection.execute(
        f"SELECT seq, questions::text, answer::text FROM {SCHEMA}.questions"
    )
    searches = []
    for seq, questions, answer in await cursor.fetchall():
        parsed = None if answer is None else AskUserQuestionAnswer.model_validate_json(answer)
        text = question_text(_QUESTIONS.validate_json(questions)) + answer_text(parsed)
        searches.append((text, seq))
    async with connection.cursor() as updates:
        await updates.executemany(
            f"UPDATE {SCHEMA}.questions SET search = %s WHERE seq = %s", searches
        )


_MIGRATIONS: Sequence[str | Callable[[Connection], Awaitable[None]]] = (
    f"""
    CREATE TABLE {SCHEMA}.settings (key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE {SCHEMA}.questions (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        rpc_id text NOT NULL UNIQUE,
        session_id text NOT NULL,
        questions jsonb NOT NULL,
        asked_at timestamptz NOT NULL,
        state text NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'answered', 'cancelled', 'withdrawn')),
        answer jsonb,
        settled_at timestamptz,
        settled_via text,
        settle_id uuid
    );
    CREATE INDEX questions_pending ON {SCHEMA}.questions (seq) WHERE state = 'pending';
    """,
    _records_and_people,
)

_COLUMNS = (
    "rpc_id, session_id, questions::text, asked_at, state, answer::text, settled_at, settled_via, "
    "asked_by, shown_at, settled_by"
)
_SELECT = f"SELECT {_COLUMNS} FROM {SCHEMA}.questions"
_NOTIFY = f"pg_notify('{CHANNEL}', rpc_id)"
_SUBMIT = f"""
    WITH created AS (
        INSERT INTO {SCHEMA}.questions
            (rpc_id, session_id, questions, asked_at, asked_by, shown_at, search)
        VALUES (%s, %s, %s::jsonb, %s, %s, %s, %s) ON CONFLICT (rpc_id) DO NOTHING RETURNING *
    )
    SELECT {_COLUMNS}, {_NOTIFY} FROM created
"""
_SETTLE = f"""
    WITH settled AS (
        UPDATE {SCHEMA}.questions
        SET state = %s, answer = %s::jsonb, settled_at = coalesce(settled_at, now()),
            settled_via = %s, settled_by = %s, settle_id = %s,
            search = CASE WHEN state = 'pending' THEN search || %s ELSE search END
        WHERE rpc_id = %s AND (state = 'pending' OR settle_id = %s)
        RETURNING *
    )
    SELECT {_COLUMNS}, {_NOTIFY} FROM settled
"""
_TOKEN_COLUMNS = "name, token_hash, created_at, last_used_at, revoked_at"
_TOKENS_NOTIFY = f"pg_notify('{TOKENS_CHANNEL}', name)"
_ADD_TOKEN = f"""
    WITH added AS (
        INSERT INTO {SCHEMA}.tokens (name, token_hash, created_at) VALUES (%s, %s, %s)
        ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash,
            created_at = excluded.created_at, last_used_at = NULL, revoked_at = NULL
        WHERE {SCHEMA}.tokens.revoked_at IS NOT NULL
        RETURNING name
    )
    SELECT name, {_TOKENS_NOTIFY} FROM added
"""
_REVOKE_TOKEN = f"""
    WITH revoked AS (
        UPDATE {SCHEMA}.tokens SET revoked_at = now()
        WHERE name = %s AND revoked_at IS NULL RETURNING *
    )
    SELECT {_TOKEN_COLUMNS}, {_TOKENS_NOTIFY} FROM revoked
"""
_DOWN = (psycopg.OperationalError, psycopg.InterfaceError)
"""What psycopg raises when the database cannot be reached, or went away mid-statement."""


class PostgresStore:
    """A `Store` in a PostgreSQL database that several hosts share; see the module docstring.

    `url` is a libpq URL (`postgresql://user:password@host:5432/db?sslmode=require`, or
    `postgresql://user@/db?host=/run/postgresql` for a Unix socket); `self.url` is the same URL
    without its password. Writes made through this store are not echoed to its own listeners:
    its hub applies them itself.

    Raises:
        UserQuestionError: `BAD_STORE` for a URL that libpq cannot parse.
    """

    def __init__(self, url: str, *, host: bool = True) -> None:
        self.url = printable_url(url)
        self.host = host
        try:
            given = conninfo_to_dict(url)
        except psycopg.ProgrammingError as error:
            raise UserQuestionError(
                f"the store URL {self.url} is not a valid PostgreSQL URL: {_first_line(error)}",
                ErrorCode.BAD_STORE,
            ) from None
        self._conninfo = url
        self._name = str(given.get("application_name") or APPLICATION_NAME)
        self._timeout = None if "connect_timeout" in given else CONNECT_TIMEOUT
        self._listeners: list[ChangeListener] = []
        self._tokens_listeners: list[TokensListener] = []
        self._idle: list[Connection] = []
        self._pids: set[int] = set()
        """Backends of this store's own connections, whose notifications are its own writes."""
        self._slots: anyio.Semaphore | None = None
        self._task_group: TaskGroup | None = None

    def __repr__(self) -> str:
        return f"<PostgresStore {self.url}>"

    async def __aenter__(self) -> Self:
        self._slots = anyio.Semaphore(POOL_SIZE)
        try:
            await self._run(self._migrate)
            if not self.host:
                return self
            self._task_group = anyio.create_task_group()
            await self._task_group.__aenter__()
            try:
                await self._task_group.start(self._listen)
            except BaseException as error:
                await self._stop_listening(type(error), error, error.__traceback__)
                raise
        except BaseException:
            await self._close_idle()
            self._slots = None
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self._stop_listening(exc_type, exc, tb)
        finally:
            await self._close_idle()
            self._slots = None

    async def setting(self, key: str, default: str) -> str:
        async def read(connection: Connection) -> str:
            async with connection.transaction():
                await connection.execute(
                    f"INSERT INTO {SCHEMA}.settings (key, value) VALUES (%s, %s) "
                    "ON CONFLICT (key) DO NOTHING",
                    (key, default),
                )
                # A statement of its own: its snapshot sees a value another node just stored.
                cursor = await connection.execute(
                    f"SELECT value FROM {SCHEMA}.settings WHERE key = %s", (key,)
                )
                row = await cursor.fetchone()
            assert row is not None
            return cast(str, row[0])

        return await self._run(read)

    async def set_setting(self, key: str, value: str) -> None:
        async def write(connection: Connection) -> None:
            await connection.execute(
                f"INSERT INTO {SCHEMA}.settings (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

        await self._run(write)

    async def submit(self, question: NewQuestion) -> tuple[StoredQuestion, bool]:
        questions = _QUESTIONS.dump_json(list(question.questions)).decode()
        parameters = (
            question.rpc_id,
            question.session_id,
            questions,
            question.asked_at,
            question.asked_by,
            question.shown_at,
            question_text(question.questions),
        )

        async def insert(connection: Connection) -> tuple[StoredQuestion, bool]:
            created = await _records(connection, _SUBMIT, parameters)
            if created:
                return created[0], True
            existing = await _records(
                connection, f"{_SELECT} WHERE rpc_id = %s", (question.rpc_id,)
            )
            return existing[0], False

        return await self._run(insert)

    async def settle(self, rpc_id: str, settlement: Settlement) -> StoredQuestion | None:
        answer = None if settlement.answer is None else settlement.answer.model_dump_json()
        settle_id = uuid.uuid4()
        parameters = (
            settlement.outcome,
            answer,
            settlement.via,
            settlement.by,
            settle_id,
            answer_text(settlement.answer),
            rpc_id,
            settle_id,
        )

        async def update(connection: Connection) -> StoredQuestion | None:
            found = await _records(connection, _SETTLE, parameters)
            return found[0] if found else None

        return await self._run(update)

    async def get(self, rpc_id: str) -> StoredQuestion | None:
        async def select(connection: Connection) -> StoredQuestion | None:
            found = await _records(connection, f"{_SELECT} WHERE rpc_id = %s", (rpc_id,))
            return found[0] if found else None

        return await self._run(select)

    async def pending(self) -> list[StoredQuestion]:
        async def select(connection: Connection) -> list[StoredQuestion]:
            return await _records(connection, f"{_SELECT} WHERE state = 'pending' ORDER BY seq", ())

        return await self._run(select)

    def on_change(self, listener: ChangeListener) -> Callable[[], None]:
        """Call `listener` with the rpcId another node changed, or `None` after a reconnection.

        A new listener is also told `None` once, soon after it registers (when the store is
        open), so nothing written between its owner's last read and the registration is missed.
        """
        self._listeners.append(listener)
        if self._task_group is not None:
            self._task_group.start_soon(self._welcome, listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    async def mark_shown(self, rpc_ids: Sequence[str]) -> None:
        async def update(connection: Connection) -> None:
            await connection.execute(
                f"UPDATE {SCHEMA}.questions SET shown_at = now() "
                "WHERE shown_at IS NULL AND rpc_id = ANY(%s)",
                (list(rpc_ids),),
            )

        await self._run(update)

    async def history(self, query: HistoryQuery) -> HistoryPage:
        where = ["state <> 'pending'"]
        parameters: list[object] = []
        for clause, value in (
            ("session_id = %s", query.session),
            ("state = %s", query.state),
            ("settled_by = %s", query.by),
        ):
            if value is not None:
                where.append(clause)
                parameters.append(value)
        for term in query.terms:
            where.append("search LIKE %s ESCAPE '\\'")
            parameters.append(like_pattern(term))
        if query.before is not None:
            text, seq = decode_cursor(query.before)
            settled_at = datetime.fromisoformat(text)
            where.append("(settled_at, seq) < (%s, %s)")  # a range on the index, not a filter
            parameters += [settled_at, seq]
        sql = (
            f"SELECT {_COLUMNS}, seq FROM {SCHEMA}.questions WHERE {' AND '.join(where)} "
            "ORDER BY settled_at DESC, seq DESC LIMIT %s"
        )

        async def select(connection: Connection) -> list[TupleRow]:
            cursor = await connection.execute(sql, (*parameters, query.limit + 1))
            return await cursor.fetchall()

        rows = await self._run(select)
        records = [_record(row) for row in rows[: query.limit]]
        if len(rows) <= query.limit:
            return HistoryPage(records, None)
        last = rows[query.limit - 1]
        settled = cast(datetime, last[6]).astimezone(UTC).isoformat(timespec="microseconds")
        return HistoryPage(records, encode_cursor(settled, last[-1]))

    async def purge(self, settled_before: datetime) -> int:
        async def delete(connection: Connection) -> int:
            cursor = await connection.execute(
                f"DELETE FROM {SCHEMA}.questions WHERE state <> 'pending' AND settled_at < %s",
                (settled_before,),
            )
            return cursor.rowcount

        return await self._run(delete)

    async def tokens(self) -> list[TokenRecord]:
        async def select(connection: Connection) -> list[TokenRecord]:
            cursor = await connection.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM {SCHEMA}.tokens ORDER BY name"
            )
            return [_token(row) for row in await cursor.fetchall()]

        return await self._run(select)

    async def add_token(self, token: TokenRecord) -> None:
        async def insert(connection: Connection) -> bool:
            cursor = await connection.execute(
                _ADD_TOKEN, (token.name, token.token_hash, token.created_at)
            )
            return await cursor.fetchone() is not None

        if not await self._run(insert):
            raise UserQuestionError(
                f"a token named {json.dumps(token.name)} exists; revoke it first "
                "(uq token revoke) or choose another name",
                ErrorCode.TOKEN_EXISTS,
            )
        self._tell_tokens()

    async def revoke_token(self, name: str) -> TokenRecord | None:
        async def update(connection: Connection) -> TokenRecord | None:
            cursor = await connection.execute(_REVOKE_TOKEN, (name,))
            row = await cursor.fetchone()
            return None if row is None else _token(row)

        revoked = await self._run(update)
        if revoked is not None:
            self._tell_tokens()
        return revoked

    async def touch_token(self, name: str) -> None:
        async def update(connection: Connection) -> None:
            await connection.execute(
                f"UPDATE {SCHEMA}.tokens SET last_used_at = now() WHERE name = %s", (name,)
            )

        await self._run(update)

    def on_tokens_change(self, listener: TokensListener) -> Callable[[], None]:
        """Call `listener` after a token is added or revoked, through this store or (when open
        as a host's) any other, and after the listening connection reconnects."""
        self._tokens_listeners.append(listener)

        def remove() -> None:
            if listener in self._tokens_listeners:
                self._tokens_listeners.remove(listener)

        return remove

    # -- connections --------------------------------------------------------------------------

    async def _connect(self, application_name: str) -> Connection:
        """A new autocommit connection; `STORE_UNAVAILABLE` when the database cannot be reached."""
        options: dict[str, Any] = {"autocommit": True, "application_name": application_name}
        if self._timeout is not None:
            options["connect_timeout"] = self._timeout
        try:
            return await psycopg.AsyncConnection.connect(self._conninfo, **options)
        except _DOWN as error:
            raise self._unavailable(error) from None

    @contextlib.asynccontextmanager
    async def _borrow(self) -> AsyncIterator[tuple[Connection, bool]]:
        """A connection of the pool, and whether it had been idle (so it may have died since).

        A connection whose statement raised anything is closed rather than reused: it may be
        mid-statement or broken.
        """
        if self._slots is None:
            raise RuntimeError("the store is not open: use `async with store:`")
        async with self._slots:
            reused = bool(self._idle)
            connection = self._idle.pop() if reused else await self._connect(self._name)
            self._pids.add(connection.info.backend_pid)
            try:
                yield connection, reused
            except BaseException:
                await self._close(connection)
                raise
            if connection.broken or self._slots is None:
                await self._close(connection)
            else:
                self._idle.append(connection)

    async def _run(self, operation: Callable[[Connection], Awaitable[T]]) -> T:
        """Run `operation` on a pooled connection, once more on a new one if an idle one was
        dead. Every operation is safe to repeat: submit and settings are upserts, and a
        settle recognises its own earlier win by its `settle_id`.

        Raises:
            UserQuestionError: `STORE_UNAVAILABLE` when the database cannot be reached;
                `BAD_STORE` when it refuses the statement (a privilege missing, a table
                dropped behind the store's back).
        """
        while True:
            reused = False
            try:
                async with self._borrow() as (connection, reused):
                    return await operation(connection)
            except _DOWN as error:
                await self._close_idle()  # they most likely went down with this one
                if not reused:
                    raise self._unavailable(error) from None
                logger.info(
                    "a connection to %s had died (%s); retrying", self.url, _first_line(error)
                )
            except psycopg.Error as error:
                raise UserQuestionError(
                    f"the store {self.url} cannot be used ({_first_line(error)})",
                    ErrorCode.BAD_STORE,
                ) from None

    async def _close(self, connection: Connection) -> None:
        self._pids.discard(connection.info.backend_pid)
        with anyio.CancelScope(shield=True):
            await connection.close()

    async def _close_idle(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            await self._close(connection)

    def _unavailable(self, error: Exception) -> UserQuestionError:
        return UserQuestionError(
            f"the store {self.url} is unavailable ({_first_line(error)}); check that PostgreSQL "
            "is running and reachable",
            ErrorCode.STORE_UNAVAILABLE,
        )

    async def _migrate(self, connection: Connection) -> None:
        """Create or upgrade the schema to `SCHEMA_VERSION`, one node at a time."""
        async with connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            version = await _schema_version(connection)
            if version is None:
                await connection.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
                await connection.execute(
                    f"CREATE TABLE {SCHEMA}.schema_version (version integer NOT NULL)"
                )
                await connection.execute(f"INSERT INTO {SCHEMA}.schema_version VALUES (0)")
                version = 0
            if version > SCHEMA_VERSION:
                raise UserQuestionError(
                    f"the store {self.url} has schema version {version}, newer than this "
                    f"user-questions understands ({SCHEMA_VERSION}); upgrade user-questions",
                    ErrorCode.BAD_STORE,
                )
            for number in range(version, SCHEMA_VERSION):
                migration = _MIGRATIONS[number]
                if callable(migration):
                    await migration(connection)
                else:
                    await connection.execute(migration)
                await connection.execute(
                    f"UPDATE {SCHEMA}.schema_version SET version = %s", (number + 1,)
                )
                logger.info("migrated %s to schema version %d", self.url, number + 1)

    # -- listening ----------------------------------------------------------------------------

    async def _listen(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Follow the other nodes' writes for as long as the store is open."""
        name = f"{self._name} listener"
        connection: Connection | None = await self._listening(name)
        task_status.started()
        while True:
            assert connection is not None
            try:
                await self._follow(connection)
            except psycopg.Error as error:
                logger.warning(
                    "lost the LISTEN connection to %s (%s)", self.url, _first_line(error)
                )
            finally:
                with anyio.CancelScope(shield=True):
                    await connection.close()
            connection = None
            delay = BACKOFF_FIRST
            while connection is None:
                await anyio.sleep(delay * random.uniform(0.5, 1.0))
                delay = min(delay * 2, BACKOFF_MAX)
                with contextlib.suppress(UserQuestionError, psycopg.Error):
                    connection = await self._listening(name)
            logger.warning("listening to %s again; re-reading every request", self.url)
            await self._close_idle()  # a cut listener usually means the database restarted
            self._tell(None)
            self._tell_tokens()

    async def _listening(self, name: str) -> Connection:
        connection = await self._connect(name)
        try:
            await connection.execute(f"LISTEN {CHANNEL}; LISTEN {TOKENS_CHANNEL}")
        except BaseException:
            with anyio.CancelScope(shield=True):
                await connection.close()
            raise
        return connection

    async def _follow(self, connection: Connection) -> None:
        """Pass on each notification until the connection fails; check it when it is quiet."""
        while True:
            async for notification in connection.notifies(timeout=LISTEN_HEARTBEAT):
                if notification.pid in self._pids:
                    continue  # our own write: its caller has told whoever needs to know
                if notification.channel == TOKENS_CHANNEL:
                    self._tell_tokens()
                else:
                    self._tell(notification.payload)
            await connection.execute("SELECT 1")

    async def _stop_listening(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        task_group, self._task_group = self._task_group, None
        if task_group is not None:
            task_group.cancel_scope.cancel()
            await task_group.__aexit__(exc_type, exc, tb)

    def _tell(self, rpc_id: str | None) -> None:
        for listener in tuple(self._listeners):
            self._call(listener, rpc_id)

    def _tell_tokens(self) -> None:
        for listener in tuple(self._tokens_listeners):
            try:
                listener()
            except Exception:
                logger.exception("a tokens listener of %s raised", self.url)

    async def _welcome(self, listener: ChangeListener) -> None:
        if listener in self._listeners:
            self._call(listener, None)

    def _call(self, listener: ChangeListener, rpc_id: str | None) -> None:
        try:
            listener(rpc_id)
        except Exception:
            logger.exception("a change listener of %s raised", self.url)


def printable_url(url: str) -> str:
    """`url` without its password (in the user part or as a `password=` parameter)."""
    scheme, sep, rest = url.partition("://")
    cut = min((rest.index(mark) for mark in "/?" if mark in rest), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        userinfo, _, hosts = authority.rpartition("@")
        user = userinfo.partition(":")[0]
        authority = f"{user}@{hosts}" if user else hosts
    path, _, query = tail.partition("?")
    kept = [pair for pair in query.split("&") if pair and pair.partition("=")[0] != "password"]
    return f"{scheme}{sep}{authority}{path}" + ("?" + "&".join(kept) if kept else "")


async def _schema_version(connection: Connection) -> int | None:
    """The stored schema version; `None` when the database has no store yet."""
    cursor = await connection.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (f"{SCHEMA}.schema_version",)
    )
    exists = await cursor.fetchone()
    if exists is None or not exists[0]:
        return None
    cursor = await connection.execute(f"SELECT version FROM {SCHEMA}.schema_version")
    row = await cursor.fetchone()
    return 0 if row is None else cast(int, row[0])


async def _records(
    connection: Connection, query: str, parameters: Sequence[object]
) -> list[StoredQuestion]:
    cursor = await connection.execute(query, parameters)
    return [_record(row) for row in await cursor.fetchall()]


def _record(row: TupleRow) -> StoredQuestion:
    rpc_id, session_id, questions, asked_at, state, answer, settled_at, settled_via = row[:8]
    asked_by, shown_at, settled_by = row[8:11]
    return StoredQuestion(
        rpc_id=rpc_id,
        session_id=session_id,
        questions=tuple(_QUESTIONS.validate_json(questions)),
        asked_at=asked_at.astimezone(UTC),
        state=cast(QuestionState, state),
        answer=None if answer is None else AskUserQuestionAnswer.model_validate_json(answer),
        settled_at=_utc(settled_at),
        settled_via=settled_via,
        asked_by=asked_by,
        shown_at=_utc(shown_at),
        settled_by=settled_by,
    )


def _token(row: TupleRow) -> TokenRecord:
    name, token_hash, created_at, last_used_at, revoked_at = row[:5]
    return TokenRecord(
        name=name,
        token_hash=token_hash,
        created_at=cast(datetime, created_at).astimezone(UTC),
        last_used_at=_utc(last_used_at),
        revoked_at=_utc(revoked_at),
    )


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
