"""Migrations on both backends. Version 3: a store made by an earlier release keeps every record,
names a dismissal `dismissed` (it said `cancelled`), and keeps the origin of new asks. Version 4:
every request's details are rendered once, as the migration runs, and kept with it. Version 5: it
keeps the notification channel of an answer given through an answer link. Version 6: every token
has a role (the tokens already there become people, in no group, with no routes and no
notification URLs of their own) and every request an audience (the requests already there are
everyone's). Version 10: every request is kept under the rpcId its asker knows it by (none
differs yet), and the rules' version starts, moving with every rule added or revoked from then on,
the rules made before kept. Version 11: an answer that changed a call is found as such, and
PostgreSQL keeps the order of a request's JSON keys (a form's fields). Migrations run one version
after another, so a store of any earlier version reaches the current one."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.host.stores.test_store_contract import ANSWER, QUESTIONS, new
from user_questions.frames import Origin
from user_questions.host.markdown import plain_html, render_markdown
from user_questions.host.stores import (
    Decision,
    HistoryQuery,
    Role,
    Rule,
    Settlement,
    Store,
    TokenChange,
    TokenRecord,
    Vote,
    open_store,
)
from user_questions.host.stores import _postgres_schema as postgres_schema
from user_questions.host.stores._sqlite_schema import MIGRATIONS, SCHEMA_VERSION
from user_questions.outcomes import Outcome, RequestState, Surface
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

pytestmark = pytest.mark.anyio

QUESTIONS_JSON = json.dumps([question.model_dump(mode="json") for question in QUESTIONS])
OLD_ROWS = [
    ("answered-before", "answered", ANSWER.model_dump_json()),
    ("dismissed-before", "cancelled", None),
    ("withdrawn-before", "withdrawn", None),
    ("timed-out-before", "timed-out", None),
]
"""Settled rows as version 2 wrote them: a person's dismissal was the state `cancelled`."""


def sqlite_at_version(path: Path, version: int) -> sqlite3.Connection:
    """A SQLite file as the release of schema `version` created it (open: the caller fills it)."""
    connection = sqlite3.connect(path)
    for number, migration in enumerate(MIGRATIONS[:version]):
        if callable(migration):
            migration(connection)
        else:
            connection.executescript(migration)
        connection.execute(f"PRAGMA user_version = {number + 1}")
    return connection


