"""Fair share: what one asker token may hold of a host, so that no agent crowds out the others.

Each asker token has a pending cap (`uq token add|change NAME --max-pending N`: how many of its
requests may wait for people at once) and a rate (`--rate PER_SECOND[:BURST]`: a token bucket of
`BURST` asks that fills at `PER_SECOND`); a token that sets neither has the defaults below. Beyond
its cap a new ask is refused with `TOO_MANY_PENDING`, naming the cap; beyond its rate with
`RATE_LIMITED` and the seconds after which an ask would be taken (the hub counts both:
`hub/_admission.py`). Re-attaching to a request never counts, and the host-wide `MAX_PENDING`
applies last, so one token's load never refuses another's asks. People and admins may ask
too; they are trusted, and only the host-wide cap applies to them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.security import Identity
from user_questions.host.stores import Rate, Role

__all__ = [
    "DEFAULT",
    "DEFAULT_MAX_PENDING",
    "DEFAULT_RATE",
    "MAX_BURST",
    "MAX_PENDING",
    "MAX_RATE",
    "MIN_RATE",
    "Share",
    "parse_max_pending",
    "parse_rate",
    "rate_text",
    "share_of",
]

MAX_PENDING = 50_000
"""Pending requests on one host, of every asker; a new one beyond it is refused with
`TOO_MANY_PENDING` (after each token's own cap)."""
DEFAULT_MAX_PENDING = 1_000
"""An asker token's pending cap unless it sets its own: far more than people work through from
one agent, yet fifty agents could each fill theirs before the host-wide `MAX_PENDING` refuses
anyone."""
DEFAULT_RATE = Rate(per_second=10.0, burst=100)
"""An asker token's rate unless it sets its own: a burst of 100 asks (an agent fanning a batch
of questions out at once), then 10 a second, far beyond what people answer, while an agent
asking in a loop is held to it (and soon to its pending cap)."""
MAX_RATE = 100_000.0
"""The largest rate a token may be given, asks per second."""
MIN_RATE = 0.001
"""The smallest rate a token may be given, asks per second (one in about 17 minutes)."""
MAX_BURST = 1_000_000
"""The largest burst a token may be given."""
DEFAULT = "default"
"""Given for a token's pending cap or rate: back to the host's default."""
_RATE = re.compile(r"(?P<rate>[0-9]{1,9}(?:\.[0-9]{1,6})?)(?::(?P<burst>[0-9]{1,9}))?")


@dataclass(frozen=True, slots=True)
class Share:
    """What one asker token may hold of a host: at most `max_pending` requests waiting at once,
    asked no faster than `rate`."""

    asker: str
    """The token's name, which its requests' `asked_by` holds."""
    max_pending: int
    rate: Rate


def share_of(identity: Identity | None) -> Share | None:
    """The share of the asker behind `identity`, its defaults filled in; `None` for a person,
    an admin or an in-process asker, who are held only by the host-wide cap."""
    if identity is None or identity.role is not Role.ASKER:
        return None
    return Share(
        identity.name,
        identity.max_pending or DEFAULT_MAX_PENDING,
        identity.rate or DEFAULT_RATE,
    )


def parse_max_pending(given: str | int | None) -> int | None:
    """A token's pending cap as given (`--max-pending 200`, `"maxPending": 200`); `None` when
    not given (a change keeps the one it has), 0 for `default` (back to the host's default).

    Raises:
        UserQuestionError: `BAD_REQUEST` for anything but a whole number from 1 to
            `MAX_PENDING` or `default`.
    """
    if given is None:
        return None
    text = str(given).strip()
    if text == DEFAULT:
        return 0
    if not text.isdigit() or not 1 <= int(text) <= MAX_PENDING:
        raise UserQuestionError(
            f"invalid pending cap {given!r}: give a whole number from 1 to {MAX_PENDING:,} "
            f"(the host's own cap), or {DEFAULT}",
            ErrorCode.BAD_REQUEST,
        )
    return int(text)


def parse_rate(text: str | None) -> Rate | None:
    """A token's rate as given, `PER_SECOND[:BURST]` (`5`, `0.5:10`, `20:200`); `None` when not
    given, a rate of 0 for `default`. Without a burst, the bucket holds one second of asks (at
    least one).

    Raises:
        UserQuestionError: `BAD_REQUEST` for a rate not written so, or out of bounds.
    """
    if text is None:
        return None
    if text.strip() == DEFAULT:
        return Rate(0.0, 0)
    found = _RATE.fullmatch(text.strip())
    per_second = 0.0 if found is None else float(found["rate"])
    burst = 0 if found is None else max(1, math.ceil(per_second))
    if found is not None and found["burst"] is not None:
        burst = int(found["burst"])
    if not MIN_RATE <= per_second <= MAX_RATE or not 1 <= burst <= MAX_BURST:
        raise UserQuestionError(
            f"invalid rate {text!r}: write PER_SECOND[:BURST], such as 5, 0.5:10 or 20:200 "
            f"(asks a second from {MIN_RATE:g} to {MAX_RATE:,g}, a burst from 1 to {MAX_BURST:,}), "
            f"or {DEFAULT}",
            ErrorCode.BAD_REQUEST,
        )
    return Rate(per_second, burst)


def rate_text(rate: Rate) -> str:
    """`rate` written as `parse_rate` reads it (`10:100`)."""
    return f"{rate.per_second:.6f}".rstrip("0").rstrip(".") + f":{rate.burst}"
