"""The host's gate: token, Origin and size checks as ASGI middleware, and the page's headers.

Every HTTP request and WebSocket must carry a token the host accepts (an `Authorization: Bearer`
header, a `?token=` parameter or the `uq_token` cookie), except two kinds of path (`access_of`):

- `public`: the inbox page's shell and what it is made of (its HTML, modules, styles, icons, web
  app manifest and service worker), `/q/...`, `GET /healthz`, `GET /readyz` and the Web Push
  public key (`/api/push/key`). They are the same for everyone and reveal nothing: every
  question and answer is behind the token.
- `capability`: an answer link (`/a/...`), whose signed path is the permission the route checks,
  `POST /session`, which checks the token it is given, and the service worker's Web Push routes
  (`/api/push/worker/...`), which check its subscription's secret. They still pass the origin
  check.

The middleware asks its `authenticate` function (`tokens.Tokens`) for the person behind a token
presented (on every path, so a public page knows whether it has one), and puts that `Identity`
in the ASGI scope for the routes to record who answered (`identity_of`). A request that carries
an `Origin` header must come from the host's own origin, which stops other sites (and other
local servers: cookies are shared across ports) from driving the host through a visitor's
browser; clients that are not browsers send no `Origin` and are trusted on their token alone.
Request bodies are bounded. Every response carries a strict Content-Security-Policy and no
referrer, since the page's URL may hold the token.

The middleware builds its refusals with the `deny` function it is given, so that statuses and
codes are mapped in one place (`host/app.py`). The host's own token and the named tokens are
`tokens.py`'s.

Two things no route should have to think about are done here too. A request whose handler
raises gets the JSON error `INTERNAL_ERROR` (500), with the same headers as every other answer,
and the traceback is logged once; a WebSocket whose handler raises is closed with 1011. And a
refused WebSocket handshake is logged once, at info level, without the token: uvicorn would log
the token in the address and call the refusal an error ("ASGI callable returned without
completing handshake"), so its records about that connection are dropped (`quiet_refusals`).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Callable
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Literal
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from user_questions.errors import ErrorCode
from user_questions.host.stores import Escalation, Rate, Role

__all__ = [
    "CAPABILITY_PREFIXES",
    "CONTENT_SECURITY_POLICY",
    "IDENTITY_SCOPE_KEY",
    "MAX_BODY_BYTES",
    "PUBLIC_PATHS",
    "PUBLIC_PREFIXES",
    "TOKEN_COOKIE",
    "TOKEN_COOKIE_SECONDS",
    "Access",
    "Authenticate",
    "Authorize",
    "Deny",
    "Identity",
    "SecurityMiddleware",
    "access_of",
    "identity_of",
    "origin_allowed",
    "quiet_refusals",
    "token_cookie",
    "token_of",
]

logger = logging.getLogger("user_questions.host")

MAX_BODY_BYTES = 1024 * 1024
"""Bytes in one HTTP request body; more is refused with 413 (`REQUEST_TOO_LARGE`)."""
TOKEN_COOKIE = "uq_token"
"""The cookie the page is given, so the token can leave its address bar."""
TOKEN_COOKIE_SECONDS = 30 * 24 * 3600
"""How long a browser keeps the cookie after the host last served it a page (30 days)."""
PUBLIC_PATHS = frozenset(
    {
        "/",
        "/healthz",
        "/readyz",
        "/manifest.webmanifest",
        "/sw.js",
        "/.well-known/agent-card.json",
        "/api/push/key",
    }
)
"""Paths served without a token: the inbox's shell, the health and readiness checks, the public
A2A Agent Card (which names no person) and the Web Push public key; they reveal nothing."""
PUBLIC_PREFIXES = ("/static/", "/q/")
"""Path prefixes served without a token: the pages' files, and `/q/<rpcId>`, which only sends
the browser to the inbox's shell."""
CAPABILITY_PREFIXES = ("/a/", "/session", "/api/push/worker/")
"""Path prefixes whose route checks a permission of its own (an answer link's signature, the
token a page signs in with, a service worker's push subscription secret) instead of the token;
the origin is still checked."""
Access = Literal["public", "capability", "token"]
"""What a path needs: nothing, a permission its route checks, or the token."""
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]

