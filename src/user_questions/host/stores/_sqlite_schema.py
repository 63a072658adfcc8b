"""The tables of a `SQLiteStore`, their version, and the migrations that bring them up to date.

Standard library `sqlite3` only. The schema carries its version in `PRAGMA user_version`; a file
written by a newer version is refused rather than guessed at, and so is a SQLite file of another
application.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores._rows import (
    answer_edited,
    chain_head,
    imported_records,
    render_stored,
    search_text,
)
from user_questions.host.stores.audit_chain import card_digest
from user_questions.host.stores.records import audit_time

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "prepare", "transaction"]

SCHEMA_VERSION = 17
"""The schema this code writes; `MIGRATIONS[n]` brings a file from version n to n + 1."""


def _records_and_people(connection: sqlite3.Connection) -> None:
    """Version 2: who asked, when first shown, who settled, the search text; named tokens."""
    for statement in (
        "ALTER TABLE questions ADD COLUMN asked_by TEXT",
        "ALTER TABLE questions ADD COLUMN shown_at TEXT",
        "ALTER TABLE questions ADD COLUMN settled_by TEXT",
        "ALTER TABLE questions ADD COLUMN search TEXT NOT NULL DEFAULT ''",
        "CREATE INDEX questions_settled ON questions (settled_at DESC, seq DESC) "
        "WHERE state <> 'pending'",
        "CREATE TABLE tokens (name TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, "
        "created_at TEXT NOT NULL, last_used_at TEXT, revoked_at TEXT)",
    ):
        connection.execute(statement)
    rows = connection.execute("SELECT seq, questions, answer FROM questions").fetchall()
    connection.executemany(
        "UPDATE questions SET search = ? WHERE seq = ?",
        [(search_text(questions, answer), seq) for seq, questions, answer in rows],
    )


def _rendered(connection: sqlite3.Connection) -> None:
    """Version 4: each request's details rendered once and kept (`host/markdown`)."""
    connection.execute("ALTER TABLE questions ADD COLUMN rendered TEXT NOT NULL DEFAULT '{}'")
    rows = connection.execute(
        "SELECT seq, questions FROM questions WHERE questions LIKE '%\"detail\"%'"
    ).fetchall()
    connection.executemany(
        "UPDATE questions SET rendered = ? WHERE seq = ?",
        [(render_stored(questions), seq) for seq, questions in rows],
    )


def _own_ids_and_rules_version(connection: sqlite3.Connection) -> None:
    """Version 10: the rpcId each request's asker knows it by, when the host keeps it under
    another (each asking token has rpcIds of its own); the rules' version, moved by every rule
    added or revoked (in the same statement: a trigger), which a host reads before each
    decision."""
    for statement in (
        "ALTER TABLE questions ADD COLUMN asker_rpc_id TEXT",
        "CREATE TABLE rules_version (version INTEGER NOT NULL)",
        "INSERT INTO rules_version VALUES (0)",
        "CREATE TRIGGER rules_added AFTER INSERT ON rules "
        "BEGIN UPDATE rules_version SET version = version + 1; END",
        "CREATE TRIGGER rules_revoked AFTER UPDATE OF revoked_at ON rules "
        "BEGIN UPDATE rules_version SET version = version + 1; END",
    ):
        connection.execute(statement)


def _edited(connection: sqlite3.Connection) -> None:
    """Version 11: whether a person allowed the call with changes (the answer's `edited`), so
    that the history can list the changed calls; read from the answers already kept."""
    connection.execute("ALTER TABLE questions ADD COLUMN edited INTEGER NOT NULL DEFAULT 0")
    rows = connection.execute("SELECT seq, answer FROM questions WHERE answer IS NOT NULL")
    connection.executemany(
        "UPDATE questions SET edited = 1 WHERE seq = ?",
        [(seq,) for seq, answer in rows.fetchall() if answer_edited(answer)],
    )


