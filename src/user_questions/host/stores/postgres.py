"""`PostgresStore`: one PostgreSQL database shared by several hosts (`uq serve` nodes).

Needs the `postgres` extra (psycopg 3) and the asyncio backend. The tables are the source of truth.
Every write is one statement that also sends `NOTIFY user_questions, '<rpcId>'`, so the notification
is committed with the write, or not at all. A notification only wakes the other nodes, which re-read
the row: a dedicated connection `LISTEN`s, reconnects with backoff when it is cut, and after every
(re)connection tells the listeners `None` (re-read everything), because notifications sent while it
was away are gone. So a lost notification delays a change until the next reconnection at worst, and
loses nothing. Adding, changing or revoking a named token sends `NOTIFY user_questions_tokens` the
same way, so every node reloads its tokens at once.

A store opened with `host=False` (`uq token`, `uq history`) does not listen at all.

Settling is `UPDATE ... WHERE rpc_id = ? AND state = 'pending' RETURNING ...`: of two nodes
answering at once exactly one gets the row back. Each settle carries a fresh `settle_id`, so
retrying it after a connection cut mid-statement recognises its own earlier win.

The store puts together the modules beside it: `_postgres_pool` (the connections its queries
run on, and their recovery after a database restart), `_postgres_schema` (the tables, created
and migrated at start-up) and `_postgres_listen` (the listening connection).
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import astuple, replace
from datetime import UTC, datetime
from typing import cast

import anyio
from psycopg.rows import TupleRow

from user_questions._lifecycle.lifetime import AsyncLifetime
from user_questions._lifecycle.listeners import Listeners
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores._postgres_listen import (
    CHANNEL,
    LISTEN_HEARTBEAT,
    RULES_CHANNEL,
    TOKENS_CHANNEL,
    NotificationRelay,
)
from user_questions.host.stores._postgres_pool import POOL_SIZE, PgConnection, Pool
from user_questions.host.stores._postgres_schema import SCHEMA, SCHEMA_VERSION, migrate
from user_questions.host.stores._rows import (
    COLUMNS,
    RULE_COLUMNS,
    TOKEN_COLUMNS,
    answer_edited,
    audit_body,
    encode_cursor,
    escalations_json,
    history_filter,
    history_moment,
    instant_text,
    names_json,
    origin_json,
    question_text,
    rendered_json,
    rule_record,
    settled_fields,
    settlement_text,
    stored_question,
    stored_questions,
    token_change_fields,
    token_fields,
    token_limits,
    token_record,
    vote_body,
    vote_record,
)
from user_questions.host.stores.records import (
    AUDIT_PAGE,
    AuditRecord,
    ChangeListener,
    ChatMessage,
    ChatPairing,
    Checkpoint,
    HistoryPage,
    HistoryQuery,
    NewQuestion,
    PushSubscription,
    Rule,
    RuleRecord,
    RulesListener,
    RulesMoved,
    Seal,
    Settlement,
    StoredQuestion,
    Tally,
    TokenChange,
    TokenRecord,
    TokensListener,
    Vote,
    settled_record,
)

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

_JSON_COLUMNS = frozenset(
    {
        "questions",
        "answer",
        "origin",
        "rendered",
        "audience",
        "approval",
        "groups",
        "routes",
        "notify",
        "escalate",
    }
)


def _selected(columns: Sequence[str]) -> str:
    """`columns` as a select list, JSON as its text (which the shared readers parse)."""
    return ", ".join(f"{column}::text" if column in _JSON_COLUMNS else column for column in columns)


_COLUMNS = _selected(COLUMNS)
_SELECT = f"SELECT {_COLUMNS} FROM {SCHEMA}.questions"
_NOTIFY = f"pg_notify('{CHANNEL}', rpc_id)"


def _appended(written: str) -> str:
    """The common table expressions that append an audit record after the write `written`
    (a CTE before them), in the same statement: the head row's update computes the record's
    hash (`audit_chain.chain_hash`: SHA-256 of prev followed by the body) and holds the row's
    lock until the commit, so appends from every node are serialised in the database, one
    chain. Parameters: the body, the event id (twice), the rpcId, the time, the body again.
    A settle retried with the same event id (after a cut connection) appends nothing."""
    return f"""
    head AS (
        UPDATE {SCHEMA}.audit_head SET seq = seq + 1, prev = hash,
            hash = encode(sha256(convert_to(hash || %s, 'UTF8')), 'hex')
        WHERE EXISTS (SELECT 1 FROM {written})
            AND NOT EXISTS (SELECT 1 FROM {SCHEMA}.audit WHERE event_id = %s)
        RETURNING seq, prev, hash
    ),
    logged AS (
        INSERT INTO {SCHEMA}.audit (seq, event_id, rpc_id, at, body, prev, hash)
        SELECT seq, %s, %s, %s, %s, prev, hash FROM head
    )
    """


_CREATE = f"""
    WITH created AS (
        INSERT INTO {SCHEMA}.questions
            (rpc_id, session_id, questions, asked_at, asked_by, shown_at, origin, search,
             rendered, audience, approval, deadline_at, escalate, remind, state, answer,
             settled_via, settled_by, settled_at, asker_rpc_id, digest, approvals)
        SELECT %s, %s, %s::json, %s::timestamptz, %s, %s::timestamptz, %s::jsonb, %s, %s::jsonb,
            %s::jsonb, %s::json, %s::timestamptz, %s::jsonb, %s::integer, %s, %s::json, %s, %s,
            %s::timestamptz, %s, %s, %s::integer
        WHERE %s::bigint IS NULL OR %s::bigint = (SELECT version FROM {SCHEMA}.rules_version)
        ON CONFLICT (rpc_id) DO NOTHING RETURNING *
    )"""
"""Stores a new request, unless its rpcId exists or the rules moved past the version it was
decided under (`NewQuestion.rules_version`, given twice: none, or still this one). A `SELECT`
rather than `VALUES`, for its `WHERE`: the columns whose parameters may be `NULL` say their
types."""
_SUBMIT = f"{_CREATE} SELECT {_COLUMNS}, {_NOTIFY} FROM created"
_USED = f"""
    used AS (
        UPDATE {SCHEMA}.rules SET hits = hits + 1, last_used_at = %s
        WHERE id = ANY(%s::bigint[]) AND EXISTS (SELECT 1 FROM created)
    )"""
"""Counts a use of each rule that settled the request `created` stored (none if it stored
nothing)."""
_SUBMIT_SETTLED = (
    f"{_CREATE}, {_USED}, {_appended('created')} SELECT {_COLUMNS}, {_NOTIFY} FROM created"
)
"""Stores a request a rule settled as it was stored, with its rules' uses and its audit
record."""
_SETTLE = f"""
    WITH settled AS (
        UPDATE {SCHEMA}.questions
        SET state = %s, answer = %s::json, settled_at = coalesce(settled_at, %s),
            settled_via = %s, settled_by = %s, channel = %s, settle_id = %s,
            edited = CASE WHEN state = 'pending' THEN %s ELSE edited END,
            search = CASE WHEN state = 'pending' THEN search || %s ELSE search END
        WHERE rpc_id = %s AND (state = 'pending' OR settle_id = %s)
        RETURNING *
    ), {_appended("settled")}
