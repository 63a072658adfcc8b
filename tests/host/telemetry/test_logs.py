"""The host's log: a line per request and per WebSocket with its id, and JSON lines that never
hold a secret."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient, WebSocketDenialResponse

from tests.host.conftest import AUTH, PICK, TOKEN, answer_frame, ask_frame
from user_questions.host.telemetry.logs import (
    ACCESS_LOGGER,
    REDACTED,
    ContextIds,
    JsonFormatter,
    Redactor,
    url_secrets,
)

FORMAT = JsonFormatter(Redactor([TOKEN, *url_secrets("https://hooks.example.com/T0/B0/hook-key")]))


Lines = Callable[[], list[dict[str, Any]]]


@pytest.fixture
def lines(caplog: pytest.LogCaptureFixture) -> Lines:
    """Every record the host has logged so far from `info` up, as the JSON line it makes."""
    caplog.handler.addFilter(ContextIds())
    caplog.set_level(logging.INFO, logger="user_questions")
    return lambda: [json.loads(FORMAT.format(record)) for record in caplog.records]


def record(message: str, *args: object, exc: bool = False) -> logging.LogRecord:
    made = logging.LogRecord(
        "user_questions.host", logging.WARNING, __file__, 1, message, args, None
    )
    if exc:
        try:
            raise RuntimeError(f"failed with {TOKEN}")
        except RuntimeError:
            made.exc_info = sys.exc_info()
    made.ids = {"request": "abc123"}
    return made


def test_a_line_is_one_json_object_with_time_level_logger_message_and_id() -> None:
    line = json.loads(FORMAT.format(record("question %s settled", "r1")))
    assert line.pop("time").endswith("Z")
    assert line == {
        "level": "warning",
        "logger": "user_questions.host",
        "message": "question r1 settled",
        "request": "abc123",
    }


@pytest.mark.parametrize(
    "text",
    [
        f"GET /?token={TOKEN}&x=1",
        f"Cookie: uq_token={TOKEN}",
        f"Authorization: Bearer {TOKEN}",
        f"the host's token is {TOKEN}",
        "posting to https://hooks.example.com/T0/B0/hook-key failed",
        "a path alone: /T0/B0/hook-key",
    ],
)
def test_tokens_and_secrets_are_redacted_wherever_they_appear(text: str) -> None:
    line = FORMAT.format(record("%s", text, exc=True))
    assert TOKEN not in line
    assert "hook-key" not in line
    assert REDACTED in json.loads(line)["message"]
    assert REDACTED in json.loads(line)["traceback"]


def test_a_token_a_host_does_not_know_is_redacted_too() -> None:
    line = FORMAT.format(record("GET /?token=%s and Bearer %s", "someone-elses", "another-one"))
    assert "someone-elses" not in line
    assert "another-one" not in line


def test_each_request_gets_its_own_id_and_one_line(client: TestClient, lines: Lines) -> None:
    client.get("/api/pending", headers=AUTH)
    client.get("/api/pending", headers={"Authorization": "Bearer wrong-token-1"})
    client.get("/healthz")
    access = [line for line in lines() if line["logger"] == ACCESS_LOGGER]
    assert [
        (line["event"], line["method"], line["path"], line["status"], line["person"])
        for line in access
    ] == [
        ("request", "GET", "/api/pending", 200, "owner"),
        ("request", "GET", "/api/pending", 401, None),
        ("request", "GET", "/healthz", 200, None),
    ]
    assert len({line["request"] for line in access}) == 3
    assert all(line["client"] == "testclient" and line["ms"] >= 0 for line in access)


def test_a_websocket_is_logged_open_and_closed_and_what_it_does_carries_its_id(
    client: TestClient, lines: Lines
) -> None:
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(ask_frame("r1", PICK))
        assert asker.receive_json()["payload"]["type"] == "ask/pending"
        with client.websocket_connect("/ws", headers=AUTH) as page:
            assert page.receive_json()["rpcId"] == "r1"
            page.send_json(answer_frame("r1", "s", {"id": "pick", "selected": ["a"]}))
            while "accepted" not in (payload := page.receive_json()["payload"]):
                pass  # the question/resolved frame may come first
            assert payload["accepted"] is True
        assert asker.receive_json()["payload"]["outcome"] == "answered"
    found = lines()
    events = [(line["event"], line["path"]) for line in found if "event" in line]
    assert events == [
        ("connection-opened", "/ws/ask"),
        ("connection-opened", "/ws"),
        ("connection-closed", "/ws"),
        ("connection-closed", "/ws/ask"),
    ]
    page_id = next(line["connection"] for line in found if line.get("path") == "/ws")
    settled = next(line for line in found if line["message"] == "question r1 settled: answered")
    assert settled["connection"] == page_id  # the answer came through the page
    closed = next(line for line in found if line.get("event") == "connection-closed")
    assert closed["code"] == 1000
    assert closed["person"] == "owner"
    assert closed["status"] == 101


def test_a_refused_websocket_is_one_request_line_with_its_status(
    client: TestClient, lines: Lines
) -> None:
    with (
        pytest.raises(WebSocketDenialResponse),
        client.websocket_connect("/ws?token=wrong-token-2"),
    ):
        pass
    (line,) = [line for line in lines() if line["logger"] == ACCESS_LOGGER]
    assert (line["event"], line["path"], line["status"]) == ("request", "/ws", 401)
    assert "wrong-token-2" not in json.dumps(line)
