"""Posting to a receiver over HTTP, retried with backoff: what webhooks, Web Push, ntfy and A2A
pushes share.

`Poster` owns one httpx client (imported and opened with the first post, so a host that posts
nothing never pays its import: about 5 MB of memory with what it brings) and posts a body until the
receiver takes it: any 2xx. A connection failure, a timeout, 408, 429 or a 5xx is tried again after
a pause that doubles from `backoff` up to `backoff_max` (each drawn between half of it and all of
it, so retries from many requests spread out), up to `tries` attempts in all. Any other answer (a
3xx, since redirects are not followed, or a 4xx) will not change by itself and ends the posting at
once; the caller reads the status from the outcome (Web Push drops a subscription its push service
answers 404 or 410). `post_once` and `backoff_pause` are the same attempt and pause for a sender
with a client and a loop of its own (A2A's pushes, which check the URL again before each attempt).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from user_questions._version import __version__

if TYPE_CHECKING:
    import httpx

__all__ = ["BACKOFF_FIRST", "BACKOFF_MAX", "Posted", "Poster", "backoff_pause", "post_once"]

BACKOFF_FIRST = 1.0
"""Seconds before the second attempt; doubled before each later one (with jitter)."""
BACKOFF_MAX = 60.0
"""The longest pause between two attempts."""

_RETRIED_STATUSES = frozenset({408, 429})


@dataclass(frozen=True, slots=True)
class Posted:
    """How a posting ended: taken (a 2xx), or given up on after `attempts`."""

    ok: bool
    status: int | None
    """The last answer's HTTP status; `None` when none came (no connection, no answer)."""
    failure: str
    """What went wrong, for a log line (empty when taken)."""
    attempts: int


class Poster:
    """Posts bodies with retries; open it with `async with` (its client lives that long).

    Args:
        tries: Attempts per body, the first included.
        backoff: Seconds before the second attempt, doubled for each later one, at most
            `backoff_max`.
        timeout: Seconds one attempt may take (connect, send, answer).
    """

    def __init__(
        self,
        *,
        tries: int,
        timeout: float,
        backoff: float = BACKOFF_FIRST,
        backoff_max: float = BACKOFF_MAX,
    ) -> None:
        self.tries = max(1, tries)
        self.timeout = timeout
        self._backoff = backoff
        self._backoff_max = backoff_max
        self._open = False
        self._client: httpx.AsyncClient | None = None
        """Made by the first post while open."""

    async def __aenter__(self) -> Poster:
        self._open = True
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._open = False
        client, self._client = self._client, None
        if client is not None:
            with anyio.CancelScope(shield=True):  # the host's cancellation must not leak it
                await client.aclose()

    def _opened_client(self) -> httpx.AsyncClient:
        if not self._open:
            raise RuntimeError("a Poster posts only while open: use `async with`")
        if self._client is None:
            import httpx  # here, not at start: most hosts never post (see the module's docstring)

            self._client = httpx.AsyncClient(
                timeout=self.timeout,
                follow_redirects=False,
                headers={"user-agent": f"user-questions/{__version__}"},
            )
        return self._client

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Posted:
        """Post `body` to `url` until it is taken, a refusal is final, or the tries run out."""
        client = self._opened_client()
        attempt = 1
        while True:
            status, failure, again = await _attempt(client, url, body, headers, self.timeout)
            if not failure:
                return Posted(True, status, "", attempt)
            if not again or attempt >= self.tries:
                return Posted(False, status, failure, attempt)
            await anyio.sleep(backoff_pause(attempt, self._backoff, self._backoff_max))
            attempt += 1


async def post_once(
    client: httpx.AsyncClient, url: str, body: bytes, headers: Mapping[str, str], limit: float
) -> tuple[str, bool] | None:
    """One POST of a delivery: `None` when a 2xx took it, else what failed and whether trying
    again may help (a connection failure, no answer within `client`'s timeout, `limit` seconds;
    408, 429, a 5xx; not a 3xx, since redirects are not followed, nor another 4xx)."""
    _, failure, again = await _attempt(client, url, body, headers, limit)
    return (failure, again) if failure else None


def backoff_pause(attempt: int, first: float, most: float) -> float:
    """Seconds to wait after attempt `attempt` failed: `first`, doubled after each later one, at
    most `most`, drawn between half of it and all of it (jitter)."""
    return min(most, first * 2.0 ** (attempt - 1)) * random.uniform(0.5, 1.0)


async def _attempt(
    client: httpx.AsyncClient, url: str, body: bytes, headers: Mapping[str, str], limit: float
) -> tuple[int | None, str, bool]:
    """One attempt: the status, what failed (empty: taken) and whether to try again."""
    import httpx  # loaded by whoever made `client`

    try:
        response = await client.post(url, content=body, headers=headers)
    except httpx.TimeoutException:
        return None, f"no answer within {limit:g} s", True
    except httpx.HTTPError as error:
        name = type(error).__name__
        return None, f"{name}: {error}" if str(error) else name, True
    status = response.status_code
    with contextlib.suppress(httpx.HTTPError):
        await response.aclose()
    if 200 <= status < 300:
        return status, "", False
    return status, f"HTTP {status}", status >= 500 or status in _RETRIED_STATUSES
