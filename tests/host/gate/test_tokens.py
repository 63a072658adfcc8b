"""Tokens: named tokens, who answered what, and revocation that takes effect at once.

The host runs in process (`TestClient`); token changes are made the way `uq token` makes them,
through a second handle on the store opened beside the host (`host=False`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from tests.host.conftest import AUTH, PICK, TOKEN, answer_frame, ask_frame, dismiss_frame
from user_questions import ErrorCode, UserQuestionError
from user_questions.host.gate.security import Identity
from user_questions.host.gate.tokens import (
    AGENTS,
    OWNER,
    Tokens,
    add_token,
    check_name,
    hash_token,
    host_token,
    revoke_token,
)
from user_questions.host.stores import Role, Store, StoredQuestion
from user_questions.host.stores.sqlite import SQLiteStore


class Host:
    """A host in process, and `uq token` run beside it on the same file."""

    def __init__(self, client: TestClient, db: Path) -> None:
        self.client = client
        self.db = db

    def beside(self, work: Any, *args: Any) -> Any:
        """Run `work(store, *args)` on a command's handle of the host's store."""

        async def run() -> Any:
            async with SQLiteStore(self.db, host=False) as store:
                return await work(store, *args)

        assert self.client.portal is not None
        return self.client.portal.call(run)

    def add(self, name: str) -> dict[str, str]:
        """`uq token add NAME`: the headers that present the new token."""
        token = self.beside(add_token, name)
        headers = {"Authorization": f"Bearer {token}"}
        self.accepted_eventually(headers, expected=True)
        return headers

    def record(self, rpc_id: str) -> StoredQuestion:
        async def read(store: Store) -> StoredQuestion | None:
            return await store.get(rpc_id)

        record = self.beside(read)
        assert isinstance(record, StoredQuestion)
        return record

    def accepted_eventually(self, headers: dict[str, str], expected: bool) -> None:
        """Poll under a deadline until the host accepts (or refuses) these headers: a change
        made beside a SQLite host reaches it within `WATCH_INTERVAL`."""
        assert self.client.portal is not None
        for _ in range(200):
            status = self.client.get("/api/pending", headers=headers).status_code
            if (status == 200) == expected:
                return
            self.client.portal.call(anyio.sleep, 0.05)
        raise AssertionError(f"the host still answers {status}")


@pytest.fixture
def host(client: TestClient, tmp_path: Path) -> Host:
    return Host(client, tmp_path / "host.db")


# -- names and tokens -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["alice", "Bob.Smith", "ci_bot-2", "a" * 64, "7"])
def test_a_token_name_may_hold_letters_digits_dots_dashes_underscores(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize("name", ["", "a" * 65, "-alice", "al ice", "alicé", "a/b", OWNER])
def test_a_name_that_cannot_be_shown_or_is_the_owners_is_refused(name: str) -> None:
    with pytest.raises(UserQuestionError) as caught:
        check_name(name)
    assert caught.value.code == ErrorCode.BAD_REQUEST


@pytest.mark.anyio
async def test_the_store_keeps_only_the_sha256_of_a_new_token(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "host.db") as store:
        token = await add_token(store, "alice")
        (record,) = await store.tokens()
    assert len(token) >= 43  # 256 random bits, base64url
    assert record.token_hash == hashlib.sha256(token.encode()).hexdigest() == hash_token(token)
    assert token.encode() not in (tmp_path / "host.db").read_bytes()


@pytest.mark.anyio
async def test_no_new_token_begins_with_a_dash_so_it_can_follow_token_on_a_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn = iter(["-starts-like-an-option", "-again", "fine-token-of-the-right-kind"])
    monkeypatch.setattr("secrets.token_urlsafe", lambda nbytes: next(drawn))
    async with SQLiteStore(tmp_path / "host.db") as store:
        assert await add_token(store, "alice") == "fine-token-of-the-right-kind"
        drawn = iter(["-x", "owner-token"])
        assert await host_token(store) == "owner-token"


@pytest.mark.anyio
async def test_revoking_a_name_with_no_active_token_says_so(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "host.db") as store:
        with pytest.raises(UserQuestionError) as caught:
            await revoke_token(store, "nobody")
    assert caught.value.code == ErrorCode.NOT_FOUND
    assert str(caught.value) == 'no active token is called "nobody" (uq token list shows them)'


@pytest.mark.anyio
async def test_tokens_name_the_owner_and_each_named_token_and_refuse_the_rest(
    tmp_path: Path,
) -> None:
    async with SQLiteStore(tmp_path / "host.db") as store:
        alice = await add_token(store, "alice")
        async with Tokens(store, "the-owner-token", "the-agents-token") as tokens:
            assert tokens.authenticate("the-owner-token") == Identity(
                OWNER, hash_token("the-owner-token"), Role.ADMIN
            )
            assert tokens.authenticate("the-agents-token") == Identity(
                AGENTS, hash_token("the-agents-token"), Role.ASKER
            )
            assert tokens.authenticate(alice) == Identity("alice", hash_token(alice), Role.PERSON)
            for wrong in ("", "the-owner-token ", alice[:-1], hash_token(alice)):
                assert tokens.authenticate(wrong) is None


@contextlib.asynccontextmanager
async def signed_in(
    tmp_path: Path, name: str
) -> AsyncIterator[tuple[SQLiteStore, Tokens, str, Identity]]:
    """A host's store and tokens with a token `name` added: the token and who it names."""
    async with SQLiteStore(tmp_path / "host.db") as store:
        token = await add_token(store, name)
        async with Tokens(store, "the-owner-token", "the-agents-token") as tokens:
            identity = tokens.authenticate(token)
            assert identity is not None
            yield store, tokens, token, identity


