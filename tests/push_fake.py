"""A Web Push service on loopback, written from the RFCs, never from pywebpush's code.

`FakePushService` stands where a browser vendor's push service stands (RFC 8030): it hands out
subscriptions as a browser's `PushSubscription.toJSON()` would (an endpoint on this server, a P-256
key pair and a 16-byte auth secret that only the "browser" side, this fake, holds), and for every
push it receives it checks what the RFCs require and decrypts the body with the subscription's
private key, so a test reads what the browser would get:

- RFC 8030 §5: a `POST` to the endpoint, with a `TTL` header; `Urgency` and `Topic` are read;
- RFC 8292: `Authorization: vapid t=<JWT>, k=<key>`; the JWT is ES256 (header `{"typ":"JWT",
  "alg":"ES256"}`), signed with the key `k` (the application server's public key, which must be
  the one the subscription was made with), `aud` is the endpoint's origin, `exp` is in the
  future and at most 24 hours away, `sub` is a `mailto:` or `https:` URI;
- RFC 8291 §3 and RFC 8188 §2: `Content-Encoding: aes128gcm`; the body is `salt (16) || rs (4) ||
  idlen (1) || keyid (the sender's ephemeral public key, 65)` then one record; the key is
  derived by HKDF-SHA256 from the ECDH secret (the subscription's private key with `keyid`), the
  auth secret and `"WebPush: info" 0x00 || ua_public || as_public`, then the content key and
  nonce from the salt (`"Content-Encoding: aes128gcm" 0x00`, `"Content-Encoding: nonce" 0x00`);
  the record is AES-128-GCM and ends with the delimiter `0x02` before any zero padding.

A push that fails a check is answered 400 and recorded with its problem; one to a subscription
the test marked gone is answered 410, as a push service answers for a browser that
unsubscribed; one the test marked unavailable is answered 503, as an overloaded push service
answers. Runs in a thread, so any test (async or Playwright's sync one) can use it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tests.receivers import Received, serving


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Browser:
    """One subscription: the keys only the browser holds."""

    id: str
    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    @property
    def public_key(self) -> bytes:
        return self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )

    def to_json(self) -> dict[str, Any]:
        """What `PushSubscription.toJSON()` gives for it."""
        keys = {"p256dh": b64(self.public_key), "auth": b64(self.auth)}
        return {"endpoint": self.endpoint, "expirationTime": None, "keys": keys}


@dataclass(frozen=True)
class Push:
    """A push the service accepted: its headers and the browser's plain text."""

    subscription: str
    headers: dict[str, str]
    claims: dict[str, Any]
    plain: bytes

    @property
    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.plain)
        return data


