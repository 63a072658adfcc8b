"""A refused WebSocket handshake, served by uvicorn over a real socket: one info line of ours,
without the token, and none of uvicorn's (which would call it an error and print the token)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

from tests.fuzz.hosts import TOKEN, in_process_host

WRONG = "a-wrong-token-456"
FOREIGN = Origin("https://evil.example")


def test_a_refused_handshake_is_logged_once_at_info_without_the_token(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    # uvicorn's own logger as `uq serve` leaves it (another test's uvicorn.Config may have
    # raised its level).
    with (
        caplog.at_level(logging.INFO),
        caplog.at_level(logging.INFO, "uvicorn.error"),
        in_process_host(tmp_path) as (base, _),
    ):
        address = base.replace("http", "ws", 1)
        with pytest.raises(InvalidStatus) as no_token:
            connect(f"{address}/ws")
        with pytest.raises(InvalidStatus) as wrong_token:
            connect(f"{address}/ws/ask?token={WRONG}")
        with pytest.raises(InvalidStatus) as foreign:
            connect(f"{address}/ws", additional_headers=bearer, origin=FOREIGN)
        with connect(f"{address}/ws", additional_headers=bearer) as accepted:
            accepted.send('{"type": "ping"}')
            assert accepted.recv(timeout=10) == '{"payload":{"type":"pong"}}'
    statuses = [error.value.response.status_code for error in (no_token, wrong_token, foreign)]
    assert statuses == [401, 401, 403]
    server_side = [r for r in caplog.records if r.name.startswith(("uvicorn", "user_questions"))]
    refusals = [record for record in server_side if "refused" in record.getMessage()]
    assert [(record.levelname, record.name) for record in refusals] == [
        ("INFO", "user_questions.host")
    ] * 3
    assert refusals[1].getMessage().startswith("refused a WebSocket to /ws/ask from 127.0.0.1:")
    assert refusals[2].getMessage().endswith("(403): requests from another origin are refused")
    everything = "\n".join(record.getMessage() for record in server_side)
    assert WRONG not in everything
    assert TOKEN not in everything
    assert "handshake" not in everything
    assert not [record for record in server_side if record.levelno >= logging.WARNING]
    assert "[accepted]" in everything  # uvicorn still logs what it does not refuse
