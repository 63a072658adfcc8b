"""The tables of a `PostgresStore`, their version, and the migrations that bring them up to date.

Needs psycopg. The tables live in the PostgreSQL schema `SCHEMA` (so they share a database with
other applications without clashing), which carries its version in `SCHEMA.schema_version`.
`migrate` runs at every start-up under an advisory lock, so nodes that start together migrate once;
a database written by a newer version is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

import anyio

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores._postgres_pool import PgConnection
from user_questions.host.stores._rows import (
    chain_head,
    imported_records,
    render_stored,
    search_text,
)
from user_questions.host.stores.audit_chain import card_digest

__all__ = ["MIGRATIONS", "SCHEMA", "SCHEMA_VERSION", "migrate"]

logger = logging.getLogger("user_questions.host")

SCHEMA = "user_questions"
"""The PostgreSQL schema holding the store's tables."""
SCHEMA_VERSION = 17
"""The schema this code writes; `MIGRATIONS[n]` brings a database from version n to n + 1."""

_LOCK_KEY = 0x75715F7363686D61  # "uq_schma": the advisory lock that serialises migrations


async def _records_and_people(connection: PgConnection) -> None:
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
    searches = [
        (search_text(questions, answer), seq) for seq, questions, answer in await cursor.fetchall()
    ]
    async with connection.cursor() as updates:
        await updates.executemany(
            f"UPDATE {SCHEMA}.questions SET search = %s WHERE seq = %s", searches
        )


async def _rendered(connection: PgConnection) -> None:
    """Version 4: each request's details rendered once and kept (`host/markdown`); rendered
    in a worker thread, so the event loop goes on meanwhile."""
    await connection.execute(
        f"ALTER TABLE {SCHEMA}.questions ADD COLUMN rendered jsonb NOT NULL DEFAULT '{{}}'"
    )
    cursor = await connection.execute(
        f"SELECT seq, questions::text FROM {SCHEMA}.questions "
        "WHERE questions::text LIKE '%\"detail\"%'"
    )
    rows = await cursor.fetchall()

    def render() -> list[tuple[str, int]]:
        return [(render_stored(questions), seq) for seq, questions in rows]

    rendered = await anyio.to_thread.run_sync(render)
    async with connection.cursor() as updates:
        await updates.executemany(
            f"UPDATE {SCHEMA}.questions SET rendered = %s::jsonb WHERE seq = %s", rendered
        )


async def _audit_log(connection: PgConnection) -> None:
    """Version 14: the audit log (docs/audit.md), as on SQLite: each request's card digest; the
    chain of records (`event_id`: the settle that appended it, so that a settle retried after a
    cut connection appends once), its head, which every append moves in the same statement
    (the row lock that serialises appends across nodes), and the signed checkpoints. The
    requests settled before it existed go in first, as `imported` records."""
    await connection.execute(
        f"""
        ALTER TABLE {SCHEMA}.questions ADD COLUMN digest text;
        CREATE TABLE {SCHEMA}.audit (
            seq bigint PRIMARY KEY, rpc_id text NOT NULL, at timestamptz NOT NULL,
            body text NOT NULL, prev text NOT NULL, hash text NOT NULL, event_id uuid UNIQUE);
        CREATE TABLE {SCHEMA}.audit_head (
            seq bigint NOT NULL, prev text NOT NULL, hash text NOT NULL);
        CREATE TABLE {SCHEMA}.audit_checkpoints (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, seq bigint NOT NULL,
            hash text NOT NULL, at timestamptz NOT NULL, pruned boolean NOT NULL,
            key text NOT NULL, signature text NOT NULL);
        """
    )
    cursor = await connection.execute(
        f"SELECT seq, questions::text, approval::text FROM {SCHEMA}.questions"
    )
    digests = [(card_digest(q, a), seq) for seq, q, a in await cursor.fetchall()]
    async with connection.cursor() as updates:
        await updates.executemany(
            f"UPDATE {SCHEMA}.questions SET digest = %s WHERE seq = %s", digests
        )
    cursor = await connection.execute(
        f"SELECT rpc_id, digest, state, answer::text, settled_via, settled_by, channel, "
        f"coalesce(settled_at, asked_at) FROM {SCHEMA}.questions WHERE state <> 'pending' "
        "ORDER BY settled_at, seq"
    )
    records = imported_records(await cursor.fetchall())
    async with connection.cursor() as inserts:
        await inserts.executemany(
            f"INSERT INTO {SCHEMA}.audit (seq, rpc_id, at, body, prev, hash) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            records,
        )
    await connection.execute(
        f"INSERT INTO {SCHEMA}.audit_head VALUES (%s, %s, %s)", chain_head(records)
    )