"""
_SETTLE_ROW = f"{_SETTLE} SELECT {_COLUMNS}, {_NOTIFY} FROM settled"
"""Settles a request, appends its audit record and reads back its whole row."""
_SETTLE_TIMES = f"{_SETTLE} SELECT settled_at, shown_at, {_NOTIFY} FROM settled"
"""Settles a request whose pending record the caller holds: only the times are read back."""
_LOCK_PENDING = f"""
    SELECT approvals, digest FROM {SCHEMA}.questions
    WHERE rpc_id = %s AND state = 'pending' FOR UPDATE
"""
"""A pending request's quorum and card, its row locked until the commit: the votes of every
node on it are counted one after another."""
_VOTE = f"""
    WITH voted AS (
        INSERT INTO {SCHEMA}.approvals (rpc_id, person, digest, call, via, at)
        VALUES (%s, %s, %s, %s::json, %s, %s) ON CONFLICT DO NOTHING RETURNING person, rpc_id
    ), {_appended("voted")}
    SELECT person, {_NOTIFY} FROM voted
"""
"""Records a person's approval of a call, once, with its audit record; every host hears of it
(on commit), so that each shows the new count."""
_VOTERS = f"""
    SELECT person FROM {SCHEMA}.approvals WHERE rpc_id = %s AND digest = %s ORDER BY at, person
"""
_PRUNABLE = f"""
    SELECT seq, hash FROM {SCHEMA}.audit WHERE seq < coalesce(
        (SELECT min(seq) FROM {SCHEMA}.audit WHERE at >= %s OR rpc_id IN (
            SELECT rpc_id FROM {SCHEMA}.questions WHERE state = 'pending' OR settled_at >= %s)),
        (SELECT seq + 1 FROM {SCHEMA}.audit_head))
    ORDER BY seq DESC LIMIT 1
"""
"""The last audit record that may be pruned before a cutoff (as on SQLite)."""
_CHECKPOINT_COLUMNS = "seq, hash, at, pruned, key, signature"
_ESCALATE = f"""
    WITH escalated AS (
        UPDATE {SCHEMA}.questions
        SET escalated = escalated + 1,
            audience = CASE WHEN audience = '[]'::jsonb OR audience ? (escalate -> escalated ->> 1)
                THEN audience ELSE audience || jsonb_build_array(escalate -> escalated ->> 1) END
        WHERE rpc_id = %s AND state = 'pending' AND escalated = %s
            AND jsonb_array_length(escalate) > escalated
        RETURNING *
    )
    SELECT {_COLUMNS}, {_NOTIFY} FROM escalated