@pytest.mark.anyio
async def test_a_revocation_beside_the_host_closes_what_its_token_opened(tmp_path: Path) -> None:
    async with signed_in(tmp_path, "alice") as (_, tokens, alice, identity):
        closed = anyio.Event()
        tokens.on_revoke(identity, closed.set)
        async with SQLiteStore(tmp_path / "host.db", host=False) as command:
            await revoke_token(command, "alice")
        with anyio.fail_after(5):
            await closed.wait()
        assert tokens.authenticate(alice) is None
        late: list[str] = []
        tokens.on_revoke(identity, lambda: late.append("at once"))
        assert late == ["at once"]


@pytest.mark.anyio
async def test_of_many_sockets_on_one_token_those_closed_are_forgotten_and_the_rest_closed(
    tmp_path: Path,
) -> None:
    # A fleet's agents often share one asker token: each socket's close forgets only its own
    # callback (the same callback twice stays two sockets), and a revocation closes the rest.
    async with signed_in(tmp_path, "fleet") as (store, tokens, _, identity):
        closed: list[int] = []
        removers: list[Callable[[], None]] = []

        def close(number: int) -> None:  # as a socket does: closed, it forgets its callback
            closed.append(number)
            removers[number]()

        removers.extend(
            tokens.on_revoke(identity, functools.partial(close, number)) for number in range(1000)
        )
        for number in range(0, 1000, 2):
            removers[number]()
        removers[0]()  # twice: harmless
        shared = anyio.Event()
        tokens.on_revoke(identity, shared.set)
        remove_shared = tokens.on_revoke(identity, shared.set)
        remove_shared()
        await revoke_token(store, "fleet")
        await tokens.reload()
        assert sorted(closed) == list(range(1, 1000, 2))
        assert shared.is_set()


