"""A refused WebSocket handshake, served by uvicorn over a real socket: one info line of ours,
without the token, and none of uvicorn's (which would call it an error and print the token)."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
import uvicorn
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from tests.deadlines import within
from user_questions.host.app import create_app
from user_questions.host.server import bind

pytestmark = pytest.mark.anyio

TOKEN = "the-right-token-123"
WRONG = "a-wrong-token-456"
FOREIGN = Origin("https://evil.example")


class _Server(uvicorn.Server):
    """uvicorn, saying when it serves."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.serving = anyio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.serving.set()


@pytest.fixture
async def address(tmp_path: Path) -> AsyncIterator[str]:
    """`ws://127.0.0.1:<port>` of uvicorn serving the host, logging through the root logger."""
    sock = bind("127.0.0.1", 0)
    config = uvicorn.Config(
        create_app(tmp_path / "host.db", token=TOKEN),
        ws="websockets-sansio",
        lifespan="on",
        log_config=None,  # records reach the root logger, where caplog listens
    )
    server = _Server(config)
    async with anyio.create_task_group() as serving:
        serving.start_soon(server.serve, [sock])
        with within(10, "uvicorn to start"):
            await server.serving.wait()
        yield f"ws://127.0.0.1:{sock.getsockname()[1]}"
        server.should_exit = True


async def test_a_refused_handshake_is_logged_once_at_info_without_the_token(
    address: str, caplog: pytest.LogCaptureFixture
) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    with caplog.at_level(logging.INFO):
        with pytest.raises(InvalidStatus) as no_token:
            await connect(f"{address}/ws")
        with pytest.raises(InvalidStatus) as wrong_token:
            await connect(f"{address}/ws/ask?token={WRONG}")
        with pytest.raises(InvalidStatus) as foreign:
            await connect(f"{address}/ws", additional_headers=bearer, origin=FOREIGN)
        async with connect(f"{address}/ws", additional_headers=bearer) as accepted:
            await accepted.send('{"type": "ping"}')
            assert await accepted.recv() == '{"payload":{"type":"pong"}}'
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
