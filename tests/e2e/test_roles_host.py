"""Roles and routes on a real `uq serve`, on SQLite and on PostgreSQL: tokens made with
`uq token add` beside the running host, then every surface asked in turn (the HTTP API, both
WebSockets, `uq pending`, `uq history`, `/metrics`); on PostgreSQL a role change made beside one
node is applied by another at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect
from websockets.sync.connection import Connection

from tests.e2e.host_process import HostProcess, answer_body
from tests.e2e.test_host_cli import uq
from tests.e2e.test_people_history import wait_until_accepted

QUESTION = {"id": "go", "question": "Go ahead?", "options": [{"label": "yes"}, {"label": "no"}]}


class Inbox:
    """A running host and the tokens made beside it."""

    def __init__(self, host: HostProcess, db: str) -> None:
        self.host = host
        self.db = db
        self.tokens = {"owner": host.token, "agents": host.asker_url.partition("?token=")[2]}

    def add(self, name: str, *flags: str) -> None:
        made = uq("token", "add", name, *flags, "--store", self.db, "--url", self.host.base)
        assert made.returncode == 0, made.stderr
        self.tokens[name] = made.stdout.splitlines()[0]
        wait_until_accepted(self.host, self.tokens[name])  # made beside it: heard of shortly

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def url(self, name: str) -> str:
        return f"{self.host.base}/?token={self.tokens[name]}"

    def get(self, name: str, path: str) -> httpx.Response:
        return httpx.get(self.host.base + path, headers=self.auth(name), timeout=10)

    def asker(self, name: str) -> ClientConnection:
        address = self.host.base.replace("http", "ws", 1) + "/ws/ask"
        return connect(address, additional_headers=self.auth(name))

    def page(self, name: str, node: HostProcess | None = None) -> ClientConnection:
        base = (node or self.host).base
        return connect(
            base.replace("http", "ws", 1) + "/ws",
            additional_headers={"Origin": base, **self.auth(name)},
        )

    def ask(self, name: str, rpc_id: str) -> None:
        with self.asker(name) as asker:
            frame = {"type": "ask", "rpcId": rpc_id, "sessionId": name, "questions": [QUESTION]}
            asker.send(json.dumps(frame))
            assert json.loads(asker.recv(timeout=15))["payload"] == {"type": "ask/pending"}

    def pending(self, name: str) -> list[str]:
        listed = uq("pending", "--url", self.url(name), "--json")
        assert listed.returncode == 0, listed.stderr
        return [json.loads(line)["rpcId"] for line in listed.stdout.splitlines()]


@pytest.fixture(params=["sqlite", "postgresql"])
def inbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Inbox]:
    db = (
        str(tmp_path / "host.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    host = HostProcess(None, args=("--store", db))
    host.start()
    try:
        inbox = Inbox(host, db)
        inbox.add("alice", "--group", "oncall")
        inbox.add("bob")
        inbox.add("pager", "--role", "asker", "--route", "@oncall")
        yield inbox
    finally:
        assert host.stop() == 0, host.stderr


def first_frame(page: Connection) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(page.recv(timeout=15))
    return frame


def read_until_closed(page: Connection) -> None:
    while True:
        page.recv(timeout=15)


def test_every_surface_follows_the_tokens_role_and_routes(inbox: Inbox) -> None:
    inbox.ask("pager", "paged")
    inbox.ask("agents", "for-all")
    # The asker's own view, and nothing else it may do.
    assert inbox.pending("pager") == ["paged"]
    with inbox.asker("pager") as asker:
        assert asker.response is not None
        assert asker.response.headers["x-uq-role"] == "asker"
    for path in ("/api/history", "/metrics", "/api/tokens"):
        refused = inbox.get("pager", path)
        assert refused.status_code == 403, path
        assert refused.json()["error"]["code"] == "FORBIDDEN"
    answered = httpx.post(
        inbox.host.base + "/api/respond",
        json=answer_body("paged", "pager", {"id": "go", "selected": ["yes"]}),
        headers=inbox.auth("pager"),
        timeout=10,
    )
    assert answered.status_code == 403
    with pytest.raises(InvalidStatus) as no_page:
        inbox.page("pager").close()
    assert no_page.value.response.status_code == 403
    # Tokens see what is routed to them; the admin everything.
    assert inbox.pending("alice") == ["paged", "for-all"]
    assert inbox.pending("bob") == ["for-all"]
    assert inbox.pending("owner") == ["paged", "for-all"]
    with inbox.page("bob") as page:
        assert first_frame(page)["rpcId"] == "for-all"
    assert inbox.get("alice", "/metrics").status_code == 200
    # Bob cannot answer what is not his; alice can.
    body = answer_body("paged", "pager", {"id": "go", "selected": ["yes"]})
    bobs = httpx.post(
        inbox.host.base + "/api/respond", json=body, headers=inbox.auth("bob"), timeout=10
    )
    assert bobs.json()["accepted"] is False
    alices = httpx.post(
        inbox.host.base + "/api/respond", json=body, headers=inbox.auth("alice"), timeout=10
    )
    assert alices.json() == {"accepted": True}
    for name, seen in (("alice", ["paged"]), ("bob", []), ("owner", ["paged"])):
        listed = uq("history", "--url", inbox.url(name), "--json")
        assert listed.returncode == 0, listed.stderr
        assert [json.loads(line)["rpcId"] for line in listed.stdout.splitlines()] == seen, name


def test_a_role_change_beside_one_node_is_applied_by_another_at_once(pg_url: str) -> None:
    with ExitStack() as stack:
        first = HostProcess(None, args=("--store", pg_url))
        first.start()
        stack.callback(first.stop)
        second = HostProcess(None, args=("--store", pg_url))
        second.start()
        stack.callback(second.stop)
        inbox = Inbox(first, pg_url)
        inbox.add("alice")
        with inbox.page("alice", second) as page:
            changed = uq("token", "change", "alice", "--role", "asker", "--store", pg_url)
            assert changed.returncode == 0, changed.stderr
            with pytest.raises(ConnectionClosed) as closed:
                read_until_closed(page)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4401
        with pytest.raises(InvalidStatus) as refused:
            inbox.page("alice", second).close()
        assert refused.value.response.status_code == 403
