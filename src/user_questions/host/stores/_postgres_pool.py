"""The connections a `PostgresStore` runs its statements on.

Needs psycopg. At most `POOL_SIZE` connections, opened on demand. A connection that fails is
dropped; a statement that failed on a connection that had been idle (it may have died with a
database restart) is retried once on a new one, and otherwise raises `STORE_UNAVAILABLE`. The next
call connects again, so the store recovers by itself when the database is back. A statement that
gets no answer within `QUERY_TIMEOUT` (a network partition drops packets: nothing ever fails) has
its connection cut and raises `STORE_UNAVAILABLE` at once, so that the host refuses and its askers
go to another node instead of waiting for ever.

Every connection commits durably: one that starts with `synchronous_commit = off` (a server,
database or role default) is set to `on`, so a write the store has reported committed survives
a crash of the database server; any other value (`local`, `remote_apply`, ...) is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import anyio
import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import TupleRow

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores.records import StoreStats

__all__ = [
    "APPLICATION_NAME",
    "CONNECT_TIMEOUT",
    "POOL_SIZE",
    "QUERY_TIMEOUT",
    "PgConnection",
    "Pool",
    "deadline",
    "first_line",
]

logger = logging.getLogger("user_questions.host")

POOL_SIZE = 4
"""Connections one store uses for its queries at most (the listener has its own)."""
CONNECT_TIMEOUT = 10
"""Seconds to wait for a connection, unless the URL sets `connect_timeout`."""
QUERY_TIMEOUT = 10.0
"""Seconds a statement may wait for the database's answer; then its connection is cut."""
APPLICATION_NAME = "user-questions"
"""How the store's connections appear in `pg_stat_activity`, unless the URL names them."""

PgConnection = psycopg.AsyncConnection[TupleRow]
"""One psycopg connection to the database, its rows read as tuples."""
T = TypeVar("T")

_DOWN = (psycopg.OperationalError, psycopg.InterfaceError)
"""What psycopg raises when the database cannot be reached, or went away mid-statement."""
_DURABLE = (
    "SELECT set_config('synchronous_commit', 'on', false) "
    "WHERE current_setting('synchronous_commit') = 'off'"
)
"""Makes a session's commits wait for the disk, unless they already wait for it (or more)."""