def _audit_log(connection: sqlite3.Connection) -> None:
    """The audit log (docs/audit.md): each request's card digest; the chain of records, its head
    (the last record's number and hash, which each append moves) and the signed checkpoints.
    The requests settled before it existed go in first, in the order they settled, as
    `imported` records."""
    for statement in (
        "ALTER TABLE questions ADD COLUMN digest TEXT",
        "CREATE TABLE audit (seq INTEGER PRIMARY KEY, rpc_id TEXT NOT NULL, at TEXT NOT NULL, "
        "body TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL)",
        "CREATE TABLE audit_head (seq INTEGER NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL)",
        "CREATE TABLE audit_checkpoints (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, "
        "hash TEXT NOT NULL, at TEXT NOT NULL, pruned INTEGER NOT NULL, key TEXT NOT NULL, "
        "signature TEXT NOT NULL)",
    ):
        connection.execute(statement)
    rows = connection.execute("SELECT seq, questions, approval FROM questions").fetchall()
    connection.executemany(
        "UPDATE questions SET digest = ? WHERE seq = ?",
        [(card_digest(questions, approval), seq) for seq, questions, approval in rows],
    )
    settled = connection.execute(
        "SELECT rpc_id, digest, state, answer, settled_via, settled_by, channel, "
        "coalesce(settled_at, asked_at) "
        "FROM questions WHERE state <> 'pending' ORDER BY settled_at, seq"
    ).fetchall()
    records = imported_records([(*row[:7], _moment(row[7])) for row in settled])
    connection.executemany(
        "INSERT INTO audit (seq, rpc_id, at, body, prev, hash) VALUES (?, ?, ?, ?, ?, ?)",
        [(seq, rpc_id, audit_time(at), *rest) for seq, rpc_id, at, *rest in records],
    )
    connection.execute("INSERT INTO audit_head VALUES (?, ?, ?)", chain_head(records))