async def postgres_at_version(pg_url: str, version: int) -> None:
    """The database of `pg_url` as the release of schema `version` created it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(postgres_schema, "SCHEMA_VERSION", version)
        async with open_store(pg_url, host=False):
            pass


async def test_a_version_2_sqlite_file_is_migrated_to_the_one_vocabulary(tmp_path: Path) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 2) as connection:  # what the previous release created
        connection.executemany(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at, state, answer, "
            "settled_at, settled_via, settled_by) "
            "VALUES (?, 'agent-1', ?, '2025-01-01T00:00:00+00:00', ?, ?, "
            "'2025-01-01T00:01:00+00:00', 'web', 'alice')",
            [(rpc_id, QUESTIONS_JSON, state, answer) for rpc_id, state, answer in OLD_ROWS],
        )
        connection.execute(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at) "
            "VALUES ('waiting', 'agent-1', ?, '2025-01-01T00:00:00+00:00')",
            (QUESTIONS_JSON,),
        )
    async with open_store(path) as store:
        await migrated_as_expected(store)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        states = connection.execute("SELECT DISTINCT state FROM questions ORDER BY state")
        assert [state for (state,) in states] == [
            "answered",
            "dismissed",
            "pending",
            "timed-out",
            "withdrawn",
        ]


async def test_a_version_2_postgres_database_is_migrated_to_the_one_vocabulary(
    pg_url: str,
) -> None:
    await postgres_at_version(pg_url, 2)  # what the previous release created
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        for rpc_id, state, answer in OLD_ROWS:
            await connection.execute(
                "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at, "
                "state, answer, settled_at, settled_via, settled_by) "
                "VALUES (%s, 'agent-1', %s::jsonb, now(), %s, %s::jsonb, now(), 'web', 'alice')",
                (rpc_id, QUESTIONS_JSON, state, answer),
            )
        await connection.execute(
            "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at) "
            "VALUES ('waiting', 'agent-1', %s::jsonb, now())",
            (QUESTIONS_JSON,),
        )
    async with open_store(pg_url) as store:
        await migrated_as_expected(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(postgres_schema.SCHEMA_VERSION,)]
        with pytest.raises(psycopg.errors.CheckViolation):  # the old name is gone for good
            await connection.execute(
                "UPDATE user_questions.questions SET state = 'cancelled' WHERE rpc_id = 'waiting'"
            )


async def migrated_as_expected(store: Store) -> None:
    """The old rows read with the one vocabulary, and the store takes origins from now on."""
    states = {rpc_id: (await store.get(rpc_id)) for rpc_id, _, _ in OLD_ROWS}
    assert {rpc_id: record.state if record else None for rpc_id, record in states.items()} == {
        "answered-before": RequestState.ANSWERED,
        "dismissed-before": RequestState.DISMISSED,
        "withdrawn-before": RequestState.WITHDRAWN,
        "timed-out-before": RequestState.TIMED_OUT,
    }
    dismissed = await store.history(HistoryQuery(outcome=Outcome.DISMISSED))
    assert [record.rpc_id for record in dismissed.records] == ["dismissed-before"]
    (waiting,) = await store.pending()
    assert (waiting.rpc_id, waiting.origin) == ("waiting", None)
    origin = Origin(client="codex", cwd="/srv/shop")
    created, _ = await store.submit(replace(new("from-codex"), origin=origin))
    assert created.origin == origin
    assert await store.get("from-codex") == created


PATHOLOGICAL = "[" * 100_000
"""A detail markdown-it takes seconds to parse: the migration gives up on it within its budget."""
DETAILED = [
    {"id": "plan", "question": "Approve?", "detail": "# Plan\n\n1. **ship**"},
    {"id": "slow", "question": "And this?", "detail": PATHOLOGICAL},
    {"id": "bare", "question": "No detail here"},
]
VERSION_3_ROWS = [
    ("detailed", json.dumps(DETAILED), "pending", None),
    ("plain", QUESTIONS_JSON, "withdrawn", None),
    ("asked-before", QUESTIONS_JSON, "dismissed", "web"),
]
"""Rows as version 3 wrote them: no rendered details, no channel."""


async def test_a_version_3_sqlite_file_is_migrated_to_the_current_version(tmp_path: Path) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 3) as connection:  # what the previous release created
        connection.executemany(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at, state, settled_at, "
            "settled_via) VALUES (?, 'agent-1', ?, '2025-01-01T00:00:00+00:00', ?, "
            "CASE WHEN ? IS NULL THEN NULL ELSE '2025-01-01T00:01:00+00:00' END, ?)",
            [
                (rpc_id, questions, state, via, via)
                for rpc_id, questions, state, via in VERSION_3_ROWS
            ],
        )
    async with open_store(path) as store:
        await version_3_migrated_as_expected(store)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


async def test_a_version_3_postgres_database_is_migrated_to_the_current_version(
    pg_url: str,
) -> None:
    await postgres_at_version(pg_url, 3)  # what the previous release created
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        for rpc_id, questions, state, via in VERSION_3_ROWS:
            await connection.execute(
                "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at, "
                "state, settled_at, settled_via) VALUES (%s, 'agent-1', %s::jsonb, now(), %s, "
                "CASE WHEN %s::text IS NULL THEN NULL ELSE now() END, %s)",
                (rpc_id, questions, state, via, via),
            )
    async with open_store(pg_url) as store:
        await version_3_migrated_as_expected(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(postgres_schema.SCHEMA_VERSION,)]


async def version_3_migrated_as_expected(store: Store) -> None:
    """Each old row carries its details' HTML, in question order (the one markdown-it could not
    parse within the budget is its plain text; a request without details has none); old rows read
    without a channel, and an answer by link keeps the one it came through."""
    detailed = await store.get("detailed")
    assert detailed is not None
    assert list(detailed.rendered) == ["plan", "slow"]
    assert detailed.rendered["plan"] == render_markdown("# Plan\n\n1. **ship**")
    assert detailed.rendered["slow"] == plain_html(PATHOLOGICAL)
    plain = await store.get("plain")
    assert plain is not None
    expected = {q.id: render_markdown(q.detail) for q in QUESTIONS if q.detail is not None}
    assert plain.rendered == expected

    before = await store.get("asked-before")
    assert before is not None
    assert (before.state, before.settled_via, before.channel) == (
        RequestState.DISMISSED,
        Surface.WEB,
        None,
    )
    by_link = Settlement(Outcome.ANSWERED, ANSWER, via=Surface.LINK, channel="ntfy")
    settled = await store.settle("detailed", by_link)
    assert settled is not None
    assert (settled.settled_via, settled.channel, settled.settled_by) == (
        Surface.LINK,
        "ntfy",
        None,
    )
    assert await store.get("detailed") == settled
    (entry,) = (await store.history(HistoryQuery(outcome=Outcome.ANSWERED))).records
    assert entry.channel == "ntfy"


ASKED = datetime(2025, 1, 1, tzinfo=UTC)
SETTLED = datetime(2025, 1, 1, 0, 1, tzinfo=UTC)
VERSION_5_TOKENS = [
    ("alice", "a" * 64, ASKED, SETTLED, None),
    ("carol", "c" * 64, ASKED, None, SETTLED),
]
"""Named tokens as version 5 wrote them (name, hash, created, last used, revoked): no role."""
VERSION_5_QUESTIONS = [
    ("answered-before", "answered", ANSWER.model_dump_json(), SETTLED, "link", "ntfy"),
    ("waiting", "pending", None, None, None, None),
]
"""Requests as version 5 wrote them (rpcId, state, answer, settled, via, channel): no audience."""


async def test_a_version_5_sqlite_file_gains_roles_and_audiences_and_loses_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 5) as connection:  # what the previous release created
        connection.executemany(
            "INSERT INTO tokens VALUES (?, ?, ?, ?, ?)",
            [
                (name, token_hash, *(None if t is None else t.isoformat() for t in times))
                for name, token_hash, *times in VERSION_5_TOKENS
            ],
        )
        connection.executemany(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at, asked_by, state, "
            "answer, settled_at, settled_via, settled_by, channel) "
            "VALUES (?, 'agent-1', ?, ?, 'ci', ?, ?, ?, ?, ?, ?)",
            [
                (rpc_id, QUESTIONS_JSON, ASKED.isoformat(), state, answer,
                 None if settled is None else settled.isoformat(), via, None, channel)
                for rpc_id, state, answer, settled, via, channel in VERSION_5_QUESTIONS
            ],
        )  # fmt: skip
        before = sqlite_rows(connection)
    async with open_store(path) as store:
        await version_5_migrated_as_expected(store)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        after = sqlite_rows(connection)
    kept_with_defaults(
        before["tokens"],
        after["tokens"],
        ("person", "[]", "[]", "[]", None, "[]", None, None, None, None, None, 1),
    )
    kept_with_defaults(
        before["questions"],
        digested(after["questions"]),
        ("[]", None, None, "[]", 0, None, None, None, 0),
    )


def sqlite_rows(connection: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tokens and the questions, as stored, in the order they were made."""
    return {
        table: connection.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        for table in ("tokens", "questions")
    }


