"""An asker's socket on a real `uq serve` is handed over to the server once accepted
(`host/_hand_over.py`): no task waits on it, and it must still behave as the asker protocol says.
A burst of frames sent at once (more than the server reads ahead) is answered frame by frame, in
order; a settlement reaches the asker; the connection is counted while open and not after; a
revoked token's socket is closed with 4401; a frame over the size limit ends it with 1009."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.connection import Connection

from tests.e2e.host_process import HostProcess, answer_body
from tests.e2e.test_fair_share import WAIT, YES, accepted, add_asker, asker, distinct
from tests.e2e.test_host_cli import uq
from user_questions.frames import MAX_FRAME_BYTES

BURST = 24
"""Frames sent before reading any reply: several times what the server reads ahead."""


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostProcess]:
    running = HostProcess(tmp_path / "host.db")
    running.start()
    yield running
    running.stop()


@pytest.fixture
def token(host: HostProcess) -> str:
    assert host.db is not None
    made = add_asker(host.db, "burst", "--max-pending", "100", "--rate", "1000:1000")
    accepted(host, made)
    return made


def asker_connections(host: HostProcess) -> float:
    """`uq_connections{kind="asker"}` as /metrics reports it now."""
    metrics = httpx.get(f"{host.base}/metrics", headers=host.auth, timeout=WAIT).text
    line = next(
        row for row in metrics.splitlines() if row.startswith('uq_connections{kind="asker"}')
    )
    return float(line.split()[-1])


def ask_frame(rpc_id: str) -> str:
    frame = {"type": "ask", "rpcId": rpc_id, "sessionId": "burst", "questions": [distinct(rpc_id)]}
    return json.dumps(frame)


def read(socket: Connection) -> dict[str, Any]:
    reply: dict[str, Any] = json.loads(socket.recv(timeout=WAIT))
    return reply


def test_a_burst_of_frames_is_answered_in_order_and_a_settlement_follows(
    host: HostProcess, token: str
) -> None:
    with asker(host, token) as socket:
        sent: list[tuple[str | None, str]] = []
        for number in range(BURST):
            if number % 6 == 5:
                socket.send(json.dumps({"type": "ping"}))
                sent.append((None, "pong"))
            elif number % 6 == 4:
                socket.send("{not json")
                sent.append((None, "ask/error"))
            else:
                socket.send(ask_frame(f"b{number}"))
                sent.append((f"b{number}", "ask/pending"))
        replies = [read(socket) for _ in sent]
        assert [
            (reply.get("rpcId"), reply.get("payload", reply)["type"]) for reply in replies
        ] == sent
        assert asker_connections(host) == 1

        assert host.respond(answer_body("b0", "burst", YES))["accepted"] is True
        told = read(socket)
        assert told["rpcId"] == "b0"
        assert told["payload"]["type"] == "ask/settled"
        assert told["payload"]["outcome"] == "answered"

        socket.send(json.dumps({"type": "withdraw", "rpcId": "b1"}))
        withdrawn = read(socket)
        assert withdrawn["rpcId"] == "b1"
        assert withdrawn["payload"]["outcome"] == "withdrawn"
    # The host counted it out before it answered the close: nothing to wait for.
    assert asker_connections(host) == 0
    # The asker left: its requests stay pending, to re-attach to.
    pending = {frame["rpcId"] for frame in host.pending()}
    assert "b2" in pending
    assert {"b0", "b1"}.isdisjoint(pending)


def test_a_revoked_token_s_socket_is_closed_with_4401(host: HostProcess, token: str) -> None:
    assert host.db is not None
    with asker(host, token) as socket:
        socket.send(ask_frame("r1"))
        assert read(socket)["payload"]["type"] == "ask/pending"
        removed = uq("token", "revoke", "burst", "--store", str(host.db))
        assert removed.returncode == 0, removed.stderr
        with pytest.raises(ConnectionClosed) as closed:
            read(socket)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 4401
    assert asker_connections(host) == 0


def test_a_frame_over_the_limit_ends_the_socket_with_1009(host: HostProcess, token: str) -> None:
    with asker(host, token) as socket:
        socket.send(ask_frame("s1"))
        assert read(socket)["payload"]["type"] == "ask/pending"
        socket.send("x" * (MAX_FRAME_BYTES + 1))
        with pytest.raises(ConnectionClosed) as closed:
            read(socket)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009
    assert asker_connections(host) == 0
    assert [frame["rpcId"] for frame in host.pending()] == ["s1"]  # kept, to re-attach to
