"""`HandOver`: a WebSocket the ASGI app gives back to the server once accepted, served from then on
by the frames themselves, with no task waiting on it.

An ASGI app holds a task for as long as a WebSocket is open, and with it every layer's frame,
wrapper and scope: Starlette's, each middleware's, anyio's task group. A page is worth it; an
asker's socket is not: it sends one frame, then waits minutes with nothing to say, and a fleet of
agents holds thousands of them (about 20 KB each of layers that do nothing while it waits,
docs/performance.md). So the host's server (`endpoints.websocket.WebSocketProtocol`) offers, in
the scope's extensions under `HAND_OVER`, a `HandOver`: the app checks the handshake as for any
socket (the security and access-log middleware, the route), accepts it, calls `take(receiver)` and
returns. From then on the server gives each frame to `receiver.received` and the socket's end to
`receiver.closed`, and the receiver answers with `send_text` and ends it with `close`.

A server that offers none (Starlette's test client, another ASGI server) gets the app's ordinary
ASGI handling of the same protocol. The access log, which ends its record of a connection when
the app returns, asks `on_closed` to be told of the real end of a socket that was taken.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, MutableMapping
from typing import Any, Protocol

__all__ = ["HAND_OVER", "HandOver", "Receiver", "hand_over_of"]

HAND_OVER = "user_questions.hand_over"
"""The key of the scope's `extensions` under which the server offers a `HandOver`."""


class Receiver(Protocol):
    """What a taken socket's frames go to."""

    @property
    def backlog(self) -> int:
        """Frames given to `received` and not answered yet (the server stops reading the socket
        while there are a few)."""
        ...

    def received(self, data: str | bytes) -> None:
        """One frame from the peer (a text frame's text, a binary frame's bytes)."""

    def closed(self, code: int) -> None:
        """The socket ended with `code`, whichever side ended it; called once."""


class HandOver(Protocol):
    """A socket the app has accepted, which it may hand back to the server (`take`)."""

    @property
    def taken(self) -> bool:
        """Whether `take` was called: the server, not the app, serves the socket now."""
        ...

    def take(self, receiver: Receiver) -> None:
        """From now on give the socket's frames to `receiver`; the app then returns at once."""

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as a task, in the context the socket was taken in (its connection's log
        ids); the server waits for it when it shuts down."""

    def send_text(self, text: str) -> None:
        """Send one text frame now; nothing once the socket is closing."""

    async def drained(self) -> None:
        """Return once the socket's send buffer has room (at once unless the peer stopped
        reading)."""

    def read_on(self) -> None:
        """The receiver answered every frame it was given: read the socket again if a full
        `backlog` paused it."""

    def close(self, code: int, reason: str) -> None:
        """Send a close frame with `code` and `reason`, and end the socket."""

    def on_closed(self, callback: Callable[[int], None]) -> None:
        """Call `callback` with the close code once the socket has ended."""


def hand_over_of(scope: MutableMapping[str, Any]) -> HandOver | None:
    """The `HandOver` the server offers for this WebSocket's scope, or `None`."""
    offered: HandOver | None = scope.get("extensions", {}).get(HAND_OVER)
    return offered