async def test_a_version_5_postgres_database_gains_roles_and_audiences_and_loses_nothing(
    pg_url: str,
) -> None:
    await postgres_at_version(pg_url, 5)  # what the previous release created
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        async with connection.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO user_questions.tokens VALUES (%s, %s, %s, %s, %s)", VERSION_5_TOKENS
            )
            await cursor.executemany(
                "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at, "
                "asked_by, state, answer, settled_at, settled_via, settled_by, channel) "
                "VALUES (%s, 'agent-1', %s::jsonb, %s, 'ci', %s, %s::jsonb, %s, %s, NULL, %s)",
                [
                    (rpc_id, QUESTIONS_JSON, ASKED, state, answer, settled, via, channel)
                    for rpc_id, state, answer, settled, via, channel in VERSION_5_QUESTIONS
                ],
            )
        before = await postgres_rows(connection)
    async with open_store(pg_url) as store:
        await version_5_migrated_as_expected(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(postgres_schema.SCHEMA_VERSION,)]
        after = await postgres_rows(connection)
    kept_with_defaults(
        before["tokens"],
        after["tokens"],
        ("person", [], [], [], None, [], None, None, None, None, None, 1),
    )
    kept_with_defaults(
        before["questions"],
        digested(after["questions"]),
        ([], None, None, [], 0, None, None, None, False),
    )


