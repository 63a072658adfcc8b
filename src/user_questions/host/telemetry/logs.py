"""The host's log: a line per request and per WebSocket, and `--log-format json`.

`AccessLogMiddleware` gives every HTTP request a request id and every WebSocket a connection id,
logs one line when a request ends (`event: request`) and two for a WebSocket (`connection-opened`
once accepted, `connection-closed` with its close code; a refused handshake is one `request` line
with its status), and keeps the id in a context variable while the request runs, so that every other
line logged meanwhile (an answer settling a question, a store error) carries it too.

`configure(LogFormat.JSON, ...)` makes the process log one JSON object per line on stderr:

    {"time": "2025-06-03T14:12:05.123Z", "level": "info", "logger": "user_questions.host.access",
     "message": "GET /api/pending 200", "request": "5f0c2a9e41b7", "event": "request",
     "method": "GET", "path": "/api/pending", "status": 200, "client": "203.0.113.9",
     "person": "owner", "ms": 1.4}

The human format, the default, is left as it was: warnings and errors as plain lines, no access
log. Neither ever holds a secret: a line names the path, never the query string or a header;
and whatever a message says, `token=...` values, `Bearer` credentials and the secrets given to
`configure` (the host's token, the notify secret, notification URLs) are replaced by
`[redacted]` before a line is written.
"""

from __future__ import annotations

import enum
import json
import logging
import re
import sys
import time
from collections.abc import Iterable
from contextvars import ContextVar
from datetime import UTC, datetime
from secrets import token_hex
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from user_questions.host._hand_over import hand_over_of
from user_questions.host.gate.security import identity_of

__all__ = [
    "ACCESS_LOGGER",
    "REDACTED",
    "AccessLogMiddleware",
    "ContextIds",
    "JsonFormatter",
    "LogFormat",
    "Redactor",
    "configure",
    "current_ids",
    "url_secrets",
]

ACCESS_LOGGER = "user_questions.host.access"
"""The logger of the request and connection lines."""
REDACTED = "[redacted]"
"""What a secret is replaced with in a log line."""

logger = logging.getLogger(ACCESS_LOGGER)

_ids: ContextVar[dict[str, str] | None] = ContextVar("user_questions_log_ids", default=None)
_CREDENTIAL = re.compile(r"(?i)(token=|bearer\s+)[^&\s\"';,]+")
"""`?token=...`, `uq_token=...` (a cookie), `Bearer ...` (a header): the value goes."""
_MIN_SECRET = 6
"""Shorter strings are not redacted as secrets: they would blank out ordinary words."""


class LogFormat(enum.StrEnum):
    """How `uq serve --log-format` writes its log."""

    HUMAN = "human"
    JSON = "json"


def current_ids() -> dict[str, str]:
    """The request or connection id of the code running now (`{}` outside a request)."""
    return dict(_ids.get() or {})


def url_secrets(url: str) -> list[str]:
    """The parts of a notification URL that may be secret, to keep out of the log: the whole
    URL, its path, its query, its user name and password (a webhook's path is often its key)."""
    parts = urlsplit(url)
    return [url, parts.path, parts.query, parts.username or "", parts.password or ""]


class Redactor:
    """Replaces secrets in log text: query and cookie tokens, `Bearer` credentials, and the
    given strings."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        lowered = text.lower()
        if "token=" in lowered or "bearer" in lowered:  # the pattern is slow; most lines skip it
            text = _CREDENTIAL.sub(rf"\g<1>{REDACTED}", text)
        return text


class ContextIds(logging.Filter):
    """Stamps each record with the request or connection id of the code that logged it (a
    handler's filter runs where the record is made, before it may be formatted elsewhere)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.ids = current_ids()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, the request or connection
    id (`ContextIds`), the record's `fields` (`extra={"fields": {...}}`), and any exception's
    traceback."""

    def __init__(self, redact: Redactor | None = None) -> None:
        super().__init__()
        self.redact = redact or Redactor()

    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.fromtimestamp(record.created, UTC)
        line: dict[str, Any] = {
            "time": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "ids", {}),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        # Redacted once, as written: JSON escapes none of the characters of a token or a URL.
        return self.redact(json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str))


def configure(log_format: LogFormat, *, secrets: Iterable[str] = ()) -> None:
    """Set up the process's log in `log_format`; `secrets` never appear in it.

    JSON: one object per line on stderr, the host's own lines from `info` up (requests,
    connections, settlements), every other library's and Python's warnings from `warning` up.
    Human: unchanged.
    """
    if log_format != LogFormat.JSON:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextIds())
    handler.setFormatter(JsonFormatter(Redactor(secrets)))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("user_questions").setLevel(logging.INFO)
    logging.captureWarnings(True)  # Python's warnings become JSON lines too


class AccessLogMiddleware:
    """Gives each request or WebSocket its id and logs its life (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        ids = {"request" if kind == "http" else "connection": token_hex(6)}
        reset = _ids.set(ids)
        life = _Life(scope)
        try:
            await self.app(scope, life.receive(receive), life.send(send))
        except BaseException:
            life.status = life.status or 500
            raise
        finally:
            life.ended()
            _ids.reset(reset)


class _Life:
    """What the access log says of one request or WebSocket."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.started = time.perf_counter()
        self.status: int | None = None
        self.code: int | None = None
        """A WebSocket's close code, whichever side closed it."""
        self.opened = False

    def send(self, send: Send) -> Send:
        async def sending(message: Message) -> None:
            kind = message["type"]
            if kind in ("http.response.start", "websocket.http.response.start"):
                self.status = message["status"]
            elif kind == "websocket.accept":
                self.status, self.opened = 101, True
                self._log(f"WebSocket {self.scope['path']} opened", "connection-opened")
            elif kind == "websocket.close" and self.code is None:
                self.code = message.get("code", 1000)
            await send(message)

        return sending

    def receive(self, receive: Receive) -> Receive:
        async def receiving() -> Message:
            message = await receive()
            if message["type"] == "websocket.disconnect" and self.code is None:
                self.code = message.get("code", 1005)
            return message

        return receiving

    def ended(self) -> None:
        path = self.scope["path"]
        hand_over = hand_over_of(self.scope)
        if self.opened and hand_over is not None and hand_over.taken:
            # The app returned, the socket lives on: its end is logged when it comes (what
            # the line needs is kept, not the scope).
            fields, started = self._fields("connection-closed"), self.started
            hand_over.on_closed(lambda code: _closed(path, fields, started, code))
        elif self.opened:
            _closed(path, self._fields("connection-closed"), self.started, self.code)
        else:
            method = self.scope.get("method", "WEBSOCKET")
            self._log(f"{method} {path} {self.status}", "request")

    def _log(self, message: str, event: str) -> None:
        if not logger.isEnabledFor(logging.INFO):
            return
        fields = self._fields(event)
        if event != "connection-opened":
            fields["ms"] = _ms_since(self.started)
        logger.info("%s", message, extra={"fields": fields})

    def _fields(self, event: str) -> dict[str, object]:
        client = self.scope.get("client")
        identity = identity_of(self.scope)
        return {
            "event": event,
            "method": self.scope.get("method", "GET"),
            "path": self.scope["path"],
            "status": self.status,
            "client": client[0] if client else None,
            "person": identity.name if identity is not None else None,
        }


def _closed(path: str, fields: dict[str, object], started: float, code: int | None) -> None:
    """Log a WebSocket's end with its close code."""
    if logger.isEnabledFor(logging.INFO):
        fields = {**fields, "ms": _ms_since(started), "code": code}
        logger.info("%s", f"WebSocket {path} closed ({code})", extra={"fields": fields})


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
