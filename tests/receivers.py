"""Notification services on loopback, for apprise to deliver to: an HTTP receiver (what apprise's
`json://` and `ntfy://` plugins post to) and a real SMTP server (aiosmtpd, for `mailto://`).

Both run in threads of their own, so that a test on any event loop (or none: Playwright's sync
API) can use them, and record what they receive. `wait_for(count)` waits under a deadline.
"""

from __future__ import annotations

import email
import email.policy
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from tests.e2e.host_process import free_port

WAIT_SECONDS = 15.0


@dataclass
class Received:
    """What a receiver got, in order; `wait_for` blocks (a thread) until there is enough."""

    items: list[Any] = field(default_factory=list)
    _changed: threading.Condition = field(default_factory=threading.Condition)

    def add(self, item: Any) -> None:
        with self._changed:
            self.items.append(item)
            self._changed.notify_all()

    def wait_for(self, count: int, seconds: float = WAIT_SECONDS) -> list[Any]:
        """The first `count` items, once they have arrived (`AssertionError` after `seconds`)."""
        with self._changed:
            arrived = self._changed.wait_for(lambda: len(self.items) >= count, seconds)
            assert arrived, f"only {len(self.items)} of {count} arrived: {self.items}"
            return self.items[:count]


@dataclass(frozen=True)
class Request:
    """One HTTP request a receiver read: an apprise plugin's post, or a webhook delivery."""

    method: str
    path: str
    headers: dict[str, str]
    """Names in lower case."""
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data


@dataclass
class HttpReceiver:
    netloc: str
    """`127.0.0.1:<port>`: what follows the scheme of a URL to this receiver."""
    posts: Received


@contextmanager
def http_receiver() -> Iterator[HttpReceiver]:
    """An HTTP server on a free loopback port that records every request and answers 200 `{}`."""
    posts = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            headers = {name.lower(): value for name, value in self.headers.items()}
            posts.add(Request("POST", self.path, headers, self.rfile.read(length)))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the test reads what arrived; nothing to print

    with serving(Handler) as address:
        yield HttpReceiver(address, posts)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server on loopback answering with `handler`, in a thread; its `host:port`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections into its backlog and never answers them."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        port: int = silent.getsockname()[1]
        yield port


def dead_port() -> int:
    """A loopback port where nothing listens: connections are refused at once."""
    return free_port()


@dataclass
class SmtpReceiver:
    host: str
    port: int
    mails: Received

    def mailto(self, to: str = "ada@example.com") -> str:
        """The apprise URL that sends mail to `to` through this server, without TLS or login."""
        return f"mailto://{self.host}:{self.port}?from=uq@example.com&to={to}&mode=insecure"


class _Handler:
    def __init__(self, mails: Received) -> None:
        self.mails = mails

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or b""
        message = email.message_from_bytes(content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.mails.add(message)
        return "250 OK"


@contextmanager
def smtp_receiver() -> Iterator[SmtpReceiver]:
    """A real SMTP server (aiosmtpd) on a free loopback port; every mail it accepts is kept."""
    mails = Received()
    port = free_port()
    controller = Controller(_Handler(mails), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield SmtpReceiver("127.0.0.1", port, mails)
    finally:
        controller.stop()


def body_text(message: EmailMessage) -> str:
    """The plain-text body of a mail, with `\n` line ends (mail has CRLF)."""
    part = message.get_body(preferencelist=("plain",))
    assert part is not None, f"no text part in {message}"
    text: str = part.get_content()
    return text.replace("\r\n", "\n")
