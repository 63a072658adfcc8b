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
`DRAIN_SECONDS` pass. The tests run it under a real uvicorn server, so a uvicorn that queues
frames differently fails them.
"""

from __future__ import annotations

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

__all__ = ["DRAIN_SECONDS", "READ_AHEAD", "WebSocketProtocol"]

READ_AHEAD = 4
"""Frames received and not yet taken by the app, at most, before the host stops reading."""
DRAIN_SECONDS = 5.0
"""How long a failed connection is read (and what it sends discarded) before it is closed."""


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's `websockets-sansio` protocol, pausing only when `READ_AHEAD` frames wait, and
    draining a connection it failed rather than resetting it."""

    draining = False
    """The connection failed: its close frame is sent and what the peer sends is discarded."""

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