@dataclass
class FakePushService:
    netloc: str = ""
    application_key: str | None = None
    """The application server key the subscriptions were made with (`GET /api/push/key`)."""
    browsers: dict[str, Browser] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    """Subscriptions answered 410 Gone."""
    unavailable: dict[str, int] = field(default_factory=dict)
    """Subscriptions whose next pushes are answered 503 (how many), as a busy service does."""
    attempts: Received = field(default_factory=Received)
    """The subscription of every push that arrived, answered or not."""
    pushes: Received = field(default_factory=Received)
    refused: Received = field(default_factory=Received)
    """`(subscription, problem)` of every push that failed a check."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def subscribe(self) -> Browser:
        """A new subscription, as a browser's `PushManager.subscribe` would make."""
        number = secrets.token_hex(8)
        browser = Browser(
            number,
            f"http://{self.netloc}/push/{number}",
            ec.generate_private_key(ec.SECP256R1()),
            secrets.token_bytes(16),
        )
        with self._lock:
            self.browsers[number] = browser
        return browser

    def receive(self, path: str, headers: dict[str, str], body: bytes) -> int:
        number = path.rpartition("/")[2]
        browser = self.browsers.get(number)
        if browser is None:
            return 404
        self.attempts.add(number)
        if number in self.gone:
            return 410
        with self._lock:
            busy = self.unavailable.get(number, 0)
            self.unavailable[number] = max(0, busy - 1)
        if busy:
            return 503
        try:
            claims = self._check_vapid(headers.get("authorization", ""), browser.endpoint)
            if "ttl" not in headers or not headers["ttl"].isdigit():
                raise ValueError("no TTL header (RFC 8030 §5.2)")
            if headers.get("content-encoding") != "aes128gcm":
                raise ValueError(f"content-encoding {headers.get('content-encoding')!r}")
            plain = decrypt(browser, body)
        except ValueError as problem:
            self.refused.add((number, str(problem)))
            return 400
        self.pushes.add(Push(number, headers, claims, plain))
        return 201

    def _check_vapid(self, authorization: str, endpoint: str) -> dict[str, Any]:
        scheme, _, params = authorization.partition(" ")
        if scheme.lower() != "vapid":
            raise ValueError(f"not a vapid Authorization: {authorization[:20]!r}")
        fields = dict(part.strip().split("=", 1) for part in params.split(","))
        token, key = fields["t"], fields["k"]
        if self.application_key is not None and key != self.application_key:
            raise ValueError("signed with another key than the subscription's")
        head, payload, signature = token.split(".")
        header = json.loads(unb64(head))
        if header != {"typ": "JWT", "alg": "ES256"}:
            raise ValueError(f"JWT header {header}")
        raw = unb64(signature)
        der = encode_dss_signature(int.from_bytes(raw[:32]), int.from_bytes(raw[32:]))
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(key))
        public.verify(der, f"{head}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
        claims: dict[str, Any] = json.loads(unb64(payload))
        origin = endpoint.split("/push/")[0]
        if claims.get("aud") != origin:
            raise ValueError(f"aud {claims.get('aud')!r} is not {origin!r}")
        if not time.time() < claims["exp"] <= time.time() + 24 * 3600:
            raise ValueError(f"exp {claims['exp']} is not within 24 hours")
        if not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
            raise ValueError(f"sub {claims.get('sub')!r}")
        return claims


def _hkdf(salt: bytes, secret: bytes, info: bytes, length: int) -> bytes:
    """HKDF-SHA256 (RFC 5869) for one block: extract, then expand."""
    prk = hmac.new(salt, secret, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()[:length]


def decrypt(browser: Browser, body: bytes) -> bytes:
    """The plain text of an `aes128gcm` push for `browser` (RFC 8291 §3.4, RFC 8188 §2)."""
    salt, record_size, id_length = body[:16], int.from_bytes(body[16:20]), body[20]
    sender = body[21 : 21 + id_length]
    cipher = body[21 + id_length :]
    if id_length != 65 or len(cipher) > record_size:
        raise ValueError(f"keyid of {id_length} bytes, or more than one record")
    peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), sender)
    shared = browser.private_key.exchange(ec.ECDH(), peer)
    info = b"WebPush: info\x00" + browser.public_key + sender
    ikm = _hkdf(browser.auth, shared, info, 32)
    key = _hkdf(salt, ikm, b"Content-Encoding: aes128gcm\x00", 16)
    nonce = _hkdf(salt, ikm, b"Content-Encoding: nonce\x00", 12)
    try:
        padded = AESGCM(key).decrypt(nonce, cipher, None)
    except Exception as error:
        raise ValueError(f"the record does not decrypt: {type(error).__name__}") from None
    content = padded.rstrip(b"\x00")
    if not content.endswith(b"\x02"):
        raise ValueError("the last record has no 0x02 delimiter")
    return content[:-1]


@contextmanager
def push_service() -> Iterator[FakePushService]:
    """A push service on a free loopback port, for the duration of the block."""
    service = FakePushService()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            headers = {name.lower(): value for name, value in self.headers.items()}
            status = service.receive(self.path, headers, self.rfile.read(length))
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the test reads what arrived

    with serving(Handler) as address:
        service.netloc = address
        yield service