async def postgres_rows(connection: psycopg.AsyncConnection[Any]) -> dict[str, list[Any]]:
    """Every row of the tokens and the questions, as stored, in the order they were made."""
    rows = {}
    for table, order in (("tokens", "created_at, name"), ("questions", "seq")):
        cursor = await connection.execute(f"SELECT * FROM user_questions.{table} ORDER BY {order}")
        rows[table] = await cursor.fetchall()
    return rows


def digested(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """`rows` of questions without their last two columns: the card digest the audit log's
    migration computed for each (checked to be one: 64 hexadecimal digits) and the approvals
    the quorum's step gave each (one: as before, one person settles it)."""
    assert all(re.fullmatch("[0-9a-f]{64}", row[-2]) and row[-1] == 1 for row in rows)
    return [tuple(row[:-2]) for row in rows]


def kept_with_defaults(
    before: Sequence[Sequence[Any]], after: Sequence[Sequence[Any]], defaults: tuple[Any, ...]
) -> None:
    """`after` holds every row of `before` unchanged, each followed by the new columns, which
    hold their `defaults`."""
    assert before
    assert [tuple(row[: -len(defaults)]) for row in after] == [tuple(row) for row in before]
    assert [tuple(row[-len(defaults) :]) for row in after] == [defaults] * len(before)


async def version_5_migrated_as_expected(store: Store) -> None:
    """The old tokens are people, in no group, with no routes or notification URLs; the old
    requests are everyone's, so every person sees them; nothing else of them changed."""
    assert await store.tokens() == [
        TokenRecord("alice", "a" * 64, ASKED, last_used_at=SETTLED, role=Role.PERSON),
        TokenRecord("carol", "c" * 64, ASKED, revoked_at=SETTLED, role=Role.PERSON),
    ]
    (waiting,) = await store.pending()
    assert (waiting.rpc_id, waiting.asked_by, waiting.audience) == ("waiting", "ci", ())
    answered = await store.get("answered-before")
    assert answered is not None
    assert (answered.answer, answered.settled_via, answered.channel, answered.audience) == (
        ANSWER,
        Surface.LINK,
        "ntfy",
        (),
    )
    seen = await store.history(HistoryQuery(seen_by=("bob", "@oncall")))
    assert seen.records == [answered]


async def test_a_version_6_sqlite_file_gains_approvals_and_rules_and_loses_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 6) as connection:  # what the previous release created
        connection.executemany(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at, state, answer, "
            "settled_at, settled_via, channel, audience) "
            "VALUES (?, 'agent-1', ?, ?, ?, ?, ?, ?, ?, '[\"@oncall\"]')",
            [
                (rpc_id, QUESTIONS_JSON, ASKED.isoformat(), state, answer,
                 None if settled is None else settled.isoformat(), via, channel)
                for rpc_id, state, answer, settled, via, channel in VERSION_5_QUESTIONS
            ],
        )  # fmt: skip
        before = sqlite_rows(connection)["questions"]
    async with open_store(path) as store:
        await version_6_migrated_as_expected(store)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 17
        after = sqlite_rows(connection)["questions"]
    kept_with_defaults(before, digested(after), (None, None, "[]", 0, None, None, None, 0))


