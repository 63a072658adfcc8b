"""An upgrade request parsed once (`endpoints.upgrade`): the `Request` built from what httptools
parsed is the one websockets parses from the bytes uvicorn would have written, whenever it is
built; and served, the host's HTTP protocol answers every handshake, accepted or refused,
byte for byte as uvicorn's own does."""

from __future__ import annotations

import base64
import re
import socket

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.types import Receive, Scope, Send
from websockets.http11 import MAX_NUM_HEADERS, Request
from websockets.server import ServerProtocol

from tests.host.endpoints.test_websocket import serving
from user_questions.host.endpoints.upgrade import HttpProtocol, upgrade_request
from user_questions.host.endpoints.websocket import WebSocketProtocol

pytestmark = pytest.mark.anyio

Headers = list[tuple[bytes, bytes]]


def _bytes_uvicorn_writes(method: str, target: bytes, headers: Headers) -> bytes:
    """What uvicorn's httptools protocol gives the WebSocket protocol on an upgrade."""
    lines = [method.encode(), b" ", target, b" HTTP/1.1\r\n"]
    for name, value in headers:
        lines += [name, b": ", value, b"\r\n"]
    return b"".join([*lines, b"\r\n"])


def _parsed_by_websockets(data: bytes) -> Request | None:
    conn = ServerProtocol()
    conn.receive_data(data)
    requests = [event for event in conn.events_received() if isinstance(event, Request)]
    return requests[0] if requests else None


def _same(built: Request, parsed: Request | None) -> bool:
    return (
        parsed is not None
        and built.path == parsed.path
        and list(built.headers.raw_items()) == list(parsed.headers.raw_items())
    )


KEY = base64.b64encode(b"sixteen bytes!!!").decode()
BROWSER: Headers = [
    (b"host", b"127.0.0.1:8765"),
    (b"connection", b"Upgrade"),
    (b"pragma", b"no-cache"),
    (b"cache-control", b"no-cache"),
    (b"user-agent", b"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0 Safari"),
    (b"upgrade", b"websocket"),
    (b"origin", b"http://127.0.0.1:8765"),
    (b"sec-websocket-version", b"13"),
    (b"accept-encoding", b"gzip, deflate, br, zstd"),
    (b"accept-language", b"en-US,en;q=0.9"),
    (b"sec-websocket-key", KEY.encode()),
    (b"sec-websocket-extensions", b"permessage-deflate; client_max_window_bits"),
]


def test_a_browsers_handshake_is_built_as_websockets_parses_it() -> None:
    target = b"/ws/page?token=uq_abc%20def"
    built = upgrade_request("GET", target, BROWSER)
    assert built is not None
    assert _same(built, _parsed_by_websockets(_bytes_uvicorn_writes("GET", target, BROWSER)))


@pytest.mark.parametrize(
    ("method", "target", "headers"),
    [
        ("POST", b"/", BROWSER),  # websockets refuses any method but GET
        ("GET", b"/a b", BROWSER),
        ("GET", b"/" + b"x" * 8200, BROWSER),  # over websockets' line limit
        ("GET", b"/", [*BROWSER, (b"x-long", b"v" * 8200)]),
        ("GET", b"/", [(b"x-many", b"1")] * (MAX_NUM_HEADERS + 1)),
        ("GET", b"/", [*BROWSER, (b"content-length", b"0")]),  # a body announced, even empty
        ("GET", b"/", [*BROWSER, (b"transfer-encoding", b"chunked")]),
        ("GET", b"/", [*BROWSER, (b"x-name", b"caf\xc3\xa9")]),  # surrogate escapes: the slow way
        ("GET", b"/caf\xc3\xa9", BROWSER),
        ("GET", b"/", [*BROWSER, (b"bad name", b"1")]),
    ],
)
def test_a_request_not_known_to_parse_the_same_takes_uvicorns_way(
    method: str, target: bytes, headers: Headers
) -> None:
    assert upgrade_request(method, target, headers) is None


def test_as_many_headers_as_websockets_allows_are_built() -> None:
    headers = [(b"x-many", b"1")] * MAX_NUM_HEADERS
    built = upgrade_request("GET", b"/", headers)
    assert built is not None
    assert _same(built, _parsed_by_websockets(_bytes_uvicorn_writes("GET", b"/", headers)))