MIGRATIONS: Sequence[str | Callable[[PgConnection], Awaitable[None]]] = (
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
    # Version 3: one outcome vocabulary (a dismissal is `dismissed`, no longer `cancelled`), and
    # where each ask comes from.
    f"""
    ALTER TABLE {SCHEMA}.questions
        DROP CONSTRAINT questions_state_check,
        ADD COLUMN origin jsonb;
    UPDATE {SCHEMA}.questions SET state = 'dismissed' WHERE state = 'cancelled';
    ALTER TABLE {SCHEMA}.questions ADD CONSTRAINT questions_state_check CHECK (
        state IN ('pending', 'answered', 'dismissed', 'withdrawn', 'timed-out'));
    """,
    _rendered,
    # Version 5: the notification channel that carried the answer link a request was settled by.
    f"ALTER TABLE {SCHEMA}.questions ADD COLUMN channel text",
    # Version 6: who may answer what. Each token's role (tokens made before roles are people),
    # a person's groups, an asker's routes, a person's own notification URLs; each request's
    # audience, as its asker's routes made it. Constant defaults: no table is rewritten.
    f"""
    ALTER TABLE {SCHEMA}.tokens
        ADD COLUMN role text NOT NULL DEFAULT 'person'
            CHECK (role IN ('asker', 'person', 'admin')),
        ADD COLUMN groups jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN routes jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN notify jsonb NOT NULL DEFAULT '[]';
    ALTER TABLE {SCHEMA}.questions ADD COLUMN audience jsonb NOT NULL DEFAULT '[]';
    """,
    # Version 7: remembered decisions and deadlines. What each approval request approves (NULL
    # for plain questions), and the rules people made, with their hits; an asker token's
    # deadline (seconds) and the moment each request asked with it times out.
    f"""
    ALTER TABLE {SCHEMA}.questions ADD COLUMN approval jsonb, ADD COLUMN deadline_at timestamptz;
    ALTER TABLE {SCHEMA}.tokens ADD COLUMN deadline integer;
    CREATE TABLE {SCHEMA}.rules (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tool text NOT NULL,
        decision text NOT NULL CHECK (decision IN ('allow', 'deny')),
        created_at timestamptz NOT NULL,
        command text,
        path text,
        domain text,
        asker text,
        cwd text,
        created_by text,
        expires_at timestamptz,
        hits bigint NOT NULL DEFAULT 0,
        last_used_at timestamptz,
        revoked_at timestamptz
    );
    """,
    # Version 8: escalation and reminders. An asker token's escalation steps ([after, to]) and
    # reminder period (seconds); each request's copy of them, how many steps fired (their
    # targets joined its audience) and when its audience was last reminded.
    f"""
    ALTER TABLE {SCHEMA}.tokens
        ADD COLUMN escalate jsonb NOT NULL DEFAULT '[]', ADD COLUMN remind integer;
    ALTER TABLE {SCHEMA}.questions
        ADD COLUMN escalate jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN escalated integer NOT NULL DEFAULT 0,
        ADD COLUMN remind integer,
        ADD COLUMN reminded_at timestamptz;
    """,
    # Version 9: the chat bots (`host/chat`): who answers from which chat, one-time pairing
    # codes, the messages sent for each request (their buttons' references, the answer built so
    # far), and the leases that let one node at a time poll a bot.
    f"""
    CREATE TABLE {SCHEMA}.chat_pairings (
        service text NOT NULL, user_id text NOT NULL, chat_id text NOT NULL,
        person text NOT NULL, paired_at timestamptz NOT NULL, PRIMARY KEY (service, user_id));
    CREATE TABLE {SCHEMA}.chat_codes (
        code text PRIMARY KEY, service text NOT NULL, person text NOT NULL,
        expires_at timestamptz NOT NULL);
    CREATE TABLE {SCHEMA}.chat_messages (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, ref text NOT NULL UNIQUE,
        rpc_id text NOT NULL, service text NOT NULL, chat_id text NOT NULL,
        message_id text NOT NULL, draft jsonb NOT NULL DEFAULT '{{}}');
    CREATE INDEX chat_messages_request ON {SCHEMA}.chat_messages (rpc_id);
    CREATE TABLE {SCHEMA}.chat_leases (
        name text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL);
    """,
    # Version 10: the rpcId each request's asker knows it by, when the host keeps it under
    # another (each asking token has rpcIds of its own); the rules' version, moved by every rule
    # added or revoked in the same transaction (a trigger), which a node reads before each
    # decision.
    f"""
    ALTER TABLE {SCHEMA}.questions ADD COLUMN asker_rpc_id text;
    CREATE TABLE {SCHEMA}.rules_version (version bigint NOT NULL);
    INSERT INTO {SCHEMA}.rules_version VALUES (0);
    CREATE FUNCTION {SCHEMA}.rules_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE {SCHEMA}.rules_version SET version = version + 1;
            RETURN NULL;
        END
    $$;
    CREATE TRIGGER rules_changed AFTER INSERT OR UPDATE OF revoked_at ON {SCHEMA}.rules
        FOR EACH STATEMENT EXECUTE FUNCTION {SCHEMA}.rules_changed();
    """,
    # Version 11: answers that say more than a label. A request's questions, its answer and the
    # call it approves are kept as `json`, as they were written, not as `jsonb`, which sorts an
    # object's keys: a form's fields (`schema.properties`) keep the order they were asked in,
    # and a call its arguments'. Whether a person allowed the call with changes (the answer's
    # `edited`), so that the history can list the changed calls.
    f"""
    ALTER TABLE {SCHEMA}.questions
        ALTER COLUMN questions TYPE json USING questions::json,
        ALTER COLUMN answer TYPE json USING answer::json,
        ALTER COLUMN approval TYPE json USING approval::json,
        ADD COLUMN edited boolean NOT NULL DEFAULT false;
    UPDATE {SCHEMA}.questions SET edited = true
        WHERE json_typeof(answer -> 'answers') = 'array' AND EXISTS (
            SELECT 1 FROM json_array_elements(answer -> 'answers') AS item
            WHERE json_typeof(item -> 'edited') = 'object');
    """,
    # Version 12: the browsers that get people's questions by Web Push, by person.
    f"""
    CREATE TABLE {SCHEMA}.push_subscriptions (
        id text PRIMARY KEY, person text NOT NULL, endpoint text NOT NULL UNIQUE,
        p256dh text NOT NULL, auth text NOT NULL, secret_hash text NOT NULL,
        device text NOT NULL DEFAULT '', created_at timestamptz NOT NULL);
    CREATE INDEX push_subscriptions_person ON {SCHEMA}.push_subscriptions (person);
    """,
    # Version 13: fair share. An asker token's pending cap and its rate (per second) and burst;
    # NULL: the host's defaults.
    f"""
    ALTER TABLE {SCHEMA}.tokens
        ADD COLUMN max_pending integer, ADD COLUMN rate double precision, ADD COLUMN burst integer;
    """,
    _audit_log,  # Version 14: the audit log.
    # Version 15: a person's own language for their chats and notifications; NULL: the host's.
    f"ALTER TABLE {SCHEMA}.tokens ADD COLUMN lang text;",
    # Version 16: quorum approvals (docs/rules.md). How many people an asker token's approval
    # requests need, and a rule's allowed calls; each request's copy of it; the approvals
    # given so far to a pending request, one per person and call (the call's digest). The
    # digest of the card each chat message shows.
    f"""
    ALTER TABLE {SCHEMA}.tokens ADD COLUMN approvals integer NOT NULL DEFAULT 1;
    ALTER TABLE {SCHEMA}.rules ADD COLUMN approvals integer NOT NULL DEFAULT 1;
    ALTER TABLE {SCHEMA}.questions ADD COLUMN approvals integer NOT NULL DEFAULT 1;
    CREATE TABLE {SCHEMA}.approvals (
        rpc_id text NOT NULL, person text NOT NULL, digest text NOT NULL, call json NOT NULL,
        via text NOT NULL, at timestamptz NOT NULL, PRIMARY KEY (rpc_id, digest, person));
    ALTER TABLE {SCHEMA}.chat_messages ADD COLUMN digest text;
    """,
    # Version 17: a chat message found by the service's own id of it, in its chat: a Telegram
    # reply names the message it answers (a note on that card's answer).
    f"CREATE INDEX chat_messages_sent ON {SCHEMA}.chat_messages (service, chat_id, message_id);",
)


async def migrate(connection: PgConnection, url: str) -> None:
    """Create or upgrade the schema to `SCHEMA_VERSION`, one node at a time; `url` names the
    store in the log and in errors.

    Raises:
        UserQuestionError: `BAD_STORE` when the database has a newer schema version.
    """
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
                f"the store {url} has schema version {version}, newer than this "
                f"user-questions understands ({SCHEMA_VERSION}); upgrade user-questions",
                ErrorCode.BAD_STORE,
            )
        for number in range(version, SCHEMA_VERSION):
            migration = MIGRATIONS[number]
            if callable(migration):
                await migration(connection)
            elif migration:
                await connection.execute(migration)
            await connection.execute(
                f"UPDATE {SCHEMA}.schema_version SET version = %s", (number + 1,)
            )
            logger.info("migrated %s to schema version %d", url, number + 1)


async def _schema_version(connection: PgConnection) -> int | None:
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
