"""Admission: whether a new ask of an asker token is taken, by its fair share (`gate/fair_share`).

Its pending requests are counted from the hub's cache (`Requests.held_by`), which holds every
pending request of the store: read at start (so a restart counts what was pending), and, on
PostgreSQL, kept up to date with what other nodes store as each one reports it. Counting there
costs no store read per ask; its bound under races is in docs/host.md ("Fair share"). Asks being
stored right now count too (`asking`), so that on one host a token never holds more than its cap,
however many of its asks arrive at once. Its rate is a token bucket per host, on the hub's clock.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.fair_share import Share, rate_text
from user_questions.host.hub._timetable import Clock
from user_questions.host.stores import Rate

__all__ = ["Admission"]


@dataclass(slots=True)
class _Bucket:
    """A token bucket: holds up to `rate.burst` asks, fills at `rate.per_second`."""

    rate: Rate
    level: float
    at: datetime

    def fill(self, now: datetime, rate: Rate) -> None:
        """Bring the level up to `now` (a clock that went back adds nothing), under `rate` (the
        token's, which may have changed since)."""
        elapsed = max((now - self.at).total_seconds(), 0.0)
        self.level = min(float(rate.burst), self.level + elapsed * self.rate.per_second)
        self.rate, self.at = rate, now

    def wait(self) -> float:
        """Seconds until the bucket holds an ask; 0 when it does now."""
        return 0.0 if self.level >= 1.0 else (1.0 - self.level) / self.rate.per_second


class Admission:
    """The fair share of each asker token on one hub: its pending requests (`held`, from the
    cache, and the asks being stored) and its bucket."""

    def __init__(self, clock: Clock, held: Callable[[str], int]) -> None:
        self._clock = clock
        self._held = held
        self._asking: Counter[str] = Counter()
        """New asks of each asker being stored now, not yet in the cache."""
        self._buckets: dict[str, _Bucket] = {}
        """Each asker's bucket, by token name: one per asker token that asked on this host."""

    def refusal(self, share: Share | None) -> UserQuestionError | None:
        """Why a new ask of the asker with `share` is refused now (`TOO_MANY_PENDING` naming its
        cap, `RATE_LIMITED` with the seconds to wait), or `None`: it may be asked."""
        if share is None:
            return None
        held = self._held(share.asker) + self._asking[share.asker]
        if held >= share.max_pending:
            return UserQuestionError(
                f"the token {share.asker} already has {held} pending requests, its cap of "
                f"{share.max_pending} (uq token change {share.asker} --max-pending N); wait "
                "for answers, or withdraw some first",
                ErrorCode.TOO_MANY_PENDING,
            )
        wait = self._bucket(share).wait()
        if wait > 0:
            retry_after = math.ceil(wait * 1000) / 1000  # rounded up to the millisecond
            return UserQuestionError(
                f"the token {share.asker} asks faster than its rate of {rate_text(share.rate)} "
                f"(PER_SECOND:BURST); ask again in {retry_after:g} s",
                ErrorCode.RATE_LIMITED,
                retry_after=retry_after,
            )
        return None

    @contextlib.contextmanager
    def asking(self, share: Share | None) -> Iterator[None]:
        """Hold a place for a new ask while it is stored: it takes one ask from the bucket, and
        counts as pending until the cache has it (the caller applies it before leaving)."""
        if share is None:
            yield
            return
        self._bucket(share).level -= 1.0
        self._asking[share.asker] += 1
        try:
            yield
        finally:
            self._asking[share.asker] -= 1
            if not self._asking[share.asker]:
                del self._asking[share.asker]

    def _bucket(self, share: Share) -> _Bucket:
        """The asker's bucket, filled up to now (a new one is full)."""
        now = self._clock.now()
        bucket = self._buckets.get(share.asker)
        if bucket is None:
            bucket = self._buckets[share.asker] = _Bucket(share.rate, float(share.rate.burst), now)
        bucket.fill(now, share.rate)
        return bucket