_NAMES = st.one_of(
    st.sampled_from([b"host", b"upgrade", b"Connection", b"content-length", b"x-a"]),
    st.binary(min_size=1, max_size=8),
)
_VALUES = st.one_of(
    st.from_regex(rb"[ \t]*[!-~]([!-~ \t]*[!-~])?[ \t]*", fullmatch=True),
    st.binary(max_size=12),
)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(
    method=st.sampled_from(["GET", "POST", "get"]),
    target=st.one_of(st.from_regex(rb"/[!-~]{0,16}", fullmatch=True), st.binary(max_size=16)),
    headers=st.lists(st.tuples(_NAMES, _VALUES), max_size=6),
)
def test_whatever_is_built_is_what_websockets_parses(
    method: str, target: bytes, headers: Headers
) -> None:
    built = upgrade_request(method, target, headers)
    if built is not None:
        assert _same(built, _parsed_by_websockets(_bytes_uvicorn_writes(method, target, headers)))


class _Counted(WebSocketProtocol):
    """The host's protocol, counting the handshakes handed over parsed."""

    handed: int = 0

    def handshake(self, request: Request) -> None:
        _Counted.handed += 1
        super().handshake(request)


async def _describe(scope: Scope, receive: Receive, send: Send) -> None:
    """Accept, and say what the scope holds: the path, the query, the headers."""
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    headers = b";".join(name + b"=" + value for name, value in scope["headers"])
    text = f"{scope['path']} {scope['query_string'].decode()} {headers.decode()}"
    await send({"type": "websocket.send", "text": text})
    await send({"type": "websocket.close", "code": 1000})


def _exchange(port: int, request: bytes) -> bytes:
    """Send `request` and read the answer: the response's head without its date, and after a
    101 the first frame, else all until the host closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as peer:
        peer.sendall(request)
        received = b""
        while b"\r\n\r\n" not in received and (chunk := peer.recv(65536)):
            received += chunk
        if received.startswith(b"HTTP/1.1 101"):
            head, rest = received.split(b"\r\n\r\n", 1)
            while len(rest) < 2 or len(rest) < 2 + rest[1]:
                rest += peer.recv(65536)
            received = head + b"\r\n\r\n" + rest[: 2 + rest[1]]
        else:
            while chunk := peer.recv(65536):
                received += chunk
    return re.sub(rb"(?im)^date: [^\r]*\r\n", b"", received)


def _handshake(*lines: str, method: str = "GET", target: str = "/ws/ask?token=t%20u") -> bytes:
    head = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", *lines]
    return ("\r\n".join(head) + "\r\n\r\n").encode("utf-8")


_UPGRADE = ("Upgrade: websocket", "Connection: Upgrade", f"Sec-WebSocket-Key: {KEY}")
_HANDSHAKES = {
    "accepted": _handshake(*_UPGRADE, "Sec-WebSocket-Version: 13", "Origin: http://x"),
    "no key": _handshake("Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13"),
    "another version": _handshake(*_UPGRADE, "Sec-WebSocket-Version: 8"),
    "two keys": _handshake(*_UPGRADE, f"Sec-WebSocket-Key: {KEY}", "Sec-WebSocket-Version: 13"),
    "a POST": _handshake(*_UPGRADE, "Sec-WebSocket-Version: 13", method="POST"),
    "a body": _handshake(*_UPGRADE, "Sec-WebSocket-Version: 13", "Content-Length: 3") + b"abc",
    "an empty body": _handshake(*_UPGRADE, "Sec-WebSocket-Version: 13", "Content-Length: 0"),
    "too many headers": _handshake(*_UPGRADE, "Sec-WebSocket-Version: 13", *["X: 1"] * 130),
    "a header too long": _handshake(*_UPGRADE, "Sec-WebSocket-Version: 13", "X: " + "v" * 9000),
    "a target too long": _handshake(*_UPGRADE, "Sec-WebSocket-Version: 13", target="/" * 9000),
    "a non-ASCII value": _handshake(*_UPGRADE, "Sec-WebSocket-Version: 13", "X-Name: café"),
}


@pytest.mark.parametrize("name", list(_HANDSHAKES))
async def test_every_handshake_is_answered_as_uvicorn_answers_it(name: str) -> None:
    request = _HANDSHAKES[name]
    _Counted.handed = 0
    async with serving(_describe, http=HttpProtocol, ws=_Counted) as port:
        ours = await anyio.to_thread.run_sync(_exchange, port, request)
    handed = _Counted.handed
    async with serving(_describe, http="httptools", ws=_Counted) as port:
        uvicorns = await anyio.to_thread.run_sync(_exchange, port, request)
    assert ours == uvicorns
    if name == "accepted":
        assert ours.startswith(b"HTTP/1.1 101")
        assert b"/ws/ask token=t%20u host=127.0.0.1;upgrade=websocket" in ours
    if name in ("accepted", "no key", "another version", "two keys"):
        assert handed == 1  # parsed once: refused by websockets' checks, not its parser
