"""What both backends keep for Web Push (`PushStore`), and the schema step that adds it: a store
of version 10 (the release before) gains the table with everything it held kept."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from tests.host.stores.test_migrations import postgres_at_version, sqlite_at_version
from user_questions.host.stores import PushSubscription, Store, open_store
from user_questions.host.stores import _postgres_schema as postgres_schema
from user_questions.host.stores import _sqlite_schema as sqlite_schema

pytestmark = pytest.mark.anyio

MADE = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)


def subscription(number: int, person: str = "alice", **changed: object) -> PushSubscription:
    made = PushSubscription(
        id=f"sub-{number}",
        person=person,
        endpoint=f"https://push.example.com/send/{number}",
        p256dh=f"key-{number}",
        auth=f"auth-{number}",
        secret_hash=f"hash-{number}",
        device="Firefox on Android",
        created_at=MADE + timedelta(minutes=number),
    )
    return replace(made, **changed)  # type: ignore[arg-type]


async def test_subscriptions_are_listed_by_person_found_by_id_and_kept_as_given(
    store: Store,
) -> None:
    await store.add_push_subscription(subscription(2, "bob"))
    await store.add_push_subscription(subscription(1))
    await store.add_push_subscription(subscription(3))
    assert await store.push_subscriptions() == [
        subscription(1),
        subscription(2, "bob"),
        subscription(3),
    ]
    assert await store.push_subscriptions("alice") == [subscription(1), subscription(3)]
    assert await store.push_subscription("sub-2") == subscription(2, "bob")
    assert await store.push_subscription("sub-9") is None


async def test_a_browser_that_subscribes_again_replaces_its_row(store: Store) -> None:
    await store.add_push_subscription(subscription(1))
    again = subscription(1, "bob", id="sub-new", p256dh="new-key", secret_hash="new-hash")
    await store.add_push_subscription(again)  # the same endpoint, signed in as bob now
    assert await store.push_subscriptions() == [again]
    assert await store.push_subscription("sub-1") is None


async def test_a_person_removes_only_their_own_and_the_host_removes_any(store: Store) -> None:
    await store.add_push_subscription(subscription(1))
    await store.add_push_subscription(subscription(2, "bob"))
    assert not await store.remove_push_subscription("sub-2", "alice")  # not hers
    assert await store.remove_push_subscription("sub-1", "alice")
    assert not await store.remove_push_subscription("sub-1", "alice")  # gone already
    assert await store.remove_push_subscription("sub-2")  # a push service said it is gone
    assert await store.push_subscriptions() == []


async def test_a_version_10_sqlite_file_gains_the_push_table(tmp_path: Path) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 10) as connection:  # what the previous release created
        connection.execute("INSERT INTO settings VALUES ('kept', 'yes')")
    async with open_store(path) as store:
        await migrated_from_10(store)
    with sqlite3.connect(path) as connection:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        assert version == sqlite_schema.SCHEMA_VERSION == 17


async def test_a_version_10_postgres_database_gains_the_push_table(pg_url: str) -> None:
    await postgres_at_version(pg_url, 10)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        await connection.execute("INSERT INTO user_questions.settings VALUES ('kept', 'yes')")
    async with open_store(pg_url) as store:
        await migrated_from_10(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(postgres_schema.SCHEMA_VERSION,)]
    assert postgres_schema.SCHEMA_VERSION == 17


async def migrated_from_10(store: Store) -> None:
    """What the store held is kept; the push table is there, empty, and works."""
    assert await store.setting("kept") == "yes"
    assert await store.push_subscriptions() == []
    await store.add_push_subscription(subscription(1))
    assert await store.push_subscriptions("alice") == [subscription(1)]
