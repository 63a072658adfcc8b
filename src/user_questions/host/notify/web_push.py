"""Web Push (RFC 8030, 8291, 8292): each person's questions pushed to the browsers they subscribed.

A person's page subscribes through the browser's `PushManager` and registers the subscription
(`POST /api/push/subscriptions`, `host/endpoints/push_api.py`); `WebPush.subscribe`
checks it and keeps it in the store (`PushStore`) with the hash of a new random secret that only
that browser's service worker is given: with it, a tap on a notification's button answers as the
person (`WebPush.worker`), without a page and without the person's token.

Every request that becomes pending, is routed again (an escalation step's target, a reminder) or
settles is pushed to the subscriptions of each person who may see and answer it
(`roles.sees`), by `WebPushNotifier`, with the queue of every `Notifier` (an ask never waits).
Each push is the JSON of `push_message.payload_of`, encrypted for the browser (`aes128gcm`,
pywebpush's encryption), signed with the host's VAPID key (`push_keys.py`), with `TTL` (until the
request's deadline, at most `PUSH_TTL`), `Urgency` (`high` for a question, `normal` when it
settles) and `Topic` (one per request: a push service keeps only the latest undelivered one, so
a phone that was off gets the question, or nothing once it has settled). A push service that
answers 404 or 410 has forgotten the browser: its subscription is dropped. Connection failures,
timeouts, 408, 429 and 5xx are retried with backoff (`posting.Poster`); other answers drop the
one push, with a log line that names the push service by its host only (an endpoint is a
capability).

The endpoint is the one address a person chooses for the host to send to, so it is checked
(`check_endpoint`): https, or http on a loopback address (a push service on the same machine);
nothing else, and no address in a private, link-local or reserved network, whether written as
one or found by resolving the name, so a subscription cannot aim the host at an internal
service.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import hashlib
import hmac
import ipaddress
import logging
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

import anyio
from pydantic import Field, PrivateAttr, StrictStr

from user_questions._languages import speaking
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.roles import may_answer, sees
from user_questions.host.gate.security import Identity
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import HostTask, Hub, OnePerCard
from user_questions.host.notify.events import HostEvent, event_of
from user_questions.host.notify.notifier import QUEUE_CAPACITY, Notifier
from user_questions.host.notify.posting import Poster
from user_questions.host.notify.push_keys import PushKeys
from user_questions.host.notify.push_message import payload_of, topic_of
from user_questions.host.notify.push_subscribers import PushSubscribers
from user_questions.host.stores import PushSubscription, Store, StoredQuestion
from user_questions.types import WireModel

__all__ = [
    "MAX_DEVICE_CHARS",
    "MAX_ENDPOINT_CHARS",
    "MAX_SUBSCRIPTIONS",
    "PUSH_CONCURRENCY",
    "PUSH_TIMEOUT",
    "PUSH_TRIES",
    "PUSH_TTL",
    "WORKER_SCHEME",
    "SubscriptionBody",
    "SubscriptionKeys",
    "WebPush",
    "WebPushNotifier",
    "check_endpoint",
    "web_push_notifying",
]

logger = logging.getLogger("user_questions.host.notify")

MAX_ENDPOINT_CHARS = 2048
"""The longest endpoint accepted (push services use a few hundred characters)."""
MAX_DEVICE_CHARS = 120
"""What is kept of a browser's User-Agent to name the subscription."""
MAX_SUBSCRIPTIONS = 20
"""Subscriptions one person keeps; a new one beyond this replaces their oldest."""
PUSH_TTL = 12 * 3600
"""Seconds a push service keeps a push for a browser that is offline, at most."""
PUSH_TRIES = 5
"""Attempts per push, the first included."""
PUSH_TIMEOUT = 10.0
"""Seconds one attempt may take."""
PUSH_CONCURRENCY = 4
"""Requests pushed at once; the pushes of one request go one after the other."""
WORKER_SCHEME = "Push"
"""How a service worker presents its subscription: `Authorization: Push <id>.<secret>`."""

_GONE = frozenset({404, 410})
_PUBLIC_KEY_BYTES = 65
_AUTH_BYTES = 16


class SubscriptionKeys(WireModel):
    """`PushSubscription.toJSON().keys`: the browser's key and authentication secret."""

    p256dh: StrictStr = Field(max_length=128)
    auth: StrictStr = Field(max_length=64)


class SubscriptionBody(WireModel):
    """`POST /api/push/subscriptions`: a browser's `PushSubscription.toJSON()`."""

    endpoint: StrictStr = Field(max_length=MAX_ENDPOINT_CHARS)
    keys: SubscriptionKeys


