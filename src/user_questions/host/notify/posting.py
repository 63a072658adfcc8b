"""Posting to a receiver over HTTP, retried with backoff: what webhooks, Web Push and ntfy share.

`Poster` owns one httpx client (imported when it opens, so a host that posts nothing never pays its
import) and posts a body until the receiver takes it: any 2xx. A connection failure, a timeout,
408, 429 or a 5xx is tried again after a pause that doubles from `backoff` up to `backoff_max`
(each drawn between half of it and all of it, so retries from many requests spread out), up to
`tries` attempts in all. Any other answer (a 3xx, since redirects are not followed, or a 4xx) will
not change by itself and ends the posting at once; the caller reads the status from the outcome
(Web Push drops a subscription its push service answers 404 or 410).
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from user_questions._version import __version__

if TYPE_CHECKING:
    import httpx

__all__ = ["BACKOFF_FIRST", "BACKOFF_MAX", "Posted", "Poster"]

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
        self._client: httpx.AsyncClient | None = None

    async def __aenter__(self) -> Poster:
        import httpx

        self._client = httpx.AsyncClient(
            timeout=self.timeout,
            follow_redirects=False,
            headers={"user-agent": f"user-questions/{__version__}"},
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        client, self._client = self._client, None
        if client is not None:
            with anyio.CancelScope(shield=True):  # the host's cancellation must not leak it
                await client.aclose()

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Posted:
        """Post `body` to `url` until it is taken, a refusal is final, or the tries run out."""
        attempt = 1
        while True:
            status, failure, again = await self._attempt(url, body, headers)
            if not failure:
                return Posted(True, status, "", attempt)
            if not again or attempt >= self.tries:
                return Posted(False, status, failure, attempt)
            pause = min(self._backoff_max, self._backoff * 2 ** (attempt - 1))
            await anyio.sleep(pause * random.uniform(0.5, 1.0))
            attempt += 1

    async def _attempt(
        self, url: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int | None, str, bool]:
        """One attempt: the status, what failed (empty: taken) and whether to try again."""
        import httpx  # loaded by `__aenter__`

        if self._client is None:
            raise RuntimeError("a Poster posts only while open: use `async with`")
        try:
            response = await self._client.post(url, content=body, headers=headers)
        except httpx.TimeoutException:
            return None, f"no answer within {self.timeout:g} s", True
        except httpx.HTTPError as error:
            name = type(error).__name__
            return None, f"{name}: {error}" if str(error) else name, True
        status = response.status_code
        with contextlib.suppress(httpx.HTTPError):
            await response.aclose()
        if 200 <= status < 300:
            return status, "", False
        return status, f"HTTP {status}", status >= 500 or status in _RETRIED_STATUSES
