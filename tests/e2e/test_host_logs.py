"""`uq serve --log-format json`: after a scripted run with the token in a query, a header and a
cookie, and a webhook whose URL holds secrets, stderr is one JSON object per line, each request
and WebSocket has its id, and no secret appears anywhere in it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from tests.e2e.host_process import HostProcess, answer_body
from tests.receivers import serving

NOTIFY_SECRET = "notify-secret-0123456789abcdef"
HOOK_PATH = "/hooks/T0123/B0456/path-secret-7f3a"
HOOK_QUERY = "key=query-secret-9c1e"
SECRETS = (NOTIFY_SECRET, "path-secret-7f3a", "query-secret-9c1e")
QUESTION = {"id": "go", "question": "Go?", "options": [{"label": "yes"}, {"label": "no"}]}


class _NotFound(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test reads the host's log, not this one's


@pytest.fixture
def receiver() -> Iterator[str]:
    """A webhook receiver on loopback that answers every delivery 404 (not retried)."""
    with serving(_NotFound) as address:
        yield f"http://{address}{HOOK_PATH}?{HOOK_QUERY}"


def test_json_lines_hold_every_request_with_its_id_and_never_a_secret(
    tmp_path: Path, receiver: str
) -> None:
    host = HostProcess(
        tmp_path / "uq.db",
        args=(
            "--log-format", "json",
            "--host", "0.0.0.0",  # its warning is a JSON line too
            "--notify-webhook", receiver,
            "--notify-secret", NOTIFY_SECRET,
        ),
    )  # fmt: skip
    host.start()
    host.url = host.url.replace("0.0.0.0", "127.0.0.1", 1)
    token = host.token
    try:
        assert httpx.get(f"{host.base}/?token={token}", timeout=10).status_code == 200
        assert httpx.get(f"{host.base}/api/pending", headers=host.auth, timeout=10).is_success
        cookie = {"Cookie": f"uq_token={token}"}
        assert httpx.get(f"{host.base}/api/pending", headers=cookie, timeout=10).is_success
        refused = httpx.get(f"{host.base}/api/pending?token=not-the-token-5", timeout=10)
        assert refused.status_code == 401
        ws = host.base.replace("http", "ws", 1)
        with (
            connect(f"{ws}/ws/ask", additional_headers=host.auth) as asker,
            connect(f"{ws}/ws", additional_headers={"Origin": host.base, **cookie}) as page,
        ):
            ask = {"type": "ask", "rpcId": "r1", "sessionId": "logs", "questions": [QUESTION]}
            asker.send(json.dumps(ask))
            assert json.loads(asker.recv(timeout=10))["payload"]["type"] == "ask/pending"
            assert json.loads(page.recv(timeout=10))["rpcId"] == "r1"
            answer = answer_body("r1", "logs", {"id": "go", "selected": ["yes"]})
            page.send(json.dumps(answer))
            assert json.loads(asker.recv(timeout=10))["payload"]["outcome"] == "answered"
    finally:
        assert host.stop() == 0
    assert host.stderr is not None
    lines = [json.loads(line) for line in host.stderr.splitlines()]  # every line is JSON

    for line in lines:
        assert {"time", "level", "logger", "message"} <= line.keys(), line
    assert lines[0]["level"] == "warning"
    assert lines[0]["message"].startswith("the host listens on 0.0.0.0, so other machines")
    log = host.stderr
    for secret in (token, "not-the-token-5", *SECRETS):
        assert secret not in log, f"{secret!r} is in the log"
    requests = [line for line in lines if line.get("event") == "request"]
    assert [(line["method"], line["path"], line["status"]) for line in requests] == [
        ("GET", "/", 200),
        ("GET", "/api/pending", 200),
        ("GET", "/api/pending", 200),
        ("GET", "/api/pending", 401),
    ]
    assert all(line["request"] and line["client"] == "127.0.0.1" for line in requests)
    assert len({line["request"] for line in requests}) == len(requests)
    sockets = [line for line in lines if line.get("event", "").startswith("connection-")]
    assert sorted((line["event"], line["path"]) for line in sockets) == [
        ("connection-closed", "/ws"),
        ("connection-closed", "/ws/ask"),
        ("connection-opened", "/ws"),
        ("connection-opened", "/ws/ask"),
    ]
    page_ids = {line["connection"] for line in sockets if line["path"] == "/ws"}
    assert len(page_ids) == 1
    # The asker's socket is handed over to the server once accepted; its end is still logged
    # under its own id, with its close code and how long it was open.
    asker_lines = [line for line in sockets if line["path"] == "/ws/ask"]
    assert len({line["connection"] for line in asker_lines}) == 1
    asker_closed = next(line for line in asker_lines if line["event"] == "connection-closed")
    assert isinstance(asker_closed["code"], int)
    assert asker_closed["ms"] > 0
    assert asker_closed["person"] == asker_lines[0]["person"]
    settled = [line for line in lines if line["message"] == "question r1 settled: answered"]
    assert [line["connection"] for line in settled] == list(page_ids)
    dropped = [line for line in lines if line["logger"] == "user_questions.host.notify"]
    assert dropped, "the failed deliveries were not logged"
    assert all("after 1 try (HTTP 404)" in line["message"] for line in dropped)
    assert all(line["message"].startswith("webhook http://127.0.0.1:") for line in dropped)


def test_the_human_format_stays_the_default_and_quiet(tmp_path: Path) -> None:
    host = HostProcess(tmp_path / "uq.db")
    host.start()
    try:
        assert httpx.get(f"{host.base}/api/pending", headers=host.auth, timeout=10).is_success
    finally:
        assert host.stop() == 0
    assert host.stderr == ""
