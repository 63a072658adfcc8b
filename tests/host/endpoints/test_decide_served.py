"""`POST /api/decide` served as `uq serve` serves it (uvicorn with httptools, the hot route
tried first): the gate still refuses a missing or wrong token, a foreign origin and an
oversized body with the codes it always used, and logs a line for each request."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest
import uvicorn

from tests.host.conftest import TOKEN
from tests.host.endpoints.test_decide_api import body
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.gate.security import MAX_BODY_BYTES
from user_questions.host.server import bind, uvicorn_config
from user_questions.host.telemetry.logs import ACCESS_LOGGER

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def served(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """The host app under the host's own uvicorn configuration; a client of it and the host's
    asker token (read once the app has started)."""
    app = create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))
    server = uvicorn.Server(uvicorn_config(app))
    with bind("127.0.0.1", 0) as sock:
        sock.listen()  # the first request waits in the backlog until the app has started
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.serve, [sock])
            async with httpx.AsyncClient(base_url=url, timeout=10) as client:
                assert (await client.get("/healthz")).status_code == 200
                yield client, app.state.asker_token
            server.should_exit = True


def refusal(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


async def test_the_hot_route_refuses_what_the_gate_refuses_with_the_same_codes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    async with served(tmp_path) as (client, asker):
        ask = body("r1", "git status")
        agents = {"Authorization": f"Bearer {asker}"}
        with anyio.fail_after(30):
            no_token = await client.post("/api/decide", json=ask)
            wrong = await client.post(
                "/api/decide", json=ask, headers={"Authorization": "Bearer not-a-token"}
            )
            foreign = await client.post(
                "/api/decide", json=ask, headers={**agents, "Origin": "https://evil.example"}
            )
            too_large = await client.post(
                "/api/decide", content=b" " * (MAX_BODY_BYTES + 1), headers=agents
            )
            undecided = await client.post("/api/decide", json=ask, headers=agents)
    assert refusal(no_token) == (401, "UNAUTHORIZED")
    assert refusal(wrong) == (401, "UNAUTHORIZED")
    assert refusal(foreign) == (403, "FORBIDDEN_ORIGIN")
    assert refusal(too_large) == (413, "REQUEST_TOO_LARGE")
    assert (undecided.status_code, undecided.content) == (204, b"")
    logged = [record.getMessage() for record in caplog.records if record.name == ACCESS_LOGGER]
    for status in (401, 401, 403, 413, 204):
        logged.remove(f"POST /api/decide {status}")


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"NOT HTTP AT ALL\r\n\r\n",
        b"POST /api/decide HTTP/1.1\r\nHost: x\r\nContent-Length: nine\r\n\r\n",
        b"POST /api/decide HTTP/1.1\r\nHo st: x\r\n\r\n",
    ],
)
async def test_a_malformed_request_is_a_400_and_the_host_serves_on(
    tmp_path: Path, request_bytes: bytes
) -> None:
    async with served(tmp_path) as (client, _):
        port = client.base_url.port
        assert port is not None
        with anyio.fail_after(30):
            async with await anyio.connect_tcp(client.base_url.host, port) as raw:
                await raw.send(request_bytes)
                reply = b""
                with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                    while b"\r\n" not in reply:
                        reply += await raw.receive()
            assert reply.startswith(b"HTTP/1.1 400 ")
            assert (await client.get("/healthz")).status_code == 200