class Pool:
    """The connections to the database at the libpq URL `conninfo`; `url` is how errors name it
    (without its password). Usable between `open()` and `close()`.

    Raises:
        UserQuestionError: `BAD_STORE` for a URL that libpq cannot parse.
    """

    def __init__(self, conninfo: str, url: str) -> None:
        self.url = url
        try:
            given = conninfo_to_dict(conninfo)
        except psycopg.ProgrammingError as error:
            raise UserQuestionError(
                f"the store URL {url} is not a valid PostgreSQL URL: {first_line(error)}",
                ErrorCode.BAD_STORE,
            ) from None
        self._conninfo = conninfo
        self.name = str(given.get("application_name") or APPLICATION_NAME)
        """The application name of the pool's connections."""
        self._timeout = None if "connect_timeout" in given else CONNECT_TIMEOUT
        self._idle: list[PgConnection] = []
        self._pids: set[int] = set()
        self._slots: anyio.Semaphore | None = None
        self.stats = StoreStats()
        """The store's failed operations and reconnections (its listener reports too)."""

    def open(self) -> None:
        self._slots = anyio.Semaphore(POOL_SIZE)

    async def close(self) -> None:
        await self.close_idle()
        self._slots = None

    def owns(self, pid: int) -> bool:
        """Whether `pid` is the backend of one of the pool's connections (a notification it
        sent is one of the store's own writes)."""
        return pid in self._pids

    async def connect(self, application_name: str) -> PgConnection:
        """A new autocommit connection whose commits are durable; `STORE_UNAVAILABLE` when the
        database cannot be reached."""
        options: dict[str, Any] = {"autocommit": True, "application_name": application_name}
        if self._timeout is not None:
            options["connect_timeout"] = self._timeout
        try:
            connection = await psycopg.AsyncConnection.connect(self._conninfo, **options)
            try:
                with deadline(connection):
                    await connection.execute(_DURABLE)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await connection.close()
                raise
        except _DOWN as error:
            raise self._unavailable(error) from None
        self.stats.back()
        return connection

    async def run(self, operation: Callable[[PgConnection], Awaitable[T]]) -> T:
        """Run `operation` on a pooled connection, once more on a new one if an idle one was
        dead. Every operation is safe to repeat: submit and settings are upserts, and a
        settle recognises its own earlier win by its `settle_id`.

        Raises:
            UserQuestionError: `STORE_UNAVAILABLE` when the database cannot be reached;
                `BAD_STORE` when it refuses the statement (a privilege missing, a table
                dropped behind the store's back).
        """
        while True:
            reused, cut = False, _Cut()
            try:
                async with self._borrow() as (connection, reused):
                    with deadline(connection, cut):
                        return await operation(connection)
            except UserQuestionError as error:
                if error.code == ErrorCode.STORE_UNAVAILABLE:  # no connection could be made
                    self.stats.failed(error)
                raise
            except _DOWN as error:
                await self.close_idle()  # they most likely went down with this one
                if not reused or cut:
                    fault = self._unavailable(error, cut)
                    self.stats.failed(fault)
                    raise fault from None
                self.stats.lost()
                logger.info(
                    "a connection to %s had died (%s); retrying", self.url, first_line(error)
                )
            except psycopg.Error as error:
                self.stats.errors += 1  # the database answered: it is not lost
                raise UserQuestionError(
                    f"the store {self.url} cannot be used ({first_line(error)})",
                    ErrorCode.BAD_STORE,
                ) from None

    async def close_idle(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            await self._close(connection)

    @contextlib.asynccontextmanager
    async def _borrow(self) -> AsyncIterator[tuple[PgConnection, bool]]:
        """A connection of the pool, and whether it had been idle (so it may have died since).

        A connection whose statement raised anything is closed rather than reused: it may be
        mid-statement or broken.
        """
        if self._slots is None:
            raise RuntimeError("the store is not open: use `async with store:`")
        async with self._slots:
            reused = bool(self._idle)
            connection = self._idle.pop() if reused else await self.connect(self.name)
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

    async def _close(self, connection: PgConnection) -> None:
        self._pids.discard(connection.info.backend_pid)
        with anyio.CancelScope(shield=True):
            await connection.close()

    def _unavailable(self, error: Exception, cut: _Cut | None = None) -> UserQuestionError:
        why = f"no answer within {QUERY_TIMEOUT:g} s" if cut else first_line(error)
        return UserQuestionError(
            f"the store {self.url} is unavailable ({why}); check that PostgreSQL "
            "is running and reachable",
            ErrorCode.STORE_UNAVAILABLE,
        )


class _Cut:
    """Whether `deadline` cut a connection (true once it has)."""

    def __init__(self) -> None:
        self.done = False

    def __bool__(self) -> bool:
        return self.done


@contextlib.contextmanager
def deadline(connection: PgConnection, cut: _Cut | None = None) -> Iterator[None]:
    """Cut `connection` (shut its socket down: the statement waiting on it fails at once, as
    when the database goes away) if the block has not ended within `QUERY_TIMEOUT`; `cut` says
    whether it was. Cancelling the statement instead would have psycopg ask the database to
    cancel it, through the same partition, for seconds more."""
    cut = cut or _Cut()

    def expire() -> None:
        cut.done = True
        with (
            contextlib.suppress(OSError),
            socket.fromfd(
                connection.pgconn.socket, socket.AF_INET, socket.SOCK_STREAM
            ) as duplicate,
        ):  # the same socket, whatever its family: shutdown() acts on the socket
            duplicate.shutdown(socket.SHUT_RDWR)

    timer = asyncio.get_running_loop().call_later(QUERY_TIMEOUT, expire)
    try:
        yield
    finally:
        timer.cancel()


def first_line(error: BaseException) -> str:
    """The first line of `error`'s message (psycopg's run on with hints), or its type's name."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