def check_endpoint(url: str) -> str:
    """`url` if the host may push to it: https, or http on a loopback address; never a
    private, link-local or reserved address (written as one; `check_resolved` looks up names).

    Raises:
        UserQuestionError: `BAD_REQUEST` otherwise.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        host = ""
    loopback = _loopback(host)
    usable = (
        bool(host)
        and "@" not in parts.netloc
        and (parts.scheme == "https" or (parts.scheme == "http" and loopback))
        and (loopback or not _internal(host))
    )
    if not usable or len(url) > MAX_ENDPOINT_CHARS:
        raise UserQuestionError(
            "a push subscription's endpoint must be an https URL of a push service (or http on "
            "a loopback address), not an internal address",
            ErrorCode.BAD_REQUEST,
        )
    return url


async def check_resolved(url: str) -> None:
    """Refuse an https endpoint whose name resolves to an internal address (a name that does
    not resolve here is left to fail when pushed to).

    Raises:
        UserQuestionError: `BAD_REQUEST` for one that does.
    """
    host = urlsplit(url).hostname or ""
    if _loopback(host) or _address(host) is not None:
        return
    try:
        found = await anyio.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
    except OSError:
        return
    if any(_internal(str(entry[4][0])) for entry in found):
        check_endpoint("https://10.0.0.0/")  # the same refusal, worded once


@dataclass(frozen=True, slots=True)
class WebPush:
    """What the push endpoints and the notifier share: the keys, the store, the tokens, and
    whether pushes are content-free (`--push-private`)."""

    keys: PushKeys
    store: Store
    tokens: Tokens
    private: bool = False
    subscribers: PushSubscribers = dataclasses.field(init=False)
    """Each person's subscriptions, kept between pushes."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "subscribers", PushSubscribers(self.store))

    async def unsubscribe(self, subscription_id: str, person: str | None = None) -> bool:
        """Remove a subscription (only if it is `person`'s, when given); whether there was one."""
        removed = await self.store.remove_push_subscription(subscription_id, person)
        if removed and person is not None:
            await self.subscribers.changed(person)
        return removed

    async def subscribe(
        self, identity: Identity, body: SubscriptionBody, device: str
    ) -> tuple[PushSubscription, str]:
        """Keep `body` as `identity`'s subscription; it and the secret its worker answers
        with (shown this once).

        Raises:
            UserQuestionError: `BAD_REQUEST` for an endpoint or keys that cannot be used.
        """
        endpoint = check_endpoint(body.endpoint)
        await check_resolved(endpoint)
        _check_keys(body.keys)
        secret = secrets.token_urlsafe(32)
        subscription = PushSubscription(
            id=secrets.token_urlsafe(12),
            person=identity.name,
            endpoint=endpoint,
            p256dh=body.keys.p256dh,
            auth=body.keys.auth,
            secret_hash=_hash(secret),
            device=" ".join(device.split())[:MAX_DEVICE_CHARS],
            created_at=datetime.now(UTC),
        )
        await self.store.add_push_subscription(subscription)
        theirs = await self.store.push_subscriptions(identity.name)
        for old in theirs[: max(0, len(theirs) - MAX_SUBSCRIPTIONS)]:
            await self.store.remove_push_subscription(old.id, identity.name)
        await self.subscribers.changed(identity.name)
        return subscription, secret

    async def worker(self, authorization: str | None) -> tuple[PushSubscription, Identity] | None:
        """The subscription and the person behind a worker's `Authorization: Push <id>.<secret>`,
        while the person's token may answer; `None` for anything else."""
        scheme, _, credentials = (authorization or "").partition(" ")
        subscription_id, _, secret = credentials.strip().partition(".")
        if scheme != WORKER_SCHEME or not secret or len(credentials) > 200:
            return None
        subscription = await self.store.push_subscription(subscription_id)
        if subscription is None or not hmac.compare_digest(_hash(secret), subscription.secret_hash):
            return None
        identity = self.tokens.named(subscription.person)
        if identity is None or not may_answer(identity):
            return None
        return subscription, identity


class _Routed(HostEvent):
    """An event with whom it was routed to (`None`: everyone who may see it)."""

    _whom: tuple[str, ...] | None = PrivateAttr(default=None)