async def test_a_version_6_postgres_database_gains_approvals_and_rules_and_loses_nothing(
    pg_url: str,
) -> None:
    await postgres_at_version(pg_url, 6)  # what the previous release created
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        async with connection.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at, "
                "state, answer, settled_at, settled_via, channel, audience) "
                "VALUES (%s, 'agent-1', %s::jsonb, %s, %s, %s::jsonb, %s, %s, %s, "
                "'[\"@oncall\"]')",
                [
                    (rpc_id, QUESTIONS_JSON, ASKED, state, answer, settled, via, channel)
                    for rpc_id, state, answer, settled, via, channel in VERSION_5_QUESTIONS
                ],
            )
        before = (await postgres_rows(connection))["questions"]
    async with open_store(pg_url) as store:
        await version_6_migrated_as_expected(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(postgres_schema.SCHEMA_VERSION,)] == [(17,)]
        after = (await postgres_rows(connection))["questions"]
    kept_with_defaults(before, digested(after), (None, None, [], 0, None, None, None, False))


async def version_6_migrated_as_expected(store: Store) -> None:
    """The old requests approve nothing (no rule ever decides them), keep their audience, and
    the store has no rules yet but takes one."""
    (waiting,) = await store.pending()
    assert (waiting.rpc_id, waiting.audience, waiting.approval) == ("waiting", ("@oncall",), None)
    assert await store.rules() == []
    made = await store.add_rule(Rule("Bash", Decision.ALLOW, ASKED, command="git status"))
    assert (made.id, made.rule.command, made.hits) == (1, "git status", 0)


async def test_a_version_9_sqlite_file_gains_the_rules_version_and_loses_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 9) as connection:  # what the previous release created
        connection.execute(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at) "
            "VALUES ('waiting', 'agent-1', ?, ?)",
            (QUESTIONS_JSON, ASKED.isoformat()),
        )
        connection.execute(
            "INSERT INTO rules (tool, decision, created_at, command) "
            "VALUES ('Bash', 'allow', ?, 'git status')",
            (ASKED.isoformat(),),
        )
        before = sqlite_rows(connection)["questions"]
    async with open_store(path) as store:
        await version_9_migrated_as_expected(store)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 17
        after = sqlite_rows(connection)["questions"]
    kept_with_defaults(before, digested(after), (None, 0))


async def test_a_version_9_postgres_database_gains_the_rules_version_and_loses_nothing(
    pg_url: str,
) -> None:
    await postgres_at_version(pg_url, 9)  # what the previous release created
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        await connection.execute(
            "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at) "
            "VALUES ('waiting', 'agent-1', %s::jsonb, %s)",
            (QUESTIONS_JSON, ASKED),
        )
        await connection.execute(
            "INSERT INTO user_questions.rules (tool, decision, created_at, command) "
            "VALUES ('Bash', 'allow', %s, 'git status')",
            (ASKED,),
        )
        before = (await postgres_rows(connection))["questions"]
    async with open_store(pg_url) as store:
        await version_9_migrated_as_expected(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(postgres_schema.SCHEMA_VERSION,)] == [(17,)]
        after = (await postgres_rows(connection))["questions"]
    kept_with_defaults(before, digested(after), (None, False))


async def version_9_migrated_as_expected(store: Store) -> None:
    """The request is kept under the rpcId its asker knows it by; the rule made before is
    kept; the rules' version moves with the next rule added and the next revoked."""
    (waiting,) = await store.pending()
    assert (waiting.rpc_id, waiting.asker_rpc_id, waiting.own_rpc_id) == (
        "waiting",
        None,
        "waiting",
    )
    (kept,) = await store.rules()
    assert (kept.id, kept.rule.command, kept.revoked_at) == (1, "git status", None)
    start = await store.rules_version()
    made = await store.add_rule(Rule("Bash", Decision.DENY, ASKED, command="rm"))
    assert await store.rules_version() > start
    moved = await store.rules_version()
    await store.revoke_rule(made.id)
    assert await store.rules_version() > moved