"""
"""Fires a request's next escalation step, if it is still the one the caller names."""
_REMIND = f"""
    UPDATE {SCHEMA}.questions SET reminded_at = %s
    WHERE rpc_id = %s AND state = 'pending' AND reminded_at IS NOT DISTINCT FROM %s
    RETURNING {_COLUMNS}
"""
_SHARES = "audience ?| ARRAY(SELECT jsonb_array_elements_text(%s::jsonb))"
"""A request's audience shares a name with the JSON array bound (`history_filter`)."""
_TOKEN_COLUMNS = _selected(TOKEN_COLUMNS)
_TOKENS_NOTIFY = f"pg_notify('{TOKENS_CHANNEL}', name)"
_ADD_TOKEN = f"""
    WITH added AS (
        INSERT INTO {SCHEMA}.tokens
            (name, token_hash, created_at, role, groups, routes, notify, deadline, escalate,
             remind, max_pending, rate, burst, approvals, lang)
        VALUES (%s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb, %s, %s::jsonb, %s, %s, %s, %s,
            %s, %s)
        ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash,
            created_at = excluded.created_at, last_used_at = NULL, revoked_at = NULL,
            role = excluded.role, groups = excluded.groups, routes = excluded.routes,
            notify = excluded.notify, deadline = excluded.deadline,
            escalate = excluded.escalate, remind = excluded.remind,
            max_pending = excluded.max_pending, rate = excluded.rate, burst = excluded.burst,
            lang = excluded.lang, approvals = excluded.approvals
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
_CHANGE_TOKEN = f"""
    WITH changed AS (
        UPDATE {SCHEMA}.tokens SET role = coalesce(%s, role),
            groups = coalesce(%s::jsonb, groups), routes = coalesce(%s::jsonb, routes),
            notify = coalesce(%s::jsonb, notify), deadline = nullif(coalesce(%s, deadline), 0),
            escalate = coalesce(%s::jsonb, escalate), remind = nullif(coalesce(%s, remind), 0),
            max_pending = nullif(coalesce(%s, max_pending), 0),
            rate = nullif(coalesce(%s, rate), 0), burst = nullif(coalesce(%s, burst), 0),
            approvals = coalesce(%s, approvals), lang = nullif(coalesce(%s, lang), '')
        WHERE name = %s AND revoked_at IS NULL RETURNING *
    )
    SELECT {_TOKEN_COLUMNS}, {_TOKENS_NOTIFY} FROM changed
"""


_RULE_COLUMNS = ", ".join(RULE_COLUMNS)
_RULES_NOTIFY = f"pg_notify('{RULES_CHANNEL}', id::text)"
_ADD_RULE = f"""
    WITH added AS (
        INSERT INTO {SCHEMA}.rules (tool, decision, created_at, command, path, domain, asker,
            cwd, created_by, expires_at, approvals)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *
    )
    SELECT {_RULE_COLUMNS}, {_RULES_NOTIFY} FROM added
"""
_REVOKE_RULE = f"""
    WITH revoked AS (
        UPDATE {SCHEMA}.rules SET revoked_at = now()
        WHERE id = %s AND revoked_at IS NULL RETURNING *
    )
    SELECT {_RULE_COLUMNS}, {_RULES_NOTIFY} FROM revoked
