"""A real `uq serve` under hostile input: markdown that takes seconds to parse never stalls the
host, and refused WebSocket handshakes are not errors in its log and never print the token."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from tests.e2e.host_process import HostProcess, answer_body

HEALTHZ_WITHIN = 1.0
"""Seconds `/healthz` may take, whatever else the host is doing: a monitor's tolerance, which a
machine busy with other work stays within, and under the seconds that one render of
`SLOW_DETAIL` on the event loop would hold it (about 0.02-0.05 s each on a quiet machine)."""
SLOW_DETAIL = "[" * 100_000
"""Within the detail limit; markdown-it needs seconds to parse it (unclosed link labels)."""
REPLY_SECONDS = 15.0


def asker(host: HostProcess) -> ClientConnection:
    return connect(host.base.replace("http", "ws", 1) + "/ws/ask", additional_headers=host.auth)


def test_healthz_answers_at_once_while_slow_markdown_is_asked_and_listed(
    host: HostProcess,
) -> None:
    waits: list[float] = []
    done = threading.Event()

    def watch() -> None:
        with httpx.Client(base_url=host.base, timeout=5) as client:
            while not done.is_set():
                started = time.perf_counter()
                assert client.get("/healthz").json() == {"ok": True}
                waits.append(time.perf_counter() - started)
                done.wait(0.01)  # a monitor's pace, not a wait for anything

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with asker(host) as socket:
            rpc_ids = [f"slow-{index}" for index in range(4)]
            for rpc_id in rpc_ids:
                questions = [{"id": "plan", "question": "Approve?", "detail": SLOW_DETAIL}]
                frame = {"type": "ask", "rpcId": rpc_id, "sessionId": "s", "questions": questions}
                socket.send(json.dumps(frame))
            replies = [json.loads(socket.recv(timeout=REPLY_SECONDS)) for _ in rpc_ids]
            assert [reply["payload"]["type"] for reply in replies] == ["ask/pending"] * 4
            for rpc_id in rpc_ids:
                host.respond(
                    answer_body(rpc_id, "s", {"id": "plan", "selected": [], "custom": "ok"})
                )
        for _ in range(3):
            history = httpx.get(f"{host.base}/api/history", headers=host.auth, timeout=10)
            assert len(history.json()["items"]) == 4
    finally:
        done.set()
        watcher.join(timeout=10)
    assert len(waits) > 10, "the watch did not run"
    assert max(waits) < HEALTHZ_WITHIN, f"slowest /healthz: {max(waits):.3f} s of {len(waits)}"


def test_refused_handshakes_leave_no_error_and_no_token_in_the_hosts_log(
    host: HostProcess,
) -> None:
    base = host.base.replace("http", "ws", 1)
    wrong = "a-wrong-token-for-the-log"
    for url, headers in (
        (f"{base}/ws", {}),
        (f"{base}/ws/ask?token={wrong}", {}),
        (f"{base}/ws?token={host.token}", {"Origin": "https://evil.example"}),
    ):
        with pytest.raises(InvalidStatus):
            connect(url, additional_headers=headers).close()
    with asker(host) as socket:  # the host serves on
        socket.send('{"type": "ping"}')
        assert json.loads(socket.recv(timeout=REPLY_SECONDS)) == {"payload": {"type": "pong"}}
    assert host.stop() == 0
    assert host.stderr is not None
    assert "ERROR" not in host.stderr
    assert "handshake" not in host.stderr
    assert wrong not in host.stderr
    assert host.token not in host.stderr