class TouchedStore(SQLiteStore):
    """A SQLite store that says when a token's use has been written."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.touched = anyio.Event()

    async def touch_token(self, name: str) -> None:
        await super().touch_token(name)
        self.touched.set()


@pytest.mark.anyio
async def test_a_tokens_use_is_recorded_as_its_last_use(tmp_path: Path) -> None:
    async with TouchedStore(tmp_path / "host.db") as store:
        alice = await add_token(store, "alice")
        async with Tokens(store, "the-owner-token", "the-agents-token") as tokens:
            tokens.authenticate(alice)
            with anyio.fail_after(5):
                await store.touched.wait()
        (record,) = await store.tokens()
        assert record.last_used_at is not None


# -- the host ---------------------------------------------------------------------------------


def test_answers_and_dismissals_record_the_person_and_the_surface(host: Host) -> None:
    alice, bob = host.add("alice"), host.add("bob")
    client = host.client
    for rpc_id in ("by-page", "by-terminal", "by-api", "by-owner"):
        with client.websocket_connect("/ws/ask", headers=bob) as asker:
            asker.send_json(ask_frame(rpc_id, PICK))
            asker.receive_json()
    with client.websocket_connect("/ws", headers=alice) as page:
        page.send_json(answer_frame("by-page", "s", {"id": "pick", "selected": ["a"]}))
        while page.receive_json()["payload"]["type"] != "client-response/receipt":
            pass
    terminal = {**bob, "X-UQ-Surface": "terminal"}
    answer = answer_frame("by-terminal", "s", {"id": "pick", "selected": ["b"]})
    assert client.post("/api/respond", headers=terminal, json=answer).json() == {"accepted": True}
    assert client.post("/api/respond", headers=alice, json=dismiss_frame("by-api")).json() == {
        "accepted": True
    }
    client.post("/api/respond", headers=AUTH, json=dismiss_frame("by-owner"))
    records = {
        rpc_id: host.record(rpc_id) for rpc_id in ("by-page", "by-terminal", "by-api", "by-owner")
    }
    recorded = {
        rpc_id: (record.state, record.settled_by, record.settled_via, record.asked_by)
        for rpc_id, record in records.items()
    }
    assert recorded == {
        "by-page": ("answered", "alice", "web", "bob"),
        "by-terminal": ("answered", "bob", "terminal", "bob"),
        "by-api": ("dismissed", "alice", "api", "bob"),
        "by-owner": ("dismissed", OWNER, "api", "bob"),
    }


def test_an_askers_withdrawal_records_its_reason_and_who_withdrew(host: Host) -> None:
    bob = host.add("bob")
    with host.client.websocket_connect("/ws/ask", headers=bob) as asker:
        for rpc_id, reason, outcome in (
            ("gave-up", None, "withdrawn"),
            ("too-late", "timed-out", "timed-out"),
        ):
            asker.send_json(ask_frame(rpc_id, PICK))
            asker.receive_json()
            withdraw = {"type": "withdraw", "rpcId": rpc_id}
            asker.send_json(withdraw if reason is None else {**withdraw, "reason": reason})
            assert asker.receive_json()["payload"] == {"type": "ask/settled", "outcome": outcome}
    assert host.record("gave-up").state == "withdrawn"
    timed_out = host.record("too-late")
    assert (timed_out.state, timed_out.settled_by, timed_out.settled_via) == (
        "timed-out",
        "bob",
        "asker",
    )


def test_a_new_token_opens_the_host_without_a_restart(host: Host) -> None:
    token = host.beside(add_token, "carol")
    host.accepted_eventually({"Authorization": f"Bearer {token}"}, expected=True)


def test_a_revoked_token_is_refused_and_its_open_sockets_are_closed_with_4401(
    host: Host,
) -> None:
    alice, bob = host.add("alice"), host.add("bob")
    client = host.client
    with (
        client.websocket_connect("/ws", headers=alice) as alices_page,
        client.websocket_connect("/ws/ask", headers=alice) as alices_asker,
        client.websocket_connect("/ws", headers=bob) as bobs_page,
        client.websocket_connect("/ws", headers=AUTH) as owners_page,
    ):
        alices_page.send_json({"type": "ping"})
        assert alices_page.receive_json() == {"payload": {"type": "pong"}}
        host.beside(revoke_token, "alice")
        for socket in (alices_page, alices_asker):
            with pytest.raises(WebSocketDisconnect) as caught:
                socket.receive_json()
            assert caught.value.code == 4401
        for survivor in (bobs_page, owners_page):
            survivor.send_json({"type": "ping"})
            assert survivor.receive_json() == {"payload": {"type": "pong"}}
    response = client.get("/api/pending", headers=alice)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    with (
        pytest.raises(WebSocketDenialResponse) as denied,
        client.websocket_connect("/ws", headers=alice),
    ):
        pass
    assert denied.value.status_code == 401
    assert client.get("/api/pending", headers=AUTH).status_code == 200  # the owner's still works


def test_the_page_keeps_the_token_it_was_opened_with_in_its_cookie(host: Host) -> None:
    token = host.add("alice")["Authorization"].removeprefix("Bearer ")
    page = host.client.get(f"/?token={token}")
    assert page.status_code == 200
    assert page.headers["set-cookie"].startswith(f"uq_token={token};")
    assert TOKEN not in page.text