MIGRATIONS: Sequence[str | Callable[[sqlite3.Connection], None]] = (
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
    _records_and_people,
    # Version 3: one outcome vocabulary (a dismissal is `dismissed`, no longer `cancelled`), and
    # where each ask comes from.
    """
    UPDATE questions SET state = 'dismissed' WHERE state = 'cancelled';
    ALTER TABLE questions ADD COLUMN origin TEXT;
    """,
    _rendered,
    # Version 5: the notification channel that carried the answer link a request was settled by.
    "ALTER TABLE questions ADD COLUMN channel TEXT",
    # Version 6: who may answer what. Each token's role (tokens made before roles are people),
    # a person's groups, an asker's routes, a person's own notification URLs; each request's
    # audience, as its asker's routes made it. Lists of names are JSON arrays.
    """
    ALTER TABLE tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'person'
        CHECK (role IN ('asker', 'person', 'admin'));
    ALTER TABLE tokens ADD COLUMN groups TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE tokens ADD COLUMN routes TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE tokens ADD COLUMN notify TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE questions ADD COLUMN audience TEXT NOT NULL DEFAULT '[]';
    """,
    # Version 7: remembered decisions and deadlines. What each approval request approves (a JSON
    # object, NULL for plain questions), and the rules people made, with their hits; an asker
    # token's deadline (seconds) and the moment each request asked with it times out.
    """
    ALTER TABLE questions ADD COLUMN approval TEXT;
    ALTER TABLE questions ADD COLUMN deadline_at TEXT;
    ALTER TABLE tokens ADD COLUMN deadline INTEGER;
    CREATE TABLE rules (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tool TEXT NOT NULL,
        decision TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
        created_at TEXT NOT NULL,
        command TEXT,
        path TEXT,
        domain TEXT,
        asker TEXT,
        cwd TEXT,
        created_by TEXT,
        expires_at TEXT,
        hits INTEGER NOT NULL DEFAULT 0,
        last_used_at TEXT,
        revoked_at TEXT
    );
    """,
    # Version 8: escalation and reminders. An asker token's escalation steps ([after, to]) and
    # reminder period (seconds); each request's copy of them, how many steps fired (their
    # targets joined its audience) and when its audience was last reminded.
    """
    ALTER TABLE tokens ADD COLUMN escalate TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE tokens ADD COLUMN remind INTEGER;
    ALTER TABLE questions ADD COLUMN escalate TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE questions ADD COLUMN escalated INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE questions ADD COLUMN remind INTEGER;
    ALTER TABLE questions ADD COLUMN reminded_at TEXT;
    """,
    # Version 9: the chat bots (`host/chat`): who answers from which chat, one-time pairing
    # codes, the messages sent for each request (their buttons' references, the answer built so
    # far), and the leases that let one host at a time poll a bot.
    """
    CREATE TABLE chat_pairings (
        service TEXT NOT NULL, user_id TEXT NOT NULL, chat_id TEXT NOT NULL,
        person TEXT NOT NULL, paired_at TEXT NOT NULL, PRIMARY KEY (service, user_id));
    CREATE TABLE chat_codes (
        code TEXT PRIMARY KEY, service TEXT NOT NULL, person TEXT NOT NULL,
        expires_at TEXT NOT NULL);
    CREATE TABLE chat_messages (
        seq INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE, rpc_id TEXT NOT NULL,
        service TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL,
        draft TEXT NOT NULL DEFAULT '{}');
    CREATE INDEX chat_messages_request ON chat_messages (rpc_id);
    CREATE TABLE chat_leases (
        name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at TEXT NOT NULL);
    """,
    _own_ids_and_rules_version,
    _edited,
    # Version 12: the browsers that get people's questions by Web Push, by person.
    """
    CREATE TABLE push_subscriptions (
        id TEXT PRIMARY KEY, person TEXT NOT NULL, endpoint TEXT NOT NULL UNIQUE,
        p256dh TEXT NOT NULL, auth TEXT NOT NULL, secret_hash TEXT NOT NULL,
        device TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
    CREATE INDEX push_subscriptions_person ON push_subscriptions (person);
    """,
    # Version 13: fair share. An asker token's pending cap and its rate (per second) and burst;
    # NULL: the host's defaults.
    """
    ALTER TABLE tokens ADD COLUMN max_pending INTEGER;
    ALTER TABLE tokens ADD COLUMN rate REAL;
    ALTER TABLE tokens ADD COLUMN burst INTEGER;
    """,
    _audit_log,  # Version 14: the audit log.
    # Version 15: a person's own language for their chats and notifications; NULL: the host's.
    "ALTER TABLE tokens ADD COLUMN lang TEXT;",
    # Version 16: quorum approvals (docs/rules.md). How many people an asker token's approval
    # requests need, and a rule's allowed calls; each request's copy of it; the approvals
    # given so far to a pending request, one per person and call (the call's digest). The
    # digest of the card each chat message shows.
    """
    ALTER TABLE tokens ADD COLUMN approvals INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE rules ADD COLUMN approvals INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE questions ADD COLUMN approvals INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE approvals (
        rpc_id TEXT NOT NULL, person TEXT NOT NULL, digest TEXT NOT NULL, call TEXT NOT NULL,
        via TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (rpc_id, digest, person));
    ALTER TABLE chat_messages ADD COLUMN digest TEXT;
    """,
    # Version 17: a chat message found by the service's own id of it, in its chat: a Telegram
    # reply names the message it answers (a note on that card's answer).
    "CREATE INDEX chat_messages_sent ON chat_messages (service, chat_id, message_id);",
)


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


def prepare(connection: sqlite3.Connection, url: str) -> None:
    """WAL, full sync, and the schema at `SCHEMA_VERSION`; `url` names the store in errors.

    Raises:
        UserQuestionError: `BAD_STORE` for a file that is not a store, belongs to another
            application, cannot use WAL mode, or has a newer schema version.
    """
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
        with transaction(connection):
            # Another process may have migrated the file since it was read above.
            if connection.execute("PRAGMA user_version").fetchone()[0] > number:
                continue
            migration = MIGRATIONS[number]
            if callable(migration):
                migration(connection)
            else:
                for statement in migration.split(";"):
                    if statement.strip():
                        connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {number + 1}")


@contextlib.contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """`BEGIN IMMEDIATE` ... `COMMIT` on an autocommit connection; `ROLLBACK` if it raises."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if connection.in_transaction:  # an error such as SQLITE_FULL may have ended it already
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
