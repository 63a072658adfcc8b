"""What both backends keep for the chat bots (`ChatStore`), and the migrations that add it:
a store of version 6 reaches the current version with everything it held and the chat tables
empty; one of version 16 finds a message it sent by the service's id of it (version 17)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import astuple, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import psycopg
import pytest

from tests.host.conftest import StoreFactory
from tests.host.stores.test_migrations import postgres_at_version, sqlite_at_version
from tests.host.stores.test_store_contract import ANSWER, new
from user_questions.host.stores import (
    ChatMessage,
    ChatPairing,
    Settlement,
    Store,
    open_store,
)
from user_questions.host.stores import _postgres_schema as postgres_schema
from user_questions.host.stores._sqlite_schema import SCHEMA_VERSION
from user_questions.outcomes import Outcome, Surface

pytestmark = pytest.mark.anyio

PAIRED = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)


async def test_a_pairing_code_works_once_for_its_service_and_not_after_it_expires(
    store: Store,
) -> None:
    soon = datetime.now(UTC) + timedelta(minutes=10)
    await store.add_pair_code("telegram", "code-1", "alice", soon)
    await store.add_pair_code("telegram", "old", "bob", datetime.now(UTC) - timedelta(seconds=1))
    assert await store.redeem_pair_code("slack", "code-1") is None  # another service's code
    assert await store.redeem_pair_code("telegram", "code-1") == "alice"
    assert await store.redeem_pair_code("telegram", "code-1") is None  # used up
    assert await store.redeem_pair_code("telegram", "old") is None  # expired


async def test_a_user_is_paired_with_one_person_and_unpaired_by_person(store: Store) -> None:
    await store.pair(ChatPairing("telegram", "42", "42", "alice", PAIRED))
    await store.pair(ChatPairing("slack", "U1", "D1", "alice", PAIRED))
    await store.pair(ChatPairing("telegram", "42", "42", "bob", PAIRED))  # the same user again
    assert await store.pairings() == [
        ChatPairing("slack", "U1", "D1", "alice", PAIRED),
        ChatPairing("telegram", "42", "42", "bob", PAIRED),
    ]
    assert await store.unpair("telegram", "alice") == 0
    assert await store.unpair("telegram", "bob") == 1
    assert [pairing.service for pairing in await store.pairings()] == ["slack"]


async def test_sent_messages_are_found_by_request_and_by_reference_with_their_drafts(
    store: Store,
) -> None:
    first = ChatMessage("ref-a", "rpc-1", "telegram", "42", "7")
    second = ChatMessage("ref-b", "rpc-1", "telegram", "43", "9")
    await store.add_chat_message(first)
    await store.add_chat_message(second)
    await store.add_chat_message(ChatMessage("ref-c", "rpc-2", "telegram", "42", "8"))
    await store.set_chat_draft("ref-b", '{"step": 1}')
    assert await store.chat_messages("rpc-1") == [
        first,
        ChatMessage("ref-b", "rpc-1", "telegram", "43", "9", '{"step": 1}'),
    ]
    assert await store.chat_message("ref-c") == ChatMessage("ref-c", "rpc-2", "telegram", "42", "8")
    assert await store.chat_message("ref-z") is None


async def test_a_sent_message_is_found_by_its_service_chat_and_id_only(store: Store) -> None:
    await store.add_chat_message(ChatMessage("ref-a", "rpc-1", "telegram", "42", "7"))
    await store.add_chat_message(ChatMessage("ref-b", "rpc-1", "telegram", "43", "7"))
    await store.add_chat_message(ChatMessage("ref-c", "rpc-1", "slack", "42", "7"))
    found = await store.chat_message_at("telegram", "43", "7")
    assert found is not None
    assert found.ref == "ref-b"
    assert await store.chat_message_at("telegram", "44", "7") is None  # another chat
    assert await store.chat_message_at("telegram", "42", "8") is None  # another message


async def test_purging_a_request_forgets_its_messages_and_expired_codes_go_too(
    store: Store,
) -> None:
    await store.submit(new("old"))
    await store.submit(new("waiting"))
    await store.settle("old", Settlement(Outcome.ANSWERED, ANSWER, Surface.TELEGRAM, "alice"))
    for rpc_id in ("old", "waiting"):
        await store.add_chat_message(ChatMessage(f"ref-{rpc_id}", rpc_id, "telegram", "42", "1"))
    await store.add_pair_code("telegram", "gone", "bob", datetime.now(UTC) - timedelta(seconds=1))
    await store.add_pair_code("telegram", "kept", "bob", datetime.now(UTC) + timedelta(minutes=9))
    assert await store.purge(datetime.now(UTC) + timedelta(days=1)) == 1
    assert await store.chat_messages("old") == []
    assert [m.ref for m in await store.chat_messages("waiting")] == ["ref-waiting"]
    await store.add_pair_code("telegram", "gone", "carol", datetime.now(UTC) + timedelta(minutes=9))
    assert await store.redeem_pair_code("telegram", "gone") == "carol"  # the code was free again
    assert await store.redeem_pair_code("telegram", "kept") == "bob"


async def test_a_lease_is_held_by_one_holder_until_it_expires(make_store: StoreFactory) -> None:
    async with make_store() as store, make_store(host=False) as other:
        assert await store.take_lease("telegram:1", "node-a", 0.5)
        assert not await other.take_lease("telegram:1", "node-b", 0.5)
        assert await store.take_lease("telegram:1", "node-a", 0.5)  # renewed by its holder
        assert await other.take_lease("telegram:2", "node-b", 0.5)  # another bot's lease
        await anyio.sleep(0.6)  # the lease has expired
        assert await other.take_lease("telegram:1", "node-b", 30)
        assert not await store.take_lease("telegram:1", "node-a", 30)


async def test_a_version_6_sqlite_file_gains_the_chat_tables(tmp_path: Path) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 6) as connection:  # what the previous release created
        connection.execute("INSERT INTO settings VALUES ('kept', 'yes')")
    async with open_store(path) as store:
        await migrated_from_6(store)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 17


async def test_a_version_6_postgres_database_gains_the_chat_tables(pg_url: str) -> None:
    await postgres_at_version(pg_url, 6)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        await connection.execute("INSERT INTO user_questions.settings VALUES ('kept', 'yes')")
    async with open_store(pg_url) as store:
        await migrated_from_6(store)
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(postgres_schema.SCHEMA_VERSION,)]
    assert postgres_schema.SCHEMA_VERSION == 17


async def migrated_from_6(store: Store) -> None:
    """What the store held is kept; the chat tables are there, empty, and work."""
    assert await store.setting("kept") == "yes"
    assert await store.pairings() == []
    await store.pair(ChatPairing("telegram", "42", "42", "alice", PAIRED))
    assert await store.pairings() == [ChatPairing("telegram", "42", "42", "alice", PAIRED)]


# Version 17: a chat message is found by the service's own id of it. A version 16 store's
# messages, sent before, are found so, and the lookup uses the new index.

SENT = ChatMessage("ref-old", "rpc-old", "telegram", "42", "7", '{"step": 0}', "digest-1")


async def test_a_version_16_sqlite_file_finds_its_sent_messages_by_their_ids(
    tmp_path: Path,
) -> None:
    path = tmp_path / "host.db"
    with sqlite_at_version(path, 16) as connection:  # what the previous release created
        connection.execute(
            "INSERT INTO chat_messages (ref, rpc_id, service, chat_id, message_id, draft, digest) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            astuple(SENT),
        )
    async with open_store(path) as store:
        assert await store.chat_message_at("telegram", "42", "7") == SENT
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 17
        plan = connection.execute(
            "EXPLAIN QUERY PLAN SELECT ref FROM chat_messages "
            "WHERE service = 'telegram' AND chat_id = '42' AND message_id = '7'"
        ).fetchall()
        assert "chat_messages_sent" in str(plan)


async def test_a_version_16_postgres_database_finds_its_sent_messages_by_their_ids(
    pg_url: str,
) -> None:
    await postgres_at_version(pg_url, 16)  # what the previous release created
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        await connection.execute(
            "INSERT INTO user_questions.chat_messages "
            "(ref, rpc_id, service, chat_id, message_id, draft, digest) "
            "VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s)",
            astuple(SENT),
        )
    async with open_store(pg_url) as store:
        found = await store.chat_message_at("telegram", "42", "7")
    assert found is not None
    assert replace(found, draft=SENT.draft) == SENT
    assert json.loads(found.draft) == {"step": 0}
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as connection:
        version = await connection.execute("SELECT version FROM user_questions.schema_version")
        assert await version.fetchall() == [(17,)]
        indexes = await connection.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'chat_messages_sent'"
        )
        (definition,) = await indexes.fetchall()
        assert "(service, chat_id, message_id)" in definition[0]
