"""The Web Push subscriptions of each person, read from the store once and kept.

Every event a host pushes goes to the subscriptions of the people who may answer it; reading them
all from the store for each event made a busy host (a fleet of agents, a runaway one) read the
table thousands of times a minute. They are kept here by person: a person's entry is read again
when this host changes their subscriptions (a subscription added, removed, or dropped because its
push service no longer knows it), and every entry after `FRESH_SECONDS`, for the changes another
host sharing the store made.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from user_questions.host.stores import PushSubscription, Store

__all__ = ["FRESH_SECONDS", "PushSubscribers"]

FRESH_SECONDS = 30.0
"""How long the subscriptions read are trusted for what other hosts may have changed."""


class PushSubscribers:
    """The subscriptions of each person, over `store` (`clock`: seconds, monotonic)."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._clock = clock
        self._people: dict[str, list[PushSubscription]] | None = None
        self._read_at = 0.0

    async def everyone(self) -> dict[str, list[PushSubscription]]:
        """Each person's subscriptions (people without any absent). Raises `UserQuestionError`
        as the store does when it has to be read."""
        if self._people is None or self._clock() - self._read_at > FRESH_SECONDS:
            read_at = self._clock()
            people: dict[str, list[PushSubscription]] = {}
            for subscription in await self._store.push_subscriptions():
                people.setdefault(subscription.person, []).append(subscription)
            self._people, self._read_at = people, read_at
        return self._people

    def nobody(self) -> bool:
        """Whether nobody had a subscription at the last read, still fresh: an event need not
        even be queued (a host most of whose people use no Web Push, or none)."""
        fresh = self._clock() - self._read_at <= FRESH_SECONDS
        return self._people is not None and not self._people and fresh

    async def changed(self, person: str) -> None:
        """Read `person`'s subscriptions again: this host has just changed them."""
        if self._people is None:
            return  # read whole at the next push
        theirs = await self._store.push_subscriptions(person)
        if theirs:
            self._people[person] = theirs
        else:
            self._people.pop(person, None)