INTERNAL_ERROR_MESSAGE = "the host failed to handle this request; its log says why"
"""The message of a 500: nothing about the failure itself reaches the client."""
INTERNAL_ERROR_CLOSE_CODE = 1011
"""The close code of a WebSocket whose handler failed."""
IDENTITY_SCOPE_KEY = "user_questions.identity"
"""Where the middleware leaves the `Identity` of an accepted request in its ASGI scope."""

Deny = Callable[[int, str, str], Response]
"""Builds the refusal for an HTTP status, its error code and a one-line message."""


@dataclass(frozen=True, slots=True)
class Identity:
    """The person (or agent) behind an accepted token, and what its role lets it do."""

    name: str
    """The token's name (`owner` for the host's start-up token): what the records show."""
    key: str
    """The SHA-256 of the token, in hexadecimal: what a revocation is matched against."""
    role: Role = Role.PERSON
    groups: tuple[str, ...] = ()
    """A person's or an admin's groups, which routes name as `@group`."""
    routes: tuple[str, ...] = ()
    """An asker's routes: whose inbox its questions go to; empty: everyone's."""
    deadline: int | None = None
    """An asker's: seconds after which its requests still pending end as `timed-out`."""
    escalate: tuple[Escalation, ...] = ()
    """An asker's: whom its requests still pending are routed to as well, and when."""
    remind: int | None = None
    """An asker's: seconds between reminders of its requests while they are pending."""
    max_pending: int | None = None
    """An asker's: how many of its requests may be pending at once; `None`: the default."""
    rate: Rate | None = None
    """An asker's: how fast it may ask; `None`: the default."""
    lang: str | None = None
    """A person's own language for their chats and notifications; `None`: the host's."""
    approvals: int = 1
    """An asker's: how many people must approve each call it asks about."""


Authorize = Callable[[Identity, str, str], str | None]
"""Why an identity's role may not use a method and path (`roles.refusal_of`), or `None`."""
Authenticate = Callable[[str], Identity | None]
"""The person a presented token belongs to, or `None` when the host does not accept it."""


def identity_of(scope: Scope) -> Identity | None:
    """The person whose token opened this request (`None` when it presented none the host
    accepts, on a path that needs none)."""
    identity: Identity | None = scope.get(IDENTITY_SCOPE_KEY)
    return identity


def token_of(scope: Scope) -> str | None:
    """The token a request presents: header first, then query, then cookie."""
    headers = Headers(scope=scope)
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    query_string: bytes = scope.get("query_string", b"")
    query = parse_qs(query_string.decode("latin-1"))
    if query.get("token"):
        return query["token"][0]
    cookie_header = headers.get("cookie")
    if cookie_header:
        cookies: SimpleCookie = SimpleCookie()
        try:
            cookies.load(cookie_header)
        except CookieError:
            return None
        if TOKEN_COOKIE in cookies:
            value: str = cookies[TOKEN_COOKIE].value
            return value
    return None


def origin_allowed(scope: Scope, public_origin: str | None = None) -> bool:
    """Whether the request has no `Origin`, or the host's own: `http(s)://<Host header>`, or
    `public_origin` (the address people reach the host at through a proxy, `--public-url`)."""
    headers = Headers(scope=scope)
    origin = headers.get("origin")
    if origin is None:
        return True
    if public_origin is not None and origin == public_origin:
        return True
    host = headers.get("host", "")
    return bool(host) and origin in (f"http://{host}", f"https://{host}")


def access_of(path: str) -> Access:
    """What a request for `path` needs to get through the middleware."""
    if path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES):
        return "public"
    if path.startswith(CAPABILITY_PREFIXES):
        return "capability"
    return "token"


def token_cookie(token: str, *, secure: bool = False) -> str:
    """The `Set-Cookie` value that hands the page its token, for `TOKEN_COOKIE_SECONDS`;
    `secure` (a page served over https) keeps the browser from ever sending it over plain http."""
    cookie = f"{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"
    return f"{cookie}; Max-Age={TOKEN_COOKIE_SECONDS}" + ("; Secure" * secure)


_refused: contextvars.ContextVar[bool] = contextvars.ContextVar("refused", default=False)
"""Set in the task serving a WebSocket whose handshake this middleware refused."""