"""


class PostgresStore(AsyncLifetime):
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
        self._pool = Pool(url, self.url)
        self._pool.stats.url = self.url
        self._pool.stats.shared = True
        self._listeners: Listeners[[str | None]] = Listeners(
            logger, f"a change listener of {self.url} raised"
        )
        self._tokens_listeners: Listeners[[]] = Listeners(
            logger, f"a tokens listener of {self.url} raised"
        )
        self._rules_listeners: Listeners[[]] = Listeners(
            logger, f"a rules listener of {self.url} raised"
        )
        self.stats = self._pool.stats

    def __repr__(self) -> str:
        return f"<PostgresStore {self.url}>"

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        self._pool.open()
        stack.push_async_callback(self._pool.close)
        await self._pool.run(lambda connection: migrate(connection, self.url))
        if not self.host:
            self.stats.open = True
            return
        listening = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(listening.cancel_scope.cancel)
        relay = NotificationRelay(
            self._pool,
            self._listeners.tell,
            self._tokens_listeners.tell,
            self._rules_listeners.tell,
        )
        await listening.start(relay.run)
        self.stats.open = True

    async def ping(self) -> None:
        async def select(connection: PgConnection) -> None:
            await connection.execute("SELECT 1")

        await self._pool.run(select)

    async def setting(self, key: str) -> str | None:
        return await self._pool.run(lambda connection: _setting(connection, key))

    async def ensure_setting(self, key: str, default: str) -> str:
        async def read(connection: PgConnection) -> str:
            async with connection.transaction():
                await connection.execute(
                    f"INSERT INTO {SCHEMA}.settings (key, value) VALUES (%s, %s) "
                    "ON CONFLICT (key) DO NOTHING",
                    (key, default),
                )
                # A statement of its own: its snapshot sees a value another node just stored.
                value = await _setting(connection, key)
            assert value is not None  # stored just now, or before
            return value

        return await self._pool.run(read)

    async def set_setting(self, key: str, value: str) -> None:
        async def write(connection: PgConnection) -> None:
            await connection.execute(
                f"INSERT INTO {SCHEMA}.settings (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

        await self._pool.run(write)

    async def settings_under(self, prefix: str) -> dict[str, str]:
        async def read(connection: PgConnection) -> dict[str, str]:
            cursor = await connection.execute(
                f"SELECT key, value FROM {SCHEMA}.settings WHERE starts_with(key, %s)", (prefix,)
            )
            return {str(key): str(value) for key, value in await cursor.fetchall()}

        return await self._pool.run(read)

    async def delete_setting(self, key: str) -> None:
        async def delete(connection: PgConnection) -> None:
            await connection.execute(f"DELETE FROM {SCHEMA}.settings WHERE key = %s", (key,))

        await self._pool.run(delete)

    async def submit(self, question: NewQuestion) -> tuple[StoredQuestion, bool]:
        parameters: tuple[object, ...] = (
            question.rpc_id,
            question.session_id,
            question.questions_json,
            question.asked_at,
            question.asked_by,
            question.shown_at,
            origin_json(question.origin),
            question_text(question.questions) + settlement_text(question.settlement),
            rendered_json(question.rendered),
            names_json(question.audience),
            origin_json(question.approval),
            question.deadline_at,
            escalations_json(question.escalate),
            question.remind,
            *settled_fields(question.settlement),
            None if question.settlement is None else question.asked_at,
            question.asker_rpc_id,
            question.digest,
            question.approvals,
            question.rules_version,
            question.rules_version,
        )
        sql = _SUBMIT
        settlement = question.settlement
        if settlement is not None:  # a rule settled it: its uses and audit record go with it
            answer = None if settlement.answer is None else settlement.answer.model_dump_json()
            body = audit_body(
                question.rpc_id, question.digest, settlement, answer, question.asked_at
            )
            sql = _SUBMIT_SETTLED
            parameters += (question.asked_at, list(question.rules_used))
            parameters += _append_parameters(body, uuid.uuid4(), question.rpc_id, question.asked_at)

        async def insert(connection: PgConnection) -> tuple[StoredQuestion, bool] | None:
            created = await _records(connection, sql, parameters)
            if created:
                return created[0], True
            existing = await _records(
                connection, f"{_SELECT} WHERE rpc_id = %s", (question.rpc_id,)
            )
            return (existing[0], False) if existing else None

        stored = await self._pool.run(insert)
        if stored is None:  # not stored, and not there: the guard of `_CREATE` held it back
            raise RulesMoved(f"the rules moved past version {question.rules_version}")
        return stored

    async def settle(
        self, rpc_id: str, settlement: Settlement, *, pending: StoredQuestion | None = None
    ) -> StoredQuestion | None:
        settle_id = uuid.uuid4()
        now = datetime.now(UTC)
        known = None if pending is None else pending.digest

        async def update(connection: PgConnection) -> StoredQuestion | None:
            digest = known
            if digest is None:  # a request's card never changes: read it before settling
                cursor = await connection.execute(
                    f"SELECT digest FROM {SCHEMA}.questions WHERE rpc_id = %s", (rpc_id,)
                )
                row = await cursor.fetchone()
                digest = None if row is None else row[0]
            appended = _settle_parameters(rpc_id, settlement, digest, settle_id, now)
            if pending is None:
                found = await _records(connection, _SETTLE_ROW, appended)
                return found[0] if found else None
            cursor = await connection.execute(_SETTLE_TIMES, appended)
            row = await cursor.fetchone()
            if row is None:
                return None
            settled_at = _utc(row[0])
            assert settled_at is not None  # set by the update itself
            return settled_record(pending, settlement, settled_at, _utc(row[1]))

        return await self._pool.run(update)

    async def approve(self, vote: Vote, settlement: Settlement) -> Tally | None:
        settle_id, vote_id = uuid.uuid4(), uuid.uuid4()
        now = datetime.now(UTC)

        async def count(connection: PgConnection) -> Tally | None:
            async with connection.transaction():
                cursor = await connection.execute(_LOCK_PENDING, (vote.rpc_id,))
                row = await cursor.fetchone()
                if row is None:
                    return None
                needed, card = int(row[0]), row[1]
                body = vote_body(vote, card)
                cursor = await connection.execute(
                    _VOTE,
                    (
                        vote.rpc_id,
                        vote.person,
                        vote.digest,
                        vote.call,
                        str(vote.via),
                        vote.at,
                        *_append_parameters(body, vote_id, vote.rpc_id, vote.at),
                    ),
                )
                counted = await cursor.fetchone() is not None
                cursor = await connection.execute(_VOTERS, (vote.rpc_id, vote.digest))
                tally = Tally(tuple(row[0] for row in await cursor.fetchall()), needed, counted)
                if len(tally.people) < needed:
                    return tally
                parameters = _settle_parameters(vote.rpc_id, settlement, card, settle_id, now)
                found = await _records(connection, _SETTLE_ROW, parameters)
                return replace(tally, settled=found[0] if found else None)

        return await self._pool.run(count)

    async def votes(self, rpc_id: str) -> list[Vote]:
        async def select(connection: PgConnection) -> list[Vote]:
            cursor = await connection.execute(
                f"SELECT rpc_id, person, call::text, via, at FROM {SCHEMA}.approvals "
                "WHERE rpc_id = %s ORDER BY at, person",
                (rpc_id,),
            )
            return [vote_record(row, _utc) for row in await cursor.fetchall()]

        return await self._pool.run(select)

    async def escalate(self, rpc_id: str, step: int) -> StoredQuestion | None:
        return await self._one(_ESCALATE, (rpc_id, step))

    async def remind(
        self, rpc_id: str, previous: datetime | None, at: datetime
    ) -> StoredQuestion | None:
        return await self._one(_REMIND, (at, rpc_id, previous))

    async def _one(self, sql: str, parameters: Sequence[object]) -> StoredQuestion | None:
        async def update(connection: PgConnection) -> StoredQuestion | None:
            found = await _records(connection, sql, parameters)
            return found[0] if found else None

        return await self._pool.run(update)

    async def get(self, rpc_id: str) -> StoredQuestion | None:
        async def select(connection: PgConnection) -> StoredQuestion | None:
            found = await _records(connection, f"{_SELECT} WHERE rpc_id = %s", (rpc_id,))
            return found[0] if found else None

        return await self._pool.run(select)

    async def pending(self) -> list[StoredQuestion]:
        async def select(connection: PgConnection) -> list[TupleRow]:
            cursor = await connection.execute(f"{_SELECT} WHERE state = 'pending' ORDER BY seq")
            return await cursor.fetchall()

        rows = await self._pool.run(select)
        # Tens of thousands of requests take seconds to read: off the event loop, which a host
        # that re-reads them after a reconnection keeps serving meanwhile.
        return await anyio.to_thread.run_sync(_records_of, rows)

    def on_change(self, listener: ChangeListener) -> Callable[[], None]:
        """Call `listener` with the rpcId another node changed, or `None` after a reconnection,
        for every change committed from now on (a host's store listens from its opening)."""
        return self._listeners.add(listener)

    async def mark_shown(self, rpc_ids: Sequence[str]) -> None:
        async def update(connection: PgConnection) -> None:
            await connection.execute(
                f"UPDATE {SCHEMA}.questions SET shown_at = now() "
                "WHERE shown_at IS NULL AND rpc_id = ANY(%s)",
                (list(rpc_ids),),
            )

        await self._pool.run(update)

    async def history(self, query: HistoryQuery) -> HistoryPage:
        where, parameters = history_filter(query, "%s", datetime.fromisoformat, _SHARES)
        moment = history_moment(query)
        sql = (
            f"SELECT {_COLUMNS}, {moment}, seq FROM {SCHEMA}.questions WHERE {where} "
            f"ORDER BY {moment} DESC, seq DESC LIMIT %s"
        )
        unpaged = history_filter(replace(query, before=None), "%s", datetime.fromisoformat, _SHARES)
        count = f"SELECT count(*) FROM {SCHEMA}.questions WHERE {unpaged[0]}"

        async def select(connection: PgConnection) -> tuple[list[TupleRow], int | None]:
            cursor = await connection.execute(sql, (*parameters, query.limit + 1))
            rows = await cursor.fetchall()
            if not query.count:
                return rows, None
            counted = await (await connection.execute(count, unpaged[1])).fetchone()
            return rows, None if counted is None else int(counted[0])

        rows, total = await self._pool.run(select)
        # A page may hold megabytes of JSON: read it into records off the event loop.
        records = await anyio.to_thread.run_sync(_records_of, rows[: query.limit])
        if len(rows) <= query.limit:
            return HistoryPage(records, None, total)
        last = rows[query.limit - 1]
        at = instant_text(cast(datetime, last[-2]))
        return HistoryPage(records, encode_cursor(at, last[-1]), total)

    async def purge(self, settled_before: datetime, seal: Seal | None = None) -> int:
        async def delete(connection: PgConnection) -> int:
            async with connection.transaction():
                if seal is not None:
                    await _prune_audit(connection, settled_before, seal)
                cursor = await connection.execute(
                    f"DELETE FROM {SCHEMA}.questions WHERE state <> 'pending' AND settled_at < %s",
                    (settled_before,),
                )
                # What the chat bots kept of them and their quorums' approvals go with them
                # (the audit log keeps its records of each), and so do the codes no one used.
                for kept in ("chat_messages", "approvals"):
                    await connection.execute(
                        f"DELETE FROM {SCHEMA}.{kept} "
                        f"WHERE rpc_id NOT IN (SELECT rpc_id FROM {SCHEMA}.questions)"
                    )
                await connection.execute(
                    f"DELETE FROM {SCHEMA}.chat_codes WHERE expires_at <= now()"
                )
                return cursor.rowcount

        return await self._pool.run(delete)

    async def audit_records(self, after: int = 0, limit: int = AUDIT_PAGE) -> list[AuditRecord]:
        async def select(connection: PgConnection) -> list[AuditRecord]:
            cursor = await connection.execute(
                f"SELECT seq, prev, hash, body FROM {SCHEMA}.audit WHERE seq > %s "
                "ORDER BY seq LIMIT %s",
                (after, limit),
            )
            return [AuditRecord(*row) for row in await cursor.fetchall()]

        return await self._pool.run(select)

    async def audit_since(self, since: datetime) -> int:
        async def select(connection: PgConnection) -> int:
            cursor = await connection.execute(
                f"SELECT coalesce((SELECT min(seq) - 1 FROM {SCHEMA}.audit WHERE at >= %s), "
                f"(SELECT seq FROM {SCHEMA}.audit_head))",
                (since,),
            )
            row = await cursor.fetchone()
            assert row is not None
            return int(row[0])

        return await self._pool.run(select)

    async def audit_head(self) -> tuple[int, str]:
        async def select(connection: PgConnection) -> tuple[int, str]:
            cursor = await connection.execute(f"SELECT seq, hash FROM {SCHEMA}.audit_head")
            row = await cursor.fetchone()
            assert row is not None
            return int(row[0]), str(row[1])

        return await self._pool.run(select)

    async def checkpoints(self) -> list[Checkpoint]:
        async def select(connection: PgConnection) -> list[Checkpoint]:
            cursor = await connection.execute(
                f"SELECT {_CHECKPOINT_COLUMNS} FROM {SCHEMA}.audit_checkpoints ORDER BY id"
            )
            return [
                Checkpoint(int(seq), hash, at.astimezone(UTC), pruned, key, signature)
                for seq, hash, at, pruned, key, signature in await cursor.fetchall()
            ]

        return await self._pool.run(select)

    async def add_checkpoint(self, checkpoint: Checkpoint) -> None:
        await self._pool.run(lambda connection: _add_checkpoint(connection, checkpoint))

    async def tokens(self) -> list[TokenRecord]:
        async def select(connection: PgConnection) -> list[TokenRecord]:
            cursor = await connection.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM {SCHEMA}.tokens ORDER BY name"
            )
            return [_token(row) for row in await cursor.fetchall()]

        return await self._pool.run(select)

    async def add_token(self, token: TokenRecord) -> None:
        async def insert(connection: PgConnection) -> bool:
            fields = token_fields(token.role, token.groups, token.routes, token.notify)
            cursor = await connection.execute(
                _ADD_TOKEN,
                (
                    token.name,
                    token.token_hash,
                    token.created_at,
                    *fields,
                    token.deadline,
                    escalations_json(token.escalate),
                    token.remind,
                    *token_limits(token),
                    token.lang,
                ),
            )
            return await cursor.fetchone() is not None

        if not await self._pool.run(insert):
            raise UserQuestionError(
                f"a token named {json.dumps(token.name)} exists; revoke it first "
                "(uq token revoke) or choose another name",
                ErrorCode.TOKEN_EXISTS,
            )
        self._tokens_listeners.tell()

    async def revoke_token(self, name: str) -> TokenRecord | None:
        return await self._update_token(_REVOKE_TOKEN, (name,))

    async def change_token(self, name: str, change: TokenChange) -> TokenRecord | None:
        return await self._update_token(
            _CHANGE_TOKEN,
            (*token_change_fields(change), name),
        )

    async def _update_token(self, sql: str, parameters: Sequence[object]) -> TokenRecord | None:
        """The token an update (which notifies the other nodes) changed, once this store's
        listeners are told; `None` (nobody told) when it matched none."""

        async def update(connection: PgConnection) -> TokenRecord | None:
            cursor = await connection.execute(sql, parameters)
            row = await cursor.fetchone()
            return None if row is None else _token(row)

        changed = await self._pool.run(update)
        if changed is not None:
            self._tokens_listeners.tell()
        return changed

    async def touch_token(self, name: str) -> None:
        async def update(connection: PgConnection) -> None:
            await connection.execute(
                f"UPDATE {SCHEMA}.tokens SET last_used_at = now() WHERE name = %s", (name,)
            )

        await self._pool.run(update)

    async def add_pair_code(
        self, service: str, code: str, person: str, expires_at: datetime
    ) -> None:
        await self._rows(
            f"INSERT INTO {SCHEMA}.chat_codes (code, service, person, expires_at) "
            "VALUES (%s, %s, %s, %s) RETURNING 1",
            (code, service, person, expires_at),
        )

    async def redeem_pair_code(self, service: str, code: str) -> str | None:
        rows = await self._rows(
            f"DELETE FROM {SCHEMA}.chat_codes WHERE code = %s AND service = %s "
            "AND expires_at > now() RETURNING person",
            (code, service),
        )
        return None if not rows else str(rows[0][0])

    async def pair(self, pairing: ChatPairing) -> None:
        await self._rows(
            f"INSERT INTO {SCHEMA}.chat_pairings (service, user_id, chat_id, person, paired_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (service, user_id) DO UPDATE SET "
            "chat_id = excluded.chat_id, person = excluded.person, paired_at = excluded.paired_at "
            "RETURNING 1",
            astuple(pairing),
        )

    async def unpair(self, service: str, person: str) -> int:
        rows = await self._rows(
            f"DELETE FROM {SCHEMA}.chat_pairings WHERE service = %s AND person = %s RETURNING 1",
            (service, person),
        )
        return len(rows)

    async def pairings(self) -> list[ChatPairing]:
        rows = await self._rows(
            f"SELECT service, user_id, chat_id, person, paired_at FROM {SCHEMA}.chat_pairings "
            "ORDER BY service, person, user_id",
            (),
        )
        return [ChatPairing(row[0], row[1], row[2], row[3], row[4].astimezone(UTC)) for row in rows]

    async def add_chat_message(self, message: ChatMessage) -> None:
        await self._rows(
            f"INSERT INTO {SCHEMA}.chat_messages "
            "(ref, rpc_id, service, chat_id, message_id, draft, digest) "
            "VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s) ON CONFLICT (ref) DO UPDATE SET "
            "message_id = excluded.message_id RETURNING 1",
            astuple(message),
        )

    async def chat_messages(self, rpc_id: str) -> list[ChatMessage]:
        rows = await self._rows(f"{_CHAT_MESSAGES} WHERE rpc_id = %s ORDER BY seq", (rpc_id,))
        return [ChatMessage(*row) for row in rows]

    async def chat_message(self, ref: str) -> ChatMessage | None:
        rows = await self._rows(f"{_CHAT_MESSAGES} WHERE ref = %s", (ref,))
        return None if not rows else ChatMessage(*rows[0])

    async def chat_message_at(self, service: str, chat: str, message: str) -> ChatMessage | None:
        rows = await self._rows(
            f"{_CHAT_MESSAGES} WHERE service = %s AND chat_id = %s AND message_id = %s",
            (service, chat, message),
        )
        return None if not rows else ChatMessage(*rows[0])

    async def set_chat_draft(self, ref: str, draft: str) -> None:
        await self._rows(
            f"UPDATE {SCHEMA}.chat_messages SET draft = %s::jsonb WHERE ref = %s RETURNING 1",
            (draft, ref),
        )

    async def take_lease(self, name: str, holder: str, seconds: float) -> bool:
        rows = await self._rows(
            f"INSERT INTO {SCHEMA}.chat_leases AS lease (name, holder, expires_at) "
            "VALUES (%s, %s, now() + make_interval(secs => %s)) "
            "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, "
            "expires_at = excluded.expires_at "
            "WHERE lease.holder = excluded.holder OR lease.expires_at <= now() RETURNING 1",
            (name, holder, seconds),
        )
        return bool(rows)

    async def add_push_subscription(self, subscription: PushSubscription) -> None:
        await self._rows(
            f"INSERT INTO {SCHEMA}.push_subscriptions (id, person, endpoint, p256dh, auth, "
            "secret_hash, device, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (endpoint) DO UPDATE SET id = excluded.id, person = excluded.person, "
            "p256dh = excluded.p256dh, auth = excluded.auth, "
            "secret_hash = excluded.secret_hash, device = excluded.device, "
            "created_at = excluded.created_at RETURNING 1",
            astuple(subscription),
        )

    async def push_subscriptions(self, person: str | None = None) -> list[PushSubscription]:
        where, parameters = ("", ()) if person is None else (" WHERE person = %s", (person,))
        rows = await self._rows(f"{_PUSH_SUBSCRIPTIONS}{where} ORDER BY created_at, id", parameters)
        return [_push_subscription(row) for row in rows]

    async def push_subscription(self, subscription_id: str) -> PushSubscription | None:
        rows = await self._rows(f"{_PUSH_SUBSCRIPTIONS} WHERE id = %s", (subscription_id,))
        return _push_subscription(rows[0]) if rows else None

    async def remove_push_subscription(
        self, subscription_id: str, person: str | None = None
    ) -> bool:
        rows = await self._rows(
            f"DELETE FROM {SCHEMA}.push_subscriptions WHERE id = %s "
            "AND (%s::text IS NULL OR person = %s) RETURNING 1",
            (subscription_id, person, person),
        )
        return bool(rows)

    async def _rows(self, sql: str, parameters: Sequence[object]) -> list[TupleRow]:
        """The rows of one statement (a write says what it wrote with `RETURNING`)."""

        async def run(connection: PgConnection) -> list[TupleRow]:
            cursor = await connection.execute(sql, parameters)
            return await cursor.fetchall()

        return await self._pool.run(run)

    def on_tokens_change(self, listener: TokensListener) -> Callable[[], None]:
        """Call `listener` after a token is added, changed or revoked, through this store or
        (when open as a host's) any other, and after the listening connection reconnects."""
        return self._tokens_listeners.add(listener)

    async def rules_version(self) -> int:
        async def read(connection: PgConnection) -> int:
            cursor = await connection.execute(f"SELECT version FROM {SCHEMA}.rules_version")
            row = await cursor.fetchone()
            assert row is not None  # the migration wrote its one row
            return int(row[0])

        return await self._pool.run(read)

    async def rules(self) -> list[RuleRecord]:
        async def select(connection: PgConnection) -> list[RuleRecord]:
            cursor = await connection.execute(
                f"SELECT {_RULE_COLUMNS} FROM {SCHEMA}.rules ORDER BY id"
            )
            return [rule_record(row, _utc) for row in await cursor.fetchall()]

        return await self._pool.run(select)

    async def add_rule(self, rule: Rule) -> RuleRecord:
        parameters = (
            rule.tool,
            str(rule.decision),
            rule.created_at,
            rule.command,
            rule.path,
            rule.domain,
            rule.asker,
            rule.cwd,
            rule.created_by,
            rule.expires_at,
            rule.approvals,
        )
        added = await self._rule_write(_ADD_RULE, parameters)
        assert added is not None  # an insert always returns its row
        return added

    async def revoke_rule(self, rule_id: int) -> RuleRecord | None:
        return await self._rule_write(_REVOKE_RULE, (rule_id,))

    async def _rule_write(self, sql: str, parameters: Sequence[object]) -> RuleRecord | None:
        """The rule a write (which notifies the other nodes) returned, once this store's
        listeners are told; `None` (nobody told) when it matched none."""

        async def write(connection: PgConnection) -> RuleRecord | None:
            cursor = await connection.execute(sql, parameters)
            row = await cursor.fetchone()
            return None if row is None else rule_record(row, _utc)

        written = await self._pool.run(write)
        if written is not None:
            self._rules_listeners.tell()
        return written

    def on_rules_change(self, listener: RulesListener) -> Callable[[], None]:
        """Call `listener` after a rule is added or revoked, through this store or (when open
        as a host's) any other, and after the listening connection reconnects."""
        return self._rules_listeners.add(listener)


