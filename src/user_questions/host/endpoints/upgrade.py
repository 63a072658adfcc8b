"""`HttpProtocol`: uvicorn's httptools protocol, handing a WebSocket upgrade over parsed once.

On an upgrade, uvicorn's HTTP protocol, which httptools (C) parsed the request for, writes the
request out again as bytes and gives them to the WebSocket protocol, where websockets'
`ServerProtocol` parses them a second time, in Python, line by line, and its parser then keeps the
request and its headers for as long as the socket is open (docs/performance.md, "An asker's
handshake parsed once": 2.6 KB and 7 objects for the garbage collector to scan per asker). This
subclass builds websockets' `Request` from what httptools parsed (`upgrade_request`) and gives it
to `WebSocketProtocol.handshake`, which answers it as it would have answered the bytes and lets it
go once the app has accepted.

It does so only where parsing the bytes is known to give that same request: a `GET`, within
websockets' limits on line length and header count, every header name a token and every value
printable ASCII, no body announced. Any other upgrade request (the malformed, the oversized, the
unusual) goes uvicorn's way, so websockets still decides how it is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from websockets.datastructures import Headers
from websockets.http11 import MAX_LINE_LENGTH, MAX_NUM_HEADERS, Request

from user_questions.host.endpoints.websocket import WebSocketProtocol

__all__ = ["HttpProtocol", "upgrade_request"]

_REQUEST_LINE = len("GET  HTTP/1.1\r\n")
"""The bytes of the request line around its target, as uvicorn writes it for websockets."""
_HEADER_LINE = len(": \r\n")
"""The bytes of a header line around its name and value."""
_TARGET = re.compile(rb"[!-~]+")
"""A request target websockets reads as it is: visible ASCII, no space."""
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
"""A header name (RFC 9110's token), as websockets requires it."""
_VALUE = re.compile(rb"[\t\x20-\x7e]*")
"""A header value websockets takes as it is: tabs and printable ASCII (it accepts bytes above
0x7f too, as surrogate escapes, which the slow way still handles)."""
_BODY = (b"content-length", b"transfer-encoding")
"""Headers announcing a body, which websockets refuses unless the length is 0."""


def upgrade_request(
    method: str, target: bytes, headers: Iterable[tuple[bytes, bytes]]
) -> Request | None:
    """websockets' `Request` for an upgrade request httptools parsed (its header names in lower
    case, their values without trailing blanks, as uvicorn keeps them), or `None` where parsing
    the bytes uvicorn would write might not give that same request."""
    if method != "GET" or len(target) + _REQUEST_LINE > MAX_LINE_LENGTH:
        return None
    if not _TARGET.fullmatch(target):
        return None
    fields = Headers()
    for count, (name, raw) in enumerate(headers, 1):
        value = raw.strip(b" \t")
        if (
            count > MAX_NUM_HEADERS
            or len(name) + len(raw) + _HEADER_LINE > MAX_LINE_LENGTH
            or name in _BODY
            or not _TOKEN.fullmatch(name)
            or not _VALUE.fullmatch(value)
        ):
            return None
        fields[name.decode()] = value.decode()
    return Request(target.decode(), fields)


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, giving `WebSocketProtocol` the upgrade request it parsed
    rather than the request's bytes to parse again."""

    def handle_websocket_upgrade(self) -> None:
        request = upgrade_request(self.scope["method"], self.url, self.scope["headers"])
        ws = self.ws_protocol_class
        if request is None or not (isinstance(ws, type) and issubclass(ws, WebSocketProtocol)):
            super().handle_websocket_upgrade()
            return
        self.connections.discard(self)
        protocol = ws(config=self.config, server_state=self.server_state, app_state=self.app_state)
        protocol.connection_made(self.transport)
        self.transport.set_protocol(protocol)
        protocol.handshake(request)
