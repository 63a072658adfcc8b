"""The connection on which a host's `PostgresStore` hears of the other nodes' writes.

Needs psycopg. Every write sends `NOTIFY` on `CHANNEL` (the rpcId), `TOKENS_CHANNEL` (a token's
name) or `RULES_CHANNEL` (a rule's id). The `NotificationRelay` `LISTEN`s to all three on a
connection of its own (the listener), checks it with a query after `LISTEN_HEARTBEAT` quiet seconds
(an answer within `QUERY_TIMEOUT`, else the connection is cut: how a node on the wrong side of a
partition learns it has lost the database, and says so), and reconnects with backoff when it is cut.
After a reconnection it tells `None` (re-read everything), because notifications sent while it was
away are gone: a lost notification delays a change until the next reconnection at worst.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable

import anyio
import psycopg
from anyio.abc import TaskStatus

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores._postgres_pool import PgConnection, Pool, deadline, first_line

__all__ = [
    "BACKOFF_FIRST",
    "BACKOFF_MAX",
    "CHANNEL",
    "LISTEN_HEARTBEAT",
    "RULES_CHANNEL",
    "TOKENS_CHANNEL",
    "NotificationRelay",
]

CHANNEL = "user_questions"
"""The NOTIFY channel; each payload is the rpcId of the request that changed."""
TOKENS_CHANNEL = "user_questions_tokens"
"""The NOTIFY channel of named tokens; each payload is the name of the token added, changed or
revoked."""
RULES_CHANNEL = "user_questions_rules"
"""The NOTIFY channel of rules; each payload is the id of the rule added or revoked."""
LISTEN_HEARTBEAT = 5.0
"""Seconds of silence after which the listening connection is checked with a query."""
BACKOFF_FIRST = 0.05
"""Seconds before the listener's first reconnection attempt; doubled after each failure."""
BACKOFF_MAX = 2.0
"""The longest pause between the listener's reconnection attempts."""


class NotificationRelay:
    """Passes the other nodes' notifications on: an rpcId (or `None`, re-read everything) to
    `tell`, a token change to `tell_tokens`, a rule change to `tell_rules`. Notifications from
    `pool`'s own connections are skipped: whoever made those writes has told whoever needs to
    know."""

    def __init__(
        self,
        pool: Pool,
        tell: Callable[[str | None], None],
        tell_tokens: Callable[[], None],
        tell_rules: Callable[[], None],
    ) -> None:
        self._pool = pool
        self._tell = tell
        self._tell_tokens = tell_tokens
        self._tell_rules = tell_rules

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Listen until cancelled; started once the first connection listens.

        Raises:
            UserQuestionError: `STORE_UNAVAILABLE` when the first connection cannot be made.
        """
        name = f"{self._pool.name} listener"
        connection: PgConnection | None = await self._listening(name)
        task_status.started()
        while True:
            assert connection is not None
            try:
                await self._follow(connection)
            except psycopg.Error as error:
                self._pool.stats.lost(
                    UserQuestionError(
                        f"lost the LISTEN connection to {self._pool.url} ({first_line(error)})",
                        ErrorCode.STORE_UNAVAILABLE,
                    )
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
            await self._pool.close_idle()  # a cut listener usually means the database restarted
            self._tell(None)
            self._tell_tokens()
            self._tell_rules()

    async def _listening(self, name: str) -> PgConnection:
        connection = await self._pool.connect(name)
        try:
            await connection.execute(
                f"LISTEN {CHANNEL}; LISTEN {TOKENS_CHANNEL}; LISTEN {RULES_CHANNEL}"
            )
        except BaseException:
            with anyio.CancelScope(shield=True):
                await connection.close()
            raise
        return connection

    async def _follow(self, connection: PgConnection) -> None:
        """Pass on each notification until the connection fails; check it when it is quiet."""
        while True:
            async for notification in connection.notifies(timeout=LISTEN_HEARTBEAT):
                if self._pool.owns(notification.pid):
                    continue
                if notification.channel == TOKENS_CHANNEL:
                    self._tell_tokens()
                elif notification.channel == RULES_CHANNEL:
                    self._tell_rules()
                else:
                    self._tell(notification.payload)
            with deadline(connection):
                await connection.execute("SELECT 1")
