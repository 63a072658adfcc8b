"""What a notifier a person reads is told: one notification per card, and a digest of a flood.

A runaway agent asking the same thing 3,000 times, or a fleet asking a hundred things at once,
must not ring a phone 3,000 times. For the notifiers people read (apprise, ntfy, each person's
own), `Telling` passes on:

- a new request only when it is a card of its own (`Hub.shown_apart`): the identical requests
  its card stands for are never told apart, nor is their settlement;
- of the cards that arrive within `DIGEST_WINDOW` seconds, the first `DIGEST_FIRST` one by one,
  and the rest as one `questions/waiting` event ("N more questions are waiting") when the window
  ends; their settlements are not told either (the person was never told of them one by one).

Webhooks and commands (programs) keep every event: they never go through a `Telling`.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from user_questions.host.hub import Hub, OnePerCard
from user_questions.host.notify.events import HostEvent, digest_of, event_of
from user_questions.host.stores import StoredQuestion

__all__ = ["DIGEST_FIRST", "DIGEST_WINDOW", "Telling"]

DIGEST_FIRST = 5
"""New cards told one by one within a window; the others wait for its digest."""
DIGEST_WINDOW = 10.0
"""Seconds from the first card told until the digest of the ones held back goes out."""


class Telling:
    """Tells a notifier (its `notify`) what a person should hear of `hub`'s requests; `run()`
    sends the digests, for as long as the notifier runs."""

    def __init__(
        self,
        notify: Callable[[HostEvent], None],
        hub: Hub,
        *,
        first: int = DIGEST_FIRST,
        window: float = DIGEST_WINDOW,
    ) -> None:
        self._notify = notify
        self._cards = OnePerCard(hub.shown_apart)
        self._first = first
        self._window = window
        self._window_ends: float | None = None
        self._told = 0
        """Cards told one by one in the current window."""
        self._held: list[StoredQuestion] = []
        """Cards held back for the current window's digest."""
        self._opened = anyio.Event()

    def tell(self, record: StoredQuestion, event: HostEvent | None = None) -> None:
        """Pass on what the person should hear of `record` (its `event`, when made already)."""
        if not self._cards.wanted(record):
            return
        if not record.pending:
            self._notify(event or event_of(record))
            return
        now = anyio.current_time()
        if self._window_ends is None or now >= self._window_ends:
            self._window_ends, self._told = now + self._window, 0
            self._opened.set()
        if self._told < self._first:
            self._told += 1
            self._notify(event or event_of(record))
            return
        self._held.append(record)
        self._cards.pass_over(record)

    async def run(self) -> None:
        """Send each window's digest when it ends, until cancelled."""
        while True:
            await self._opened.wait()
            self._opened = anyio.Event()
            ends = self._window_ends
            assert ends is not None
            await anyio.sleep(max(0.0, ends - anyio.current_time()))
            held, self._held = self._held, []
            still = [record for record in held if self._cards.passed_over(record.rpc_id)]
            if still:  # those settled meanwhile need no telling
                self._notify(digest_of(still[-1], len(still)))
