"""The host's VAPID key pair (RFC 8292): made once, kept in the store, and what it signs.

The private key is a P-256 scalar kept as URL-safe base64 in the store's setting `web-push-key`
(every node on one PostgreSQL database shares it, so a browser subscribed through one node gets
pushes from any). Browsers are given the public key (`GET /api/push/key`: the uncompressed point,
URL-safe base64, as `PushManager.subscribe`'s `applicationServerKey` takes it), and push services
accept only messages whose `Authorization: vapid t=<JWT>, k=<public key>` is signed by it, so a
leaked subscription is useless to anyone without the key. Signing is py_vapid's (pywebpush's own
dependency): an ES256 JWT with `aud` (the push service's origin), `exp` (12 hours on) and `sub`
(how the push service may reach whoever runs the host: the host's https address, else a mailto).
"""

from __future__ import annotations

import base64
import time
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import SettingStore

if TYPE_CHECKING:
    from py_vapid import Vapid02

__all__ = [
    "DEFAULT_CONTACT",
    "INSTALL_HINT",
    "KEY_SETTING",
    "TOKEN_SECONDS",
    "PushKeys",
    "contact_of",
]

KEY_SETTING = "web-push-key"
"""The store setting that keeps the VAPID private key."""
TOKEN_SECONDS = 12 * 3600
"""How long a signed `Authorization` is good for (RFC 8292 allows at most 24 hours)."""
DEFAULT_CONTACT = "mailto:user-questions@localhost"
"""The `sub` claim of a host without an https address (Apple's push service wants a real one)."""
INSTALL_HINT = "pip install 'user-questions[notify]'"


class PushKeys:
    """The VAPID key pair: `public_key` for browsers, `authorization(endpoint)` for pushes."""

    def __init__(self, private_key: str, contact: str = DEFAULT_CONTACT) -> None:
        from cryptography.hazmat.primitives import serialization
        from py_vapid import Vapid02
        from py_vapid.utils import b64urlencode

        self._vapid: Vapid02 = Vapid02.from_raw(private_key.encode())
        point = self._vapid.public_key.public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        self.public_key: str = b64urlencode(point)
        """The uncompressed P-256 point, URL-safe base64 without padding."""
        self.contact = contact

    def __repr__(self) -> str:
        return f"<PushKeys {self.public_key[:12]}…>"

    @classmethod
    async def load(cls, store: SettingStore, contact: str = DEFAULT_CONTACT) -> PushKeys:
        """The stored key pair, else a new one (kept: hosts starting together keep the first).

        Raises:
            UserQuestionError: `BAD_NOTIFIER` when pywebpush (the `notify` extra) is missing.
        """
        try:
            import py_vapid  # noqa: F401 - checked here, used by the instance
            from cryptography.hazmat.primitives.asymmetric import ec
        except ImportError:
            raise UserQuestionError(
                f"Web Push needs pywebpush: {INSTALL_HINT}", ErrorCode.BAD_NOTIFIER
            ) from None
        stored = await store.setting(KEY_SETTING)
        if stored is None:  # the first start: made once, then read at every start
            scalar = ec.generate_private_key(ec.SECP256R1()).private_numbers().private_value
            made = base64.urlsafe_b64encode(scalar.to_bytes(32, "big")).decode().rstrip("=")
            stored = await store.ensure_setting(KEY_SETTING, made)
        return cls(stored, contact)

    def authorization(self, endpoint: str) -> str:
        """The `Authorization` header of a push to `endpoint`: `vapid t=<JWT>, k=<key>`."""
        parts = urlsplit(endpoint)
        audience = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        claims = {"aud": audience, "exp": int(time.time()) + TOKEN_SECONDS, "sub": self.contact}
        header: str = self._vapid.sign(claims)["Authorization"]
        return header.replace(",k=", ", k=", 1)  # RFC 8292's own spelling


def contact_of(address: str | None) -> str:
    """The `sub` claim for a host reached at `address`: its origin when https, else the
    default mailto."""
    if address is None or urlsplit(address).scheme != "https":
        return DEFAULT_CONTACT
    parts = urlsplit(address)
    return f"https://{parts.netloc}"
