"""`WebhookNotifier`: POST each host event as JSON to a URL, signed, retried, never blocking.

httpx is imported when a notifier starts (so `uq serve` without webhooks never pays its import, a
tenth of a second; `notify/posting.py` posts and retries). The body is the event's JSON
(`host/notify/events.py`); `X-UQ-Signature:
sha256=<hex>` is the HMAC-SHA256 of the exact body bytes under the host's notify secret, so a
receiver can tell the host's deliveries from anyone else's (docs/notify.md has a receiver's check in
Python). A delivery is a success on any 2xx answer. A connection failure, a timeout, 408, 429 or a
5xx is retried with exponential backoff and jitter, up to `tries` attempts in all; any other answer
(a 3xx, since redirects are not followed, or a 4xx) will not change by itself and ends the delivery
at once. Either way a dropped event gets one log line that names the receiver by its origin only,
since webhook paths often hold a secret of their own.

The secret comes from `--notify-secret` / `UQ_NOTIFY_SECRET` (then kept in the store), else the
store's, else a new random one, kept in the store (`webhook_secret`), so a restarted host signs
with the same secret and `uq serve --print-notify-secret` can show it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
from urllib.parse import urlsplit

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.tokens import new_token
from user_questions.host.notify.events import HostEvent
from user_questions.host.notify.notifier import QUEUE_CAPACITY, Notifier
from user_questions.host.notify.posting import BACKOFF_FIRST, BACKOFF_MAX, Poster
from user_questions.host.stores import Store

__all__ = [
    "DELIVERY_HEADER",
    "EVENT_HEADER",
    "MIN_SECRET_LENGTH",
    "NOTIFY_SECRET_SETTING",
    "SIGNATURE_HEADER",
    "WEBHOOK_CONCURRENCY",
    "WEBHOOK_TIMEOUT",
    "WEBHOOK_TRIES",
    "WebhookNotifier",
    "check_secret",
    "check_webhook",
    "sign",
    "webhook_secret",
]

logger = logging.getLogger("user_questions.host.notify")

SIGNATURE_HEADER = "X-UQ-Signature"
"""`sha256=` and the hex HMAC-SHA256 of the body under the notify secret."""
EVENT_HEADER = "X-UQ-Event"
"""The event's type, `question/pending` or `question/settled`."""
DELIVERY_HEADER = "X-UQ-Delivery"
"""The event's id; the same on every retry of one event."""
WEBHOOK_TRIES = 6
"""Attempts per event, the first included, before it is dropped."""
WEBHOOK_TIMEOUT = 10.0
"""Seconds one attempt may take (connect, send, answer); longer counts as a failed attempt."""
WEBHOOK_CONCURRENCY = 4
"""Requests delivered at once; the events of one request always go one after the other."""
MIN_SECRET_LENGTH = 16
"""The shortest notify secret accepted."""
NOTIFY_SECRET_SETTING = "notify-secret"
"""The store setting that keeps the secret."""


def check_webhook(url: str) -> str:
    """`url` if a webhook can be posted to it.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` unless it is an http(s) URL with a host and a port
            that is a number.
    """
    try:
        parts = urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        usable = False
    if not usable:
        raise UserQuestionError(
            f"a notify webhook must be an http:// or https:// URL, got {url!r}",
            ErrorCode.BAD_NOTIFIER,
        )
    return url


def check_secret(secret: str) -> str:
    """`secret` if it can sign webhooks.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` when it is shorter than `MIN_SECRET_LENGTH`.
    """
    if len(secret) < MIN_SECRET_LENGTH:
        raise UserQuestionError(
            f"a notify secret must be at least {MIN_SECRET_LENGTH} characters, got {len(secret)}",
            ErrorCode.BAD_NOTIFIER,
        )
    return secret


async def webhook_secret(store: Store, given: str | None = None) -> str:
    """The secret webhooks are signed with: `given` (then kept in the store), else the stored
    one, else a new one (kept).

    Raises:
        UserQuestionError: `BAD_NOTIFIER` when `given` is too short.
    """
    if given is not None:
        await store.set_setting(NOTIFY_SECRET_SETTING, check_secret(given))
        return given
    # may be given as --notify-secret
    return await store.ensure_setting(NOTIFY_SECRET_SETTING, new_token())


def sign(secret: str, body: bytes) -> str:
    """The `X-UQ-Signature` value of `body`: `sha256=<hex HMAC-SHA256>`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookNotifier(Notifier):
    """POSTs every event to `url`, signed with `secret`; see the module docstring for retries.

    Args:
        url: An `http://` or `https://` URL.
        secret: The notify secret (`webhook_secret`).
        tries: Attempts per event before it is dropped.
        backoff: Seconds before the second attempt, doubled for each later one, at most
            `backoff_max`; each pause is drawn between half of it and all of it (jitter).
        timeout: Seconds one attempt may take.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` for a URL that is not http(s) with a host, or a
            secret that is too short.
    """

    def __init__(
        self,
        url: str,
        *,
        secret: str,
        tries: int = WEBHOOK_TRIES,
        backoff: float = BACKOFF_FIRST,
        backoff_max: float = BACKOFF_MAX,
        timeout: float = WEBHOOK_TIMEOUT,
        concurrency: int = WEBHOOK_CONCURRENCY,
        capacity: int = QUEUE_CAPACITY,
    ) -> None:
        super().__init__(concurrency=concurrency, capacity=capacity)
        self.url = check_webhook(url)
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
        self.target = f"webhook {parts.scheme}://{parts.hostname}{port}"
        self._secret = check_secret(secret)
        self._poster = Poster(
            tries=tries, backoff=backoff, backoff_max=backoff_max, timeout=timeout
        )

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        await stack.enter_async_context(self._poster)  # closed last: after the deliveries
        await super()._start(stack)

    async def deliver(self, event: HostEvent) -> bool:
        body = event.model_dump_json().encode()
        headers = {
            "content-type": "application/json",
            SIGNATURE_HEADER: sign(self._secret, body),
            EVENT_HEADER: event.type,
            DELIVERY_HEADER: event.id,
        }
        posted = await self._poster.post(self.url, body, headers)
        if not posted.ok:
            logger.warning(
                "%s: dropped %s of question %s after %d %s (%s)",
                self.target,
                event.type,
                event.rpc_id,
                posted.attempts,
                "try" if posted.attempts == 1 else "tries",
                posted.failure,
            )
        return posted.ok
