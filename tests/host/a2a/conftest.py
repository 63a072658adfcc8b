"""A real host (the app of `uq serve`, served by uvicorn on loopback in the test's event loop) and
the official A2A SDK's client talking to it over HTTP, as any A2A client would.

The person answers through the hub, as a page's answer does (`Inbox.answer`, `Inbox.dismiss`);
the browser's part is tests/e2e/web/test_web_a2a.py's.
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from a2a.client import Client, ClientConfig, create_client
from a2a.types import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
)
from starlette.applications import Starlette
from starlette.types import ASGIApp

from tests.deadlines import within
from tests.host.conftest import answer, dismissal
from user_questions.frames import JSONObject, Receipt
from user_questions.host.a2a.parts import data_part
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.hub import Hub
from user_questions.host.server import bind
from user_questions.host.stores import Store
from user_questions.outcomes import Surface

TOKEN = "test-token-a2a"
"""The admin's token of the host."""


@dataclass
class Inbox:
    """A running host, and what a test does with it."""

    app: Starlette
    base: str
    http: httpx.AsyncClient
    stack: contextlib.AsyncExitStack
    clients: list[Client] = field(default_factory=list)

    @property
    def hub(self) -> Hub:
        hub: Hub = self.app.state.hub
        return hub

    @property
    def store(self) -> Store:
        store: Store = self.app.state.store
        return store

    @property
    def agents_token(self) -> str:
        """The asker token `uq serve` prints for agents."""
        token: str = self.app.state.asker_token
        return token

    async def token(self, name: str, **fields: Any) -> str:
        """A new named token (an asker's unless `role` says otherwise), made as an admin does."""
        response = await self.http.post(
            "/api/tokens",
            json={"name": name, "role": "asker", **fields},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        assert response.status_code == 201, response.text
        token: str = response.json()["token"]
        return token

    async def client(
        self, token: str | None = None, *, streaming: bool = False, polling: bool = False
    ) -> Client:
        """The SDK's own client, made from the public card, with `token` (the agents' by
        default) as its bearer header."""
        http = httpx.AsyncClient(
            headers={"Authorization": f"Bearer {token or self.agents_token}"}, timeout=30
        )
        await self.stack.enter_async_context(http)
        config = ClientConfig(httpx_client=http, streaming=streaming, polling=polling)
        client = await create_client(self.base, client_config=config)
        self.stack.push_async_callback(client.close)
        return client

    async def answer(self, task_id: str, *items: JSONObject, by: str = "alice") -> None:
        """A person's answer, given in the inbox (as a page gives it)."""
        receipt = await self.respond(task_id, *items, by=by)
        assert receipt.accepted, receipt

    async def respond(self, task_id: str, *items: JSONObject, by: str = "alice") -> Receipt:
        """A person's answer given in the inbox, and the host's receipt for it."""
        record = await self.store.get(task_id)
        assert record is not None
        return await self.hub.respond(
            answer(task_id, record.session_id, *items), via=Surface.WEB, by=by
        )

    async def dismiss(self, task_id: str) -> None:
        receipt = await self.hub.respond(dismissal(task_id), via=Surface.WEB, by="alice")
        assert receipt.accepted, receipt


def message(*parts: Part, message_id: str | None = None, **fields: Any) -> Message:
    """A user's message of `parts`."""
    return Message(
        role=Role.ROLE_USER, message_id=message_id or str(uuid.uuid4()), parts=list(parts), **fields
    )


def asking(questions: list[JSONObject], **more: Any) -> Part:
    """A data part asking `questions` in our vocabulary."""
    return data_part({"questions": questions, **more})


async def send(client: Client, sent: Message, *, immediately: bool = True) -> list[StreamResponse]:
    """What `SendMessage` (or its stream) gives for `sent`, every event of it."""
    request = SendMessageRequest(
        message=sent, configuration=SendMessageConfiguration(return_immediately=immediately)
    )
    with within(20, "the agent's answer to SendMessage"):
        return [event async for event in client.send_message(request)]


async def sent_task(client: Client, sent: Message) -> Task:
    """The task `SendMessage` (returning at once) gives for `sent`."""
    [event] = await send(client, sent)
    assert event.HasField("task"), event
    return event.task


class _Server(uvicorn.Server):
    """uvicorn, saying when it serves."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.serving = anyio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.serving.set()


@contextlib.asynccontextmanager
async def serving(app_at: Callable[[str], ASGIApp]) -> AsyncIterator[str]:
    """The app `app_at(base_url)` makes, served by uvicorn on a free loopback port in this event
    loop (its lifespan run); its base URL."""
    with bind("127.0.0.1", 0) as sock:
        sock.listen()  # a client's connection waits in the backlog until uvicorn has started
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        server = _Server(uvicorn.Config(app_at(base), lifespan="on", log_level="warning"))
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            with within(20, "uvicorn to start"):
                await server.serving.wait()
            yield base
            server.should_exit = True


@contextlib.asynccontextmanager
async def inbox_on(store: str | os.PathLike[str]) -> AsyncIterator[Inbox]:
    """A host on `store` (a SQLite file or a PostgreSQL URL), serving on loopback."""
    app = create_app(HostConfig(store=store, token=TOKEN, a2a_push_private=True))
    async with (
        serving(lambda base: app) as base,
        contextlib.AsyncExitStack() as stack,
        httpx.AsyncClient(base_url=base, timeout=30) as http,
    ):
        yield Inbox(app, base, http, stack)


@pytest.fixture
async def inbox(tmp_path: Path) -> AsyncIterator[Inbox]:
    async with inbox_on(tmp_path / "host.db") as opened:
        yield opened


async def raw(
    inbox: Inbox, method: str, params: dict[str, Any], *, token: str | None = None
) -> dict[str, Any]:
    """A JSON-RPC call made by hand (with `token`, the agents' by default), to read the
    error exactly as it travels."""
    response = await inbox.http.post(
        "/a2a",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"Authorization": f"Bearer {token or inbox.agents_token}", "A2A-Version": "1.0"},
    )
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body