class WebPushNotifier(Notifier):
    """Pushes every request to the browsers of the people who may answer it; see the module
    docstring. `push(record, whom)` queues one, never waiting."""

    target = "web push"

    def __init__(
        self,
        push: WebPush,
        apart: Callable[[str], bool],
        *,
        tries: int = PUSH_TRIES,
        backoff: float = 1.0,
        timeout: float = PUSH_TIMEOUT,
        concurrency: int = PUSH_CONCURRENCY,
        capacity: int = QUEUE_CAPACITY,
    ) -> None:
        super().__init__(concurrency=concurrency, capacity=capacity)
        self._push = push
        self._cards = OnePerCard(apart)
        self._poster = Poster(tries=tries, backoff=backoff, timeout=timeout)

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        await stack.enter_async_context(self._poster)  # closed last: after the deliveries
        await super()._start(stack)

    def push(self, record: StoredQuestion, whom: tuple[str, ...] | None = None) -> None:
        """Queue the push of `record` (routed again: only to those `whom` it was routed to),
        unless it is one more of the identical requests another's card stands for (`apart`),
        or the settlement of one."""
        if self._push.subscribers.nobody() or not self._cards.wanted(record):
            return
        event = _Routed.model_validate(event_of(record).model_dump())
        event._record, event._whom = record, whom
        self.notify(event)

    async def deliver(self, event: HostEvent) -> bool:
        assert isinstance(event, _Routed)
        assert event.record is not None
        record, whom = event.record, event._whom
        try:
            people = await self._push.subscribers.everyone()
        except UserQuestionError as error:  # the store's fault: its own log line says more
            logger.warning(
                "web push: %s of question %s not pushed: %s", event.type, record.rpc_id, error
            )
            return False
        receivers = [
            subscription
            for person, theirs in people.items()
            if self._reaches(person, record, whom)
            for subscription in theirs
        ]
        if not receivers:
            return True
        payloads: dict[str | None, bytes] = {}  # one per language among the receivers
        delivered = True
        async with anyio.create_task_group() as sending:
            for subscription in receivers:
                language = self._language_of(subscription.person)
                if language not in payloads:
                    with speaking(language):
                        payloads[language] = payload_of(record, private=self._push.private)
                payload = payloads[language]

                async def send(
                    subscription: PushSubscription = subscription, payload: bytes = payload
                ) -> None:
                    nonlocal delivered
                    delivered &= await self._send(subscription, record, payload)

                sending.start_soon(send)
        return delivered

    def _language_of(self, person: str) -> str | None:
        """`person`'s own language (`uq token add --lang`), `None`: the host's."""
        identity = self._push.tokens.named(person)
        return None if identity is None else identity.lang

    def _reaches(self, person: str, record: StoredQuestion, whom: tuple[str, ...] | None) -> bool:
        identity = self._push.tokens.named(person)
        if identity is None or not may_answer(identity) or not sees(identity, record):
            return False
        if not whom:  # new, settled, or a reminder to everyone it is routed to
            return True
        return sees(identity, dataclasses.replace(record, audience=whom))

    async def _send(
        self, subscription: PushSubscription, record: StoredQuestion, payload: bytes
    ) -> bool:
        from pywebpush import WebPusher

        keys = {"p256dh": subscription.p256dh, "auth": subscription.auth}
        pusher = WebPusher({"endpoint": subscription.endpoint, "keys": keys})
        body = pusher.encode(payload, "aes128gcm")["body"]
        headers = {
            "authorization": self._push.keys.authorization(subscription.endpoint),
            "ttl": str(_ttl(record)),
            "urgency": "high" if record.pending else "normal",
            "topic": topic_of(record.rpc_id),
            "content-encoding": "aes128gcm",
            "content-type": "application/octet-stream",
        }
        posted = await self._poster.post(subscription.endpoint, body, headers)
        if posted.ok:
            return True
        service = urlsplit(subscription.endpoint).hostname
        if posted.status in _GONE:
            try:
                await self._push.unsubscribe(subscription.id, subscription.person)
            except UserQuestionError as error:  # kept: the next push's 410 drops it
                logger.warning("web push %s: could not drop a subscription: %s", service, error)
                return False
            logger.info(
                "web push %s: dropped a subscription of %s, which its push service no longer "
                "knows (HTTP %d)",
                service,
                subscription.person,
                posted.status,
            )
            return True
        logger.warning(
            "web push %s: push of question %s to %s failed after %d %s (%s)",
            service,
            record.rpc_id,
            subscription.person,
            posted.attempts,
            "try" if posted.attempts == 1 else "tries",
            posted.failure,
        )
        return False


def web_push_notifying(push: WebPush) -> HostTask:
    """A host task pushing each request this host commits, or routes again, while it runs."""

    async def run(hub: Hub) -> None:
        notifier = WebPushNotifier(push, hub.shown_apart)
        stops = [hub.on_event(notifier.push), hub.on_routed(notifier.push)]
        try:
            async with notifier:
                stops.append(hub.metrics.watch_notifiers([notifier]))
                await anyio.sleep_forever()
        finally:
            for stop in stops:
                stop()

    return run


def _ttl(record: StoredQuestion) -> int:
    if record.deadline_at is None:
        return PUSH_TTL
    left = (record.deadline_at - datetime.now(UTC)).total_seconds()
    return max(60, min(PUSH_TTL, int(left)))


def _check_keys(keys: SubscriptionKeys) -> None:
    """Refuse keys that are not a P-256 point and a 16-byte secret (RFC 8291).

    Raises:
        UserQuestionError: `BAD_REQUEST`.
    """
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        point = _decoded(keys.p256dh)
        secret = _decoded(keys.auth)
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
        usable = len(point) == _PUBLIC_KEY_BYTES and len(secret) == _AUTH_BYTES
    except (ValueError, binascii.Error):
        usable = False
    if not usable:
        raise UserQuestionError(
            "a push subscription's keys must be p256dh, a P-256 public key, and auth, 16 bytes, "
            "both in URL-safe base64",
            ErrorCode.BAD_REQUEST,
        )


def _decoded(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _loopback(host: str) -> bool:
    address = _address(host)
    if address is None:
        return host == "localhost" or host.endswith(".localhost")
    return address.is_loopback


def _internal(host: str) -> bool:
    """Whether `host` is an address outside the public internet (a name is not)."""
    address = _address(host.partition("%")[0])
    return address is not None and not address.is_global
