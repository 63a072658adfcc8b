"""Helpers for the notification tests: a hub with notifiers, and a webhook receiver on loopback.

The receiver is a tiny HTTP/1.1 server on anyio. It records every request it gets (headers and
exact body bytes) and answers each with the status its `answer` function gives for that
request's number (1, 2, ...), or never answers (`HANG`), as a slow receiver would. Tests wait
for deliveries with `wait_for(count)` under a deadline.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.lowlevel
from anyio.abc import SocketStream

from tests.receivers import Request
from user_questions.host.hub import Hub
from user_questions.host.notify.notifier import Notifier, notifying
from user_questions.host.stores.sqlite import SQLiteStore

HANG = -1
"""An answer that never comes: the receiver holds the connection open."""
MAX_REQUEST_BYTES = 4 * 1024 * 1024


@dataclass
class Receiver:
    """Records deliveries and answers each with `answer(number)` (a status, or `HANG`)."""

    answer: Callable[[int], int] = lambda number: 200
    url: str = ""
    deliveries: list[Request] = field(default_factory=list)
    _arrived: anyio.Event = field(default_factory=anyio.Event)
    _stop: anyio.Event = field(default_factory=anyio.Event)

    def cut(self) -> None:
        """Stop listening and drop every open connection, as a receiver that goes away does."""
        self._stop.set()

    async def wait_for(self, count: int, seconds: float = 10.0) -> list[Request]:
        """The first `count` deliveries, once they have arrived."""
        with anyio.fail_after(seconds):
            while len(self.deliveries) < count:
                await self._arrived.wait()
                self._arrived = anyio.Event()
        return self.deliveries[:count]

    async def _serve(self, stream: SocketStream) -> None:
        async with stream:
            delivery = await _read_request(stream)
            if delivery is None:
                return
            self.deliveries.append(delivery)
            self._arrived.set()
            status = self.answer(len(self.deliveries))
            if status == HANG:
                await anyio.sleep_forever()
            head = f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            await stream.send(head.encode())


@asynccontextmanager
async def receiving(answer: Callable[[int], int] = lambda number: 200) -> AsyncIterator[Receiver]:
    """A receiver listening on a free loopback port until the block ends or it is `cut()`."""
    receiver = Receiver(answer)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    receiver.url = f"http://127.0.0.1:{port}/hooks/secret-path"

    async def serve_until_cut() -> None:
        async with anyio.create_task_group() as serving:
            serving.start_soon(listener.serve, receiver._serve)
            await receiver._stop.wait()
            serving.cancel_scope.cancel()
        await listener.aclose()  # refused from now on, as a receiver that is down

    async with anyio.create_task_group() as group:
        group.start_soon(serve_until_cut)
        try:
            yield receiver
        finally:
            receiver.cut()


def dead_url() -> str:
    """A loopback URL where nothing listens: connections are refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


async def _read_request(stream: SocketStream) -> Request | None:
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            data += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return None
        if len(data) > MAX_REQUEST_BYTES:
            return None
    head, _, body = data.partition(b"\r\n\r\n")
    request_line, *lines = head.decode("latin-1").split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        body += await stream.receive()
    return Request(method, path, headers, body)


@asynccontextmanager
async def notifying_hub(folder: Path, *notifiers: Notifier) -> AsyncIterator[Hub]:
    """A hub over a SQLite store in `folder`, with `notifiers` hearing its events, as a host runs
    them (`notifying`); the notifiers flush when the block ends."""
    async with (
        SQLiteStore(folder / "host.db") as store,
        Hub(store) as hub,
        anyio.create_task_group() as group,
    ):
        group.start_soon(notifying(notifiers), hub)
        await anyio.lowlevel.checkpoint()  # the task registers its listener, as in a host
        yield hub
        group.cancel_scope.cancel()