_PUSH_SUBSCRIPTIONS = (
    "SELECT id, person, endpoint, p256dh, auth, secret_hash, device, created_at "
    f"FROM {SCHEMA}.push_subscriptions"
)
_CHAT_MESSAGES = (
    f"SELECT ref, rpc_id, service, chat_id, message_id, draft::text, digest "
    f"FROM {SCHEMA}.chat_messages"
)


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


def _settle_parameters(
    rpc_id: str, settlement: Settlement, digest: str | None, settle_id: uuid.UUID, now: datetime
) -> tuple[object, ...]:
    """The parameters of `_SETTLE` (with its audit record) for `settlement` of `rpc_id` at
    `now`, whose card has `digest`; `settle_id` recognises a retried settle as its own."""
    answer = None if settlement.answer is None else settlement.answer.model_dump_json()
    body = audit_body(rpc_id, digest, settlement, answer, now)
    return (
        str(settlement.outcome),
        answer,
        now,
        None if settlement.via is None else str(settlement.via),
        settlement.by,
        settlement.detail,
        settle_id,
        answer_edited(settlement.answer),
        settlement_text(settlement),
        rpc_id,
        settle_id,
        *_append_parameters(body, settle_id, rpc_id, now),
    )


def _append_parameters(
    body: str, event: uuid.UUID, rpc_id: str, at: datetime
) -> tuple[object, ...]:
    """The parameters of `_appended`'s expressions, in their order."""
    return (body, event, event, rpc_id, at, body)