# Version 11: answers that say more than a label. The rows a version 10 store holds are kept; an
# answer that allowed a call with changes is found as such (the history lists the changed calls);
# and on PostgreSQL a request's questions, answer and call keep the order of their keys from then
# on (a form's fields are asked in the order the asker gave them).
CALL = {"command": "rm -rf build/", "description": "Clean the build"}
EDITED = AskUserQuestionAnswer.model_validate(
    {
        "answers": [
            {"id": "approval", "selected": ["Allow"], "edited": {"command": "rm -rf build/tmp"}}
        ]
    }
)
CARD = json.dumps([{"id": "approval", "question": "Allow Bash?", "options": [{"label": "Allow"}]}])
VERSION_10_QUESTIONS = [
    ("answered-plain", QUESTIONS_JSON, None, ANSWER.model_dump_json()),
    (
        "answered-changed",
        CARD,
        json.dumps({"tool": "Bash", "input": CALL}),
        EDITED.model_dump_json(),
    ),
]
FORM = AskUserQuestionItem.model_validate(
    {
        "id": "deploy",
        "question": "Deploy how?",
        "schema": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "environment": {"type": "string", "enum": ["prod", "dev"]},
                "ok": {"type": "boolean"},
            },
        },
    }
)


async def version_10_migrated_as_expected(store: Store) -> None:
    """The changed call is listed as changed, with its original and its change; a form asked
    now keeps its fields in order, however the backend sorts JSON."""
    changed = await store.history(HistoryQuery(edited=True))
    assert [record.rpc_id for record in changed.records] == ["answered-changed"]
    (record,) = changed.records
    assert record.answer == EDITED
    assert record.approval is not None
    assert record.approval.input == CALL
    everything = await store.history(HistoryQuery())
    assert {one.rpc_id for one in everything.records} == {"answered-plain", "answered-changed"}
    asked = replace(new("form-now"), questions=(FORM,))
    stored, _ = await store.submit(asked)
    again = await store.get("form-now")
    assert again is not None
    assert again.questions == stored.questions == (FORM,)
    assert again.questions[0].schema_ is not None
    assert list(again.questions[0].schema_["properties"]) == ["replicas", "environment", "ok"]
    assert list(json.loads(again.questions_json or "[]")[0]["schema"]["properties"]) == [
        "replicas",
        "environment",
        "ok",
    ]


async def test_a_version_10_sqlite_file_finds_its_changed_calls_and_loses_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 10) as connection:  # what the previous release created
        connection.executemany(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at, approval, state, "
            "answer, settled_at, settled_via, settled_by) "
            "VALUES (?, 'agent-1', ?, ?, ?, 'answered', ?, ?, 'web', 'alice')",
            [
                (rpc_id, questions, ASKED.isoformat(), approval, answer, SETTLED.isoformat())
                for rpc_id, questions, approval, answer in VERSION_10_QUESTIONS
            ],
        )
        before = sqlite_rows(connection)["questions"]
    async with open_store(path) as store:
        await version_10_migrated_as_expected(store)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 17
        after = digested(sqlite_rows(connection)["questions"][: len(before)])
    assert [row[:-1] for row in after] == before
    assert [row[-1] for row in after] == [0, 1]


async def test_a_version_10_postgres_database_finds_its_changed_calls_and_loses_nothing(
    pg_url: str,
) -> None:
    await postgres_at_version(pg_url, 10)  # what the previous release created
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        await connection.cursor().executemany(
            "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at, "
            "approval, state, answer, settled_at, settled_via, settled_by) "
            "VALUES (%s, 'agent-1', %s::jsonb, %s, %s::jsonb, 'answered', %s::jsonb, %s, "
            "'web', 'alice')",
            [
                (rpc_id, questions, ASKED, approval, answer, SETTLED)
                for rpc_id, questions, approval, answer in VERSION_10_QUESTIONS
            ],
        )
        before = (await postgres_rows(connection))["questions"]
    async with open_store(pg_url) as store:
        await version_10_migrated_as_expected(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(postgres_schema.SCHEMA_VERSION,)] == [(17,)]
        after = digested((await postgres_rows(connection))["questions"][: len(before)])
    assert [row[:-1] for row in after] == before
    assert [row[-1] for row in after] == [False, True]


VERSION_14_TOKEN = ("alice", "a" * 64, "person", '["ops"]', "[]", '["ntfy://ntfy.example/a"]')
"""A person's token as version 14 wrote it: name, hash, role, groups, routes, notification URLs."""


async def test_a_version_14_sqlite_file_gives_tokens_a_language_and_loses_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 14) as connection:  # what the previous release created
        connection.execute(
            "INSERT INTO tokens (name, token_hash, created_at, role, groups, routes, notify) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (*VERSION_14_TOKEN[:2], ASKED.isoformat(), *VERSION_14_TOKEN[2:]),
        )
    async with open_store(path) as store:
        await version_14_migrated_as_expected(store)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 17