class _QuietRefusals(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _refused.get()


_QUIET_REFUSALS = _QuietRefusals()


def quiet_refusals(server_logger: str = "uvicorn.error") -> None:
    """Drop what the server logs about a WebSocket handshake this middleware refused (it has
    logged the refusal itself). Idempotent."""
    logging.getLogger(server_logger).addFilter(_QUIET_REFUSALS)


class SecurityMiddleware:
    """Refuses requests without the token where one is needed (401) or from another origin
    (403), bounds bodies (413), adds the security headers to every response, and turns a
    handler's failure into a JSON 500 (`INTERNAL_ERROR`) or a 1011 close.

    A refused WebSocket gets the HTTP refusal on its handshake where the server supports it
    (uvicorn does), else it is closed before accept with code 4401 or 4403; either way it is
    logged once, at info level, without the token.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticate: Authenticate,
        authorize: Authorize,
        deny: Deny,
        public_origin: str | None = None,
    ) -> None:
        self.app = app
        self._authenticate = authenticate
        self._authorize = authorize
        self._deny = deny
        self._public_origin = public_origin
        quiet_refusals()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if kind == "http":
            send = _with_headers(send)
        refusal = self._refusal(scope)
        if refusal is not None:
            await self._refuse(scope, receive, send, *refusal)
            return
        if kind == "http":
            length = Headers(scope=scope).get("content-length", "")
            if length.isdigit() and int(length) > MAX_BODY_BYTES:
                await self._refuse(scope, receive, send, 413, _TOO_LARGE, _too_large())
                return
            receive = _bounded(receive)
        await self._guarded(scope, receive, send)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app, with a failure answered as `INTERNAL_ERROR` (or a 1011 close) and logged."""
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] in ("http.response.start", "websocket.accept")
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception:
            logger.exception("%s %s failed", scope.get("method", "WebSocket"), scope["path"])
            if not started:
                failed = (500, ErrorCode.INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE)
                await self._answer(scope, receive, send, *failed)
            elif scope["type"] == "websocket":
                with contextlib.suppress(Exception):  # the socket may be closed or gone already
                    close = {"code": INTERNAL_ERROR_CLOSE_CODE, "reason": INTERNAL_ERROR_MESSAGE}
                    await send({"type": "websocket.close", **close})

    def _refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        """The status, code and message a request is refused with, or `None`: the token
        first, then the origin, then what the token's role may do."""
        given = token_of(scope)
        identity = None if given is None else self._authenticate(given)
        if identity is not None:
            scope[IDENTITY_SCOPE_KEY] = identity
        path = scope["path"]
        access = access_of(path)
        if access == "public":
            return None
        if access == "token" and identity is None:
            message = "this host needs its token: open the URL `uq serve` printed"
            return 401, ErrorCode.UNAUTHORIZED, message
        if not origin_allowed(scope, self._public_origin):
            return 403, ErrorCode.FORBIDDEN_ORIGIN, "requests from another origin are refused"
        if access == "token" and identity is not None:
            why = self._authorize(identity, scope.get("method", "GET"), path)
            if why is not None:
                return 403, ErrorCode.FORBIDDEN, why
        return None

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str
    ) -> None:
        if scope["type"] == "websocket":
            client = scope.get("client") or ("?", 0)
            logger.info(
                "refused a WebSocket to %s from %s:%s (%d): %s",
                scope["path"],
                client[0],
                client[1],
                status,
                message,
            )
            _refused.set(True)
        await self._answer(scope, receive, send, status, code, message)

    async def _answer(
        self, scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str
    ) -> None:
        """The error response, or a WebSocket closed before accept where there can be none."""
        if scope["type"] == "http" or "websocket.http.response" in scope.get("extensions", {}):
            await self._deny(status, code, message)(scope, receive, send)
            return
        await send({"type": "websocket.close", "code": 4000 + status, "reason": message})


_TOO_LARGE = ErrorCode.REQUEST_TOO_LARGE


def _too_large() -> str:
    return f"the request body is larger than {MAX_BODY_BYTES} bytes"


def _with_headers(send: Send) -> Send:
    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *_HEADERS]}
        await send(message)

    return send_with_headers


def _bounded(receive: Receive) -> Receive:
    """`receive`, failing with 413 once the body (of unknown length) passes the limit."""
    received = 0

    async def bounded() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > MAX_BODY_BYTES:
                raise HTTPException(413, _too_large())
        return message

    return bounded