async def _prune_audit(connection: PgConnection, cutoff: datetime, seal: Seal) -> None:
    """Delete the audit records before `cutoff` (`_PRUNABLE`), after a checkpoint `seal` signs
    says so; in the caller's transaction."""
    cursor = await connection.execute(_PRUNABLE, (cutoff, cutoff))
    row = await cursor.fetchone()
    if row is None:
        return
    seq = int(row[0])
    await _add_checkpoint(connection, seal(seq, str(row[1])))
    await connection.execute(f"DELETE FROM {SCHEMA}.audit WHERE seq <= %s", (seq,))


async def _add_checkpoint(connection: PgConnection, checkpoint: Checkpoint) -> None:
    await connection.execute(
        f"INSERT INTO {SCHEMA}.audit_checkpoints ({_CHECKPOINT_COLUMNS}) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        (
            checkpoint.seq,
            checkpoint.hash,
            checkpoint.at,
            checkpoint.pruned,
            checkpoint.key,
            checkpoint.signature,
        ),
    )


async def _setting(connection: PgConnection, key: str) -> str | None:
    cursor = await connection.execute(f"SELECT value FROM {SCHEMA}.settings WHERE key = %s", (key,))
    row = await cursor.fetchone()
    return None if row is None else cast(str, row[0])


async def _records(
    connection: PgConnection, query: str, parameters: Sequence[object]
) -> list[StoredQuestion]:
    cursor = await connection.execute(query, parameters)
    return [_record(row) for row in await cursor.fetchall()]


def _records_of(rows: Sequence[TupleRow]) -> list[StoredQuestion]:
    return stored_questions(rows, _utc)


def _record(row: TupleRow) -> StoredQuestion:
    return stored_question(row, _utc)


def _token(row: TupleRow) -> TokenRecord:
    return token_record(row, _utc)


def _push_subscription(row: TupleRow) -> PushSubscription:
    return PushSubscription(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7].astimezone(UTC)
    )


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)
