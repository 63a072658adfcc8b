"""The page fan-out: the pages following a hub, and each frame sent to those it concerns.

A page gets the pending requests' frames when it connects (`PageSubscription.snapshot`), then
every later frame about a request it sees, queued without waiting: one that falls
`MAX_CLIENT_BACKLOG` frames behind is dropped (it reconnects and gets every pending request
replayed), so a slow page never holds up the hub or another page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from user_questions.host.stores import StoredQuestion

__all__ = ["MAX_CLIENT_BACKLOG", "PageSubscription", "Pages", "Sees"]

logger = logging.getLogger("user_questions.host")

MAX_CLIENT_BACKLOG = 100_000
"""Frames queued for one page; a page that falls further behind is disconnected (it reconnects
and gets every pending request replayed)."""

Sees = Callable[[StoredQuestion], bool]
"""Whether a page (or a client of the HTTP API) may see a request (`host/gate/roles.py`);
`None` where one is expected: it sees every request."""


@dataclass(eq=False, slots=True)
class PageSubscription:
    """What a page gets on connect: the pending requests' frames, then every later frame.

    `frames` ends when the hub drops the page (too far behind) or stops.
    """

    snapshot: list[str]
    frames: MemoryObjectReceiveStream[str]
    _send: MemoryObjectSendStream[str]
    _leave: Callable[[PageSubscription], None]
    """Tells the hub to stop sending to this page."""
    _sees: Sees | None
    """Which requests' frames this page gets; `None`: all of them."""

    def close(self) -> None:
        """Stop following; idempotent."""
        self._leave(self)
        self._send.close()
        self.frames.close()

    def wants(self, record: StoredQuestion, seen: StoredQuestion | None) -> bool:
        """Whether a frame about `record` is for this page: it sees the request, and did not
        see `seen` (the record before an escalation widened its audience: a page that saw it
        has the request already; an admin's page sees every request)."""
        if self._sees is None:
            return seen is None
        return self._sees(record) and (seen is None or not self._sees(seen))

    def offer(self, frame: str) -> bool:
        """Queue `frame` for the page; `False` when the page is gone, or has just fallen too
        far behind (it then reads what is queued, and its stream ends)."""
        try:
            self._send.send_nowait(frame)
        except anyio.WouldBlock:
            logger.warning("a page fell %d frames behind; disconnecting it", MAX_CLIENT_BACKLOG)
            self._send.close()
            return False
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True


class Pages:
    """The pages following a hub."""

    def __init__(self) -> None:
        self._following: set[PageSubscription] = set()

    def __bool__(self) -> bool:
        return bool(self._following)

    def follow(self, snapshot: list[str], sees: Sees | None) -> PageSubscription:
        """A page that has `snapshot` and is sent every later frame about what `sees` accepts."""
        send, receive = anyio.create_memory_object_stream[str](MAX_CLIENT_BACKLOG)
        page = PageSubscription(snapshot, receive, send, self._following.discard, sees)
        self._following.add(page)
        return page

    def broadcast(
        self, frame: str, record: StoredQuestion, *, seen: StoredQuestion | None = None
    ) -> None:
        """Send `frame` to every page that sees `record`, except those that saw `seen`."""
        for page in tuple(self._following):
            if page.wants(record, seen) and not page.offer(frame):
                self._following.discard(page)

    def close(self) -> None:
        """Drop every page (the hub stops): their streams end."""
        for page in tuple(self._following):
            page.close()
