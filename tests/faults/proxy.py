"""A TCP proxy on loopback in front of the test's PostgreSQL (which listens on a Unix socket only):
what lets a test cut one node off its database while the other still reaches it, or slow it down.

`partition()` stops every byte in both directions, on the connections open and on new ones, and
closes nothing, as a network that drops packets does; `heal()` lets them through again (what
TCP's retransmissions would deliver). `delay` holds each chunk that long before passing it on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path


class Proxy:
    """Forwards 127.0.0.1:`port` to the Unix socket `target`."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.port = 0
        self.delay = 0.0
        self._open = asyncio.Event()
        self._open.set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: list[asyncio.StreamWriter] = []

    def partition(self) -> None:
        self._open.clear()

    def heal(self) -> None:
        self._open.set()

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[Proxy]:
        server = await asyncio.start_server(self._connected, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:
            server.close()
            for writer in self._writers:
                writer.close()
            for task in tuple(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(str(self.target))
        except OSError:  # the database is down: so is the connection through the proxy
            writer.close()
            return
        self._writers += [writer, up_writer]
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pump(source, sink))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await source.read(65536):
                await self._open.wait()
                if self.delay:
                    await asyncio.sleep(self.delay)
                sink.write(data)
                await sink.drain()
        sink.close()
