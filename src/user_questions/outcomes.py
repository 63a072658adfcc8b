"""How a request to a host ends, and the surface it ended through: one name for each, everywhere.

It imports nothing from the package, so frames, a page's tests, another process or another
language's binding can use the names alone. Every surface of a host uses these values: the store's
`state` column, the page's `question/resolved` frame (its `settled` field), the asker's
`ask/settled` frame, history entries, host events, `uq` output and the docs. docs/protocol.md has
the one table of how each surface names each ending, including the two vocabularies that are not
ours and keep their own words (the page frame's seam-compatible `outcome`, and the service's
`user-questions/resolved` event).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

__all__ = [
    "CLAIMABLE_SURFACES",
    "Outcome",
    "RequestState",
    "ResolvedOutcome",
    "Surface",
    "claimed_surface",
    "resolved_outcome",
]


class Outcome(StrEnum):
    """How a request ended."""

    ANSWERED = "answered"
    """A person answered; the asker gets the answer."""
    DISMISSED = "dismissed"
    """A person dismissed it; the asker gets `ASK_CANCELLED`."""
    WITHDRAWN = "withdrawn"
    """Its asker gave up (an abort, a cancellation, the host unreachable too long)."""
    TIMED_OUT = "timed-out"
    """Its asker's own timeout ran out; the asker gets `ASK_TIMED_OUT`."""


class RequestState(StrEnum):
    """Where a request is: `pending`, or ended with one of the outcomes (same values)."""

    PENDING = "pending"
    ANSWERED = Outcome.ANSWERED.value
    DISMISSED = Outcome.DISMISSED.value
    WITHDRAWN = Outcome.WITHDRAWN.value
    TIMED_OUT = Outcome.TIMED_OUT.value

    @property
    def outcome(self) -> Outcome | None:
        """The outcome this state is, `None` while pending."""
        return None if self is RequestState.PENDING else Outcome(self.value)


ResolvedOutcome = Literal["answered", "cancelled"]
"""The `outcome` of the page's `question/resolved` frame, kept as the seam's frames have it:
`cancelled` stands for every ending but an answer. The exact outcome travels beside it."""


def resolved_outcome(outcome: Outcome) -> ResolvedOutcome:
    """The seam-compatible `question/resolved` outcome of `outcome`."""
    return "answered" if outcome == Outcome.ANSWERED else "cancelled"


class Surface(StrEnum):
    """The surface a request was settled through (`via` in the records, history and events)."""

    WEB = "web"
    """A page's WebSocket (`/ws`)."""
    TERMINAL = "terminal"
    """`uq answer`: `POST /api/respond` with `X-UQ-Surface: terminal`."""
    EDITOR = "editor"
    """An editor that answered first, as recorded by a proxy in front of it (an ACP proxy):
    `POST /api/respond` with `X-UQ-Surface: editor`."""
    LINK = "link"
    """A one-tap answer link."""
    API = "api"
    """`POST /api/respond` from any other client."""
    ASKER = "asker"
    """The asker's `withdraw` frame (`/ws/ask`)."""
    HOST = "host"
    """An asker in the host's own process giving up."""
    RULE = "rule"
    """A rule a person made earlier (`by` is `rule:<id>`), before anyone saw the request."""
    TELEGRAM = "telegram"
    """A paired person's tap or reply in Telegram (`host/chat`)."""
    SLACK = "slack"
    """A paired person's click or reply in Slack (`host/chat`)."""
    PUSH = "push"
    """A tap on a button of a Web Push notification, answered by the installed inbox's service
    worker as the person whose subscription it is (`host/notify/web_push.py`)."""


CLAIMABLE_SURFACES = frozenset({Surface.TERMINAL, Surface.EDITOR})
"""The surfaces an HTTP client may name itself with the `X-UQ-Surface` header."""


def claimed_surface(header: str | None) -> Surface:
    """The surface an `X-UQ-Surface` header value claims: one of `CLAIMABLE_SURFACES`, else
    `api` (a client cannot pass itself off as the web page, an asker or the host)."""
    claimed = (header or "").strip().lower()
    for surface in CLAIMABLE_SURFACES:
        if claimed == surface.value:
            return surface
    return Surface.API