async def test_a_version_14_postgres_database_gives_tokens_a_language_and_loses_nothing(
    pg_url: str,
) -> None:
    await postgres_at_version(pg_url, 14)  # what the previous release created
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        await connection.execute(
            "INSERT INTO user_questions.tokens (name, token_hash, created_at, role, groups, "
            "routes, notify) VALUES (%s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb)",
            (*VERSION_14_TOKEN[:2], ASKED, *VERSION_14_TOKEN[2:]),
        )
    async with open_store(pg_url) as store:
        await version_14_migrated_as_expected(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(postgres_schema.SCHEMA_VERSION,)] == [(17,)]


async def version_14_migrated_as_expected(store: Store) -> None:
    """The token keeps everything it had, with no language of its own (the host's); one can be
    given, and taken back."""
    [token] = [token for token in await store.tokens() if token.name == "alice"]
    assert (token.token_hash, token.role, token.groups, token.notify, token.lang) == (
        "a" * 64,
        Role.PERSON,
        ("ops",),
        ("ntfy://ntfy.example/a",),
        None,
    )
    korean = await store.change_token("alice", TokenChange(lang="ko"))
    assert korean is not None
    assert (korean.lang, korean.groups) == ("ko", ("ops",))
    hosts = await store.change_token("alice", TokenChange(lang=""))
    assert hosts is not None
    assert hosts.lang is None


# Version 16: quorum approvals. A version 15 store's tokens, rules and requests need one approval
# each, as before; its pending request takes votes, counted once per person, and settles at the
# first, since it needs one.


async def version_15_migrated_as_expected(store: Store) -> None:
    (token,) = await store.tokens()
    (rule,) = await store.rules()
    (waiting,) = await store.pending()
    assert (token.approvals, rule.rule.approvals, waiting.approvals) == (1, 1, 1)
    assert await store.votes("waiting") == []
    vote = Vote("waiting", "alice", '{"command":"ls"}', Surface.WEB, SETTLED)
    tally = await store.approve(vote, Settlement(Outcome.ANSWERED, ANSWER, Surface.WEB, "alice"))
    assert tally is not None
    assert (tally.people, tally.needed, tally.counted) == (("alice",), 1, True)
    assert tally.settled is not None


async def test_a_version_15_sqlite_file_needs_one_approval_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 15) as connection:  # what the previous release created
        connection.execute(
            "INSERT INTO tokens (name, token_hash, created_at, role) VALUES ('ci', ?, ?, 'asker')",
            ("c" * 64, ASKED.isoformat()),
        )
        connection.execute(
            "INSERT INTO rules (tool, decision, created_at, command) "
            "VALUES ('Bash', 'allow', ?, 'git status')",
            (ASKED.isoformat(),),
        )
        connection.execute(
            "INSERT INTO questions (rpc_id, session_id, questions, asked_at) "
            "VALUES ('waiting', 'agent-1', ?, ?)",
            (QUESTIONS_JSON, ASKED.isoformat()),
        )
    async with open_store(path) as store:
        await version_15_migrated_as_expected(store)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 17


async def test_a_version_15_postgres_database_needs_one_approval_everywhere(pg_url: str) -> None:
    await postgres_at_version(pg_url, 15)  # what the previous release created
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        await connection.execute(
            "INSERT INTO user_questions.tokens (name, token_hash, created_at, role) "
            "VALUES ('ci', %s, %s, 'asker')",
            ("c" * 64, ASKED),
        )
        await connection.execute(
            "INSERT INTO user_questions.rules (tool, decision, created_at, command) "
            "VALUES ('Bash', 'allow', %s, 'git status')",
            (ASKED,),
        )
        await connection.execute(
            "INSERT INTO user_questions.questions (rpc_id, session_id, questions, asked_at) "
            "VALUES ('waiting', 'agent-1', %s::json, %s)",
            (QUESTIONS_JSON, ASKED),
        )
    async with open_store(pg_url) as store:
        await version_15_migrated_as_expected(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(17,)]
