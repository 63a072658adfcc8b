"""`WebSocketProtocol`: uvicorn's WebSocket protocol, reading up to `READ_AHEAD` frames ahead.

uvicorn's sans-I/O protocol stops reading the socket after every frame it receives and starts again
once the app has taken it: two `epoll_ctl` calls and the selector's bookkeeping per frame, about 7%
of a host's CPU per answered request (`benchmarks/host_roundtrip.py`), though a page or an asker
sends one frame and then waits for its reply. This subclass lets up to `READ_AHEAD` frames wait for
the app before it stops reading, so a connection that sends a frame at a time never pauses, and one
that sends faster than the host answers is still held to a few frames in memory: `READ_AHEAD`, plus
any that arrived in the same read of the socket (uvicorn queues every frame of a read, as before);
the kernel's socket buffer holds the rest, and the peer's sends then wait.

It changes when reading pauses, and one thing more: a frame over the size limit (or otherwise
unreadable) fails the connection with its close code (1009 for a frame too large), and uvicorn
then closes the socket at once, with the rest of the peer's frame unread in the kernel's buffer:
the kernel answers that with a reset, which can reach the peer before the close frame it has not
read yet, so the peer, still sending, sees a dropped connection instead of 1009. This subclass
sends the close frame, ends its side of the stream (as the WebSocket protocol has a server do when
it fails a connection), and reads and discards what the peer still sends until the peer closes or
`DRAIN_SECONDS` pass.

It also offers every WebSocket's app a `HandOver` (`host/_hand_over.py`): an app that takes it
(the asker protocol) returns once it has accepted the socket, and the frames then go to its
receiver straight from `data_received`, through the same paths uvicorn's queue takes them (a close,
a failed frame, the server's shutdown, the peer's end all reach `receiver.closed`); the scope and
the handshake's request and response are dropped, and reading pauses while `READ_AHEAD` frames
wait for the receiver as it does for an app. The tests run it under a real uvicorn server, so a
uvicorn that queues frames differently fails them.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Coroutine
from typing import Any

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.http11 import Request
from websockets.protocol import Protocol

from user_questions.host._hand_over import HAND_OVER, HandOver, Receiver

__all__ = ["DRAIN_SECONDS", "READ_AHEAD", "WebSocketProtocol"]

READ_AHEAD = 4
"""Frames received and not yet taken by the app, at most, before the host stops reading."""
DRAIN_SECONDS = 5.0
"""How long a failed connection is read (and what it sends discarded) before it is closed."""


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's `websockets-sansio` protocol, pausing only when `READ_AHEAD` frames wait,
    draining a connection it failed rather than resetting it, and serving a socket its app
    handed over (`HandOver`)."""

    draining = False
    """The connection failed: its close frame is sent and what the peer sends is discarded."""
    receiver: Receiver | None = None
    """Where the frames of a socket the app handed over go."""
    _closed_callbacks: list[Callable[[int], None]] | None = None
    _context: contextvars.Context

    def handshake(self, request: Request) -> None:
        """Answer the upgrade `request` the HTTP protocol parsed (`endpoints.upgrade`) as
        `data_received` answers its bytes once websockets has parsed them: from here on
        websockets' parser reads frames, as its own does after a request."""
        conn = self.conn
        if conn.debug:
            conn.logger.debug("< GET %s HTTP/1.1", request.path)
            for name, value in request.headers.raw_items():
                conn.logger.debug("< %s: %s", name, value)
        conn.parser = Protocol.parse(conn)
        next(conn.parser)
        self.handle_connect(request)

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        if self.handshake_initiated and not self.handshake_complete:  # the app is about to run
            extensions: dict[str, object] = self.scope["extensions"]  # type: ignore[assignment]
            offer: HandOver = self  # checked: this protocol is what a `HandOver` promises
            extensions[HAND_OVER] = offer

    @property
    def taken(self) -> bool:
        return self.receiver is not None

    def take(self, receiver: Receiver) -> None:
        assert self.handshake_complete, "only an accepted socket can be taken"
        assert self.receiver is None, "a socket is taken once"
        waiting, self.queue = self.queue, _Forward(receiver, self)  # type: ignore[assignment]
        self.receiver = receiver
        self._context = contextvars.copy_context()
        while not waiting.empty():  # frames that came between the accept and now
            self.queue.put_nowait(waiting.get_nowait())

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = self.loop.create_task(work, context=self._context)
        task.add_done_callback(self.on_task_complete)
        self.tasks.add(task)

    def send_text(self, text: str) -> None:
        if self.close_sent or self.transport.is_closing():
            return  # the peer left or is leaving: nobody reads it
        self.conn.send_text(text.encode())
        self.transport.write(b"".join(self.conn.data_to_send()))

    async def drained(self) -> None:
        await self.writable.wait()  # uvicorn's: set while the transport's buffer has room

    def read_on(self) -> None:
        if self.read_paused and not self.draining:
            self.read_paused = False
            self.transport.resume_reading()

    def close(self, code: int, reason: str) -> None:
        if self.close_sent or self.transport.is_closing():
            return
        self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
        self.conn.send_close(code, reason)
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        self.read_on()  # read until the peer's close reply arrives
        self.close_timer = self.loop.call_later(self.close_timeout, self.transport.close)

    def on_closed(self, callback: Callable[[int], None]) -> None:
        if self._closed_callbacks is None:
            self._closed_callbacks = []
        self._closed_callbacks.append(callback)

    def ended(self, code: int) -> None:
        """The socket a receiver took ended with `code` (told by `_Forward`, once)."""
        callbacks, self._closed_callbacks = self._closed_callbacks or [], None
        for callback in callbacks:
            self._context.run(callback, code)  # the connection's log ids

    async def run_asgi(self) -> None:
        # uvicorn's, but a socket the app handed over stays open when the app returns, and
        # what only the app needed (the scope, the handshake) is let go.
        try:
            result = await self.app(self.scope, self.receive, self.send)
        except ClientDisconnected:
            pass
        except BaseException:
            self.logger.exception("Exception in ASGI application\n")
            self.send_500_response()
        else:
            if not self.handshake_complete:
                self.logger.error("ASGI callable returned without completing handshake.")
                self.send_500_response()
            elif result is not None:
                self.logger.error("ASGI callable should return None, but returned '%s'.", result)
            elif self.receiver is not None:
                for name in ("scope", "request", "response"):
                    self.__dict__.pop(name, None)
                return
        if self.close_timer is None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self.draining:
            self.conn.receive_data(data)  # a failed parser discards it
            return
        super().data_received(data)

    def handle_parser_exception(self) -> None:
        close = self.conn.close_sent
        assert close is not None
        self.queue.put_nowait(
            {"type": "websocket.disconnect", "code": close.code, "reason": close.reason}
        )
        self.close_sent = self.draining = True
        for chunk in self.conn.data_to_send():
            if chunk:
                self.transport.write(chunk)
            elif self.transport.can_write_eof():  # b"": the protocol ends the server's side
                self.transport.write_eof()
        if self.read_paused:
            self.read_paused = False
            self.transport.resume_reading()
        # The peer's end of the stream closes the transport (uvicorn's `eof_received`).
        self.close_timer = self.loop.call_later(DRAIN_SECONDS, self.transport.close)

    def send_receive_event_to_app(self) -> None:
        # uvicorn pauses reading after queueing each frame unless it believes reading paused
        # already: it is told so while it queues, and the queue's length decides here.
        paused, self.read_paused = self.read_paused, True
        try:
            super().send_receive_event_to_app()
        finally:
            self.read_paused = paused
        if not paused and self.queue.qsize() >= READ_AHEAD:
            self.read_paused = True
            self.transport.pause_reading()


class _Forward:
    """Stands for uvicorn's receive queue once a receiver took the socket: what uvicorn would
    queue for the app (a frame, the end) goes to the receiver at once."""

    def __init__(self, receiver: Receiver, protocol: WebSocketProtocol) -> None:
        self._receiver = receiver
        self._protocol = protocol
        self._ended = False

    def put_nowait(self, message: dict[str, Any]) -> None:
        if self._ended:
            return
        if message["type"] == "websocket.receive":
            text = message.get("text")
            self._receiver.received(text if text is not None else message["bytes"])
            return
        self._ended = True  # websocket.disconnect
        code = int(message.get("code", 1005))
        self._receiver.closed(code)
        self._protocol.ended(code)

    def qsize(self) -> int:
        return self._receiver.backlog

    def empty(self) -> bool:
        return self._receiver.backlog == 0
