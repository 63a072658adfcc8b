"""The host's WebSocket protocol under a real uvicorn server: a peer that sends a frame at a time
is read without pausing, a peer that sends faster than the app reads is paused once
`READ_AHEAD` frames wait, and every frame reaches the app once, in order; a peer that sends a
frame over the limit reads the 1009 close frame, whatever it was still sending."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import struct
from collections.abc import AsyncIterator, Callable

import anyio
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send
from websockets.asyncio.client import ClientConnection, connect

from tests.deadlines import within
from user_questions.host.endpoints.websocket import READ_AHEAD, WebSocketProtocol
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


App = Callable[[Scope, Receive, Send], object]


@contextlib.asynccontextmanager
async def serving(
    app: App,
    ws_max_size: int = 16 * 1024 * 1024,
    *,
    http: type[asyncio.Protocol] | str = "httptools",
    ws: type[WebSocketProtocol] = Watched,
) -> AsyncIterator[int]:
    """A uvicorn server running `app` with `ws` (`Watched` unless told) behind `http`; its
    port."""
    config = uvicorn.Config(
        app, http=http, ws=ws, ws_max_size=ws_max_size, lifespan="off", log_level="warning"
    )
    server = uvicorn.Server(config)
    with bind("127.0.0.1", 0) as sock:
        sock.listen()  # the client's connection waits in the backlog until uvicorn has started
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.serve, [sock])
            yield sock.getsockname()[1]
            server.should_exit = True


@contextlib.asynccontextmanager
async def served(app: App) -> AsyncIterator[tuple[ClientConnection, Readings]]:
    """A uvicorn server running `app` with `Watched`, and a client connected to it."""
    readings = Watched.readings = Readings()
    async with serving(app) as port, connect(f"ws://127.0.0.1:{port}/") as client:
        yield client, readings


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


def _too_large_then_read(port: int, frame_bytes: int) -> bytes:
    """Open a WebSocket by hand, send one masked text frame of `frame_bytes` in a single
    `sendall` (the whole of it, as a peer that does not read while it sends), then read until
    the host ends the stream: what the peer received after the handshake."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as peer:
        key = base64.b64encode(os.urandom(16)).decode()
        peer.sendall(
            "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        handshake = b""
        while b"\r\n\r\n" not in handshake:
            handshake += peer.recv(4096)
        assert handshake.startswith(b"HTTP/1.1 101")
        received = handshake.split(b"\r\n\r\n", 1)[1]
        header = struct.pack("!BBQ", 0x81, 0x80 | 127, frame_bytes) + b"\0\0\0\0"  # mask 0
        peer.sendall(header + b"x" * frame_bytes)
        while chunk := peer.recv(65536):
            received += chunk
        return received


async def test_a_frame_over_the_limit_is_answered_with_1009_not_a_reset() -> None:
    async def reader(scope: Scope, receive: Receive, send: Send) -> None:
        assert (await receive())["type"] == "websocket.connect"
        await send({"type": "websocket.accept"})
        assert (await receive())["type"] == "websocket.disconnect"

    Watched.readings = Readings()
    async with serving(reader, ws_max_size=1024) as port:
        # Megabytes beyond the limit: uvicorn's own protocol closes the socket with them unread,
        # and the peer's send or read then fails with a reset, the close frame lost.
        received = await anyio.to_thread.run_sync(_too_large_then_read, port, 8 * 1024 * 1024)
    assert received[:2] == b"\x88" + bytes([len(received) - 2])  # one close frame, unmasked
    assert struct.unpack("!H", received[2:4]) == (1009,)
