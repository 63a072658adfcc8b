"""Tokens and answer records as they are used: `uq serve` running, `uq token` and `uq history`
run beside it in other processes, askers in other processes.

Who answered is recorded for the named token used on each surface; records and history survive
a restart; a token revoked by `uq token revoke` in another process closes the WebSockets it
opened at once, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from websockets.sync.connection import Connection

from tests.e2e.host_process import AskerProcess, HostProcess, answer_body
from tests.e2e.test_host_cli import uq

YES = {"selected": ["yes"]}


def add_token(db: str, name: str) -> str:
    """`uq token add NAME` in its own process: the token it printed."""
    done = uq("token", "add", name, "--store", db)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[0]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def wait_until_accepted(host: HostProcess, token: str) -> None:
    """Poll under a deadline until the host accepts `token` (a SQLite host checks the file for
    changes five times a second)."""
    deadline = time.monotonic() + 10
    while httpx.get(f"{host.base}/api/pending", headers=bearer(token)).status_code != 200:
        assert time.monotonic() < deadline, "the new token was never accepted"
        time.sleep(0.05)  # polling another process; there is nothing to wait on


def open_page(host: HostProcess, token: str) -> ClientConnection:
    return connect(
        host.base.replace("http", "ws", 1) + "/ws",
        additional_headers={"Origin": host.base, "Cookie": f"uq_token={token}"},
    )


def open_asker(host: HostProcess, token: str) -> ClientConnection:
    return connect(host.base.replace("http", "ws", 1) + "/ws/ask", additional_headers=bearer(token))


def receipt_of(page: Connection) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads(page.recv(timeout=15))
        if frame["payload"]["type"] == "client-response/receipt":
            return frame


def history(host: HostProcess) -> list[dict[str, Any]]:
    response = httpx.get(f"{host.base}/api/history", headers=host.auth, timeout=10)
    response.raise_for_status()
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def test_answers_are_attributed_and_the_records_survive_a_restart(host: HostProcess) -> None:
    db = str(host.db)
    alice, bob = add_token(db, "alice"), add_token(db, "bob")
    wait_until_accepted(host, bob)
    asker = AskerProcess(f"{host.base}/?token={bob}", ("on-page", "in-terminal", "dismissed"))
    try:
        frames = host.wait_pending(3)
        rpc = {frame["payload"]["questions"][0]["id"]: frame["rpcId"] for frame in frames}
        late = AskerProcess(host.url, ("too-late",), session="impatient", timeout=0.5)
        assert late.results() == {"too-late": "ASK_TIMED_OUT"}
        with open_page(host, alice) as page:
            page.send(json.dumps(answer_body(rpc["on-page"], "asker", {"id": "on-page", **YES})))
            assert receipt_of(page)["payload"]["accepted"]
        terminal = {**bearer(alice), "X-UQ-Surface": "terminal"}
        body = answer_body(rpc["in-terminal"], "asker", {"id": "in-terminal", **YES})
        response = httpx.post(f"{host.base}/api/respond", json=body, headers=terminal)
        assert response.json() == {"accepted": True}
        dismissal = {
            "type": "client-response",
            "rpcId": rpc["dismissed"],
            "result": {"ok": False, "error": {"code": "cancelled"}},
        }
        assert host.respond(dismissal) == {"accepted": True}
        assert asker.results() == {
            "on-page": {"answers": [{"id": "on-page", **YES}]},
            "in-terminal": {"answers": [{"id": "in-terminal", **YES}]},
            "dismissed": "ASK_CANCELLED",
        }
    finally:
        asker.close()

    assert host.stop() == 0
    again = HostProcess(host.db, args=("--retain-days", "1"))  # keeps today's
    again.start()
    try:
        recorded = {
            item["questions"][0]["id"]: (item["outcome"], item.get("by"), item["via"])
            for item in history(again)
        }
        assert recorded == {
            "on-page": ("answered", "alice", "web"),
            "in-terminal": ("answered", "alice", "terminal"),
            "dismissed": ("dismissed", "owner", "api"),
            "too-late": ("timed-out", "owner", "asker"),
        }
        items = history(again)
        assert [item["questions"][0]["id"] for item in items][:1] == ["dismissed"]
        assert all(item["askedBy"] == "bob" for item in items if item["sessionId"] == "asker")
        assert all("shownAt" in item for item in items if item["sessionId"] == "asker")
        done = uq("history", "--json", "--store", db)  # beside the running host
        assert done.returncode == 0, done.stderr
        printed = [json.loads(line) for line in done.stdout.splitlines()]
        assert [item["rpcId"] for item in printed] == [item["rpcId"] for item in items]
        assert printed[0] == {key: value for key, value in items[0].items() if key != "rendered"}
        for output in (["--json"], []):  # a running host by URL: the very same output
            by_url = uq("history", *output, "--url", again.url, "--limit", "3")
            by_db = uq("history", *output, "--store", db, "--limit", "3")
            assert (by_url.returncode, by_url.stderr) == (0, "")
            assert by_url.stdout == by_db.stdout
        from_env = uq("history", "--json", env={**os.environ, "UQ_URL": again.url})
        assert from_env.stdout == done.stdout
    finally:
        again.stop()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_token_revoked_in_another_process_is_refused_and_its_sockets_closed(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = str(tmp_path / "host.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    host = HostProcess(None, args=("--store", db))
    host.start()
    try:
        alice, bob = add_token(db, "alice"), add_token(db, "bob")
        wait_until_accepted(host, bob)
        with (
            open_page(host, alice) as alices_page,
            open_asker(host, alice) as alices_asker,
            open_page(host, bob) as bobs_page,
        ):
            for socket in (alices_page, alices_asker, bobs_page):
                socket.send(json.dumps({"type": "ping"}))
                assert json.loads(socket.recv(timeout=10)) == {"payload": {"type": "pong"}}
            done = uq("token", "revoke", "alice", "--store", db)
            assert done.returncode == 0, done.stderr
            for socket in (alices_page, alices_asker):
                with pytest.raises(ConnectionClosed) as closed:
                    socket.recv(timeout=10)
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == 4401
            bobs_page.send(json.dumps({"type": "ping"}))
            assert json.loads(bobs_page.recv(timeout=10)) == {"payload": {"type": "pong"}}
        refused = httpx.get(f"{host.base}/api/pending", headers=bearer(alice))
        assert refused.status_code == 401
        listed = uq("token", "list", "--json", "--store", db)
        by_name = {item["name"]: item for item in map(json.loads, listed.stdout.splitlines())}
        assert "revokedAt" in by_name["alice"]
        assert "lastUsedAt" in by_name["bob"]
    finally:
        assert host.stop() == 0, host.stderr
