"""The host's WebSocket protocol under a real uvicorn server: a peer that sends a frame at a time
is read without pausing, a peer that sends faster than the app reads is paused once
`READ_AHEAD` frames wait, and every frame reaches the app once, in order."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

import anyio
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send
from websockets.asyncio.client import ClientConnection, connect

from tests.deadlines import within
from user_questions.host.protocols.websocket import READ_AHEAD, WebSocketProtocol
from user_questions.host.server import bind

pytestmark = pytest.mark.anyio


class Readings(list[tuple[int, bool]]):
    """After each frame the protocol queued: how many wait for the app, and whether it still
    reads."""

    def __init__(self) -> None:
        super().__init__()
        self._grew = anyio.Event()

    def note(self, reading: tuple[int, bool]) -> None:
        self.append(reading)
        self._grew.set()
        self._grew = anyio.Event()

    async def reach(self, count: int) -> None:
        with within(10, f"{count} frames read"):
            while len(self) < count:
                await self._grew.wait()


class Watched(WebSocketProtocol):
    """The host's protocol, noting what it does after each frame it receives."""

    readings: Readings

    def send_receive_event_to_app(self) -> None:
        super().send_receive_event_to_app()
        self.readings.note((self.queue.qsize(), self.transport.is_reading()))


@contextlib.asynccontextmanager
async def served(
    app: Callable[[Scope, Receive, Send], object],
) -> AsyncIterator[tuple[ClientConnection, Readings]]:
    """A uvicorn server running `app` with `Watched`, and a client connected to it."""
    readings = Watched.readings = Readings()
    config = uvicorn.Config(app, ws=Watched, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    with bind("127.0.0.1", 0) as sock:
        port = sock.getsockname()[1]
        sock.listen()  # the client's connection waits in the backlog until uvicorn has started
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.serve, [sock])
            async with connect(f"ws://127.0.0.1:{port}/") as client:
                yield client, readings
            server.should_exit = True


async def test_a_peer_sending_a_frame_at_a_time_is_never_paused() -> None:
    async def echo(scope: Scope, receive: Receive, send: Send) -> None:
        assert (await receive())["type"] == "websocket.connect"
        await send({"type": "websocket.accept"})
        while (message := await receive())["type"] == "websocket.receive":
            await send({"type": "websocket.send", "text": message["text"]})

    async with served(echo) as (client, readings):
        for number in range(10):
            await client.send(str(number))
            assert await client.recv() == str(number)
    assert readings == [(1, True)] * 10  # uvicorn's own protocol: (1, False), a pause each time


async def test_a_peer_sending_faster_than_the_app_reads_is_paused_and_loses_nothing() -> None:
    go = anyio.Event()

    async def late_reader(scope: Scope, receive: Receive, send: Send) -> None:
        assert (await receive())["type"] == "websocket.connect"
        await send({"type": "websocket.accept"})
        await go.wait()
        texts = [(await receive())["text"] for _ in range(10)]
        await send({"type": "websocket.send", "text": ",".join(texts)})

    async with served(late_reader) as (client, readings):
        for number in range(READ_AHEAD):
            await client.send(str(number))
            await readings.reach(number + 1)  # each frame in a read of its own
        waiting = [(count, True) for count in range(1, READ_AHEAD)]
        assert readings == [*waiting, (READ_AHEAD, False)]
        for number in range(READ_AHEAD, 10):
            await client.send(str(number))
        await anyio.sleep(0.2)
        assert len(readings) == READ_AHEAD  # the rest wait in the socket, unread
        go.set()
        assert await client.recv() == ",".join(str(number) for number in range(10))
    assert len(readings) == 10
