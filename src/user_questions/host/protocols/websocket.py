"""`WebSocketProtocol`: uvicorn's WebSocket protocol, reading up to `READ_AHEAD` frames ahead.

uvicorn's sans-I/O protocol stops reading the socket after every frame it receives and starts again
once the app has taken it: two `epoll_ctl` calls and the selector's bookkeeping per frame, about 7%
of a host's CPU per answered request (`benchmarks/host_roundtrip.py`), though a page or an asker
sends one frame and then waits for its reply. This subclass lets up to `READ_AHEAD` frames wait for
the app before it stops reading, so a connection that sends a frame at a time never pauses, and one
that sends faster than the host answers is still held to a few frames in memory: `READ_AHEAD`, plus
any that arrived in the same read of the socket (uvicorn queues every frame of a read, as before);
the kernel's socket buffer holds the rest, and the peer's sends then wait.

It changes when reading pauses and nothing else: uvicorn still starts reading again once the
app has taken every waiting frame. The tests run it under a real uvicorn server, so a uvicorn
that queues frames differently fails them.
"""

from __future__ import annotations

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

__all__ = ["READ_AHEAD", "WebSocketProtocol"]

READ_AHEAD = 4
"""Frames received and not yet taken by the app, at most, before the host stops reading."""


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's `websockets-sansio` protocol, pausing only when `READ_AHEAD` frames wait."""

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
