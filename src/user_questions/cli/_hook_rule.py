"""`uq hook`'s quick path: a permission prompt a rule decides, asked in one HTTP request.

A hook that sits in front of every tool call must cost little when the host already knows the
answer (a rule: docs/rules.md). So, before anything heavy is loaded, a permission prompt is sent
to `POST /api/decide` with the standard library alone: the same card and approval the full path
would send (`permission_call`), one request, one answer. When a rule decided it, its output is
printed here; in every other case (no rule, a plain question, no host, a refusal, a redirect,
anything odd) nothing was stored and `None` sends the hook down its full path (`_hook_run`),
which asks a person and says what went wrong as it always does.

Nothing here ever allows, or denies, on a doubt. The request as a whole (connection, TLS, sending,
the reply) has `connect_budget()` seconds, however slowly the host answers. Only a reply that is
HTTP/1.1 `200` with a JSON body of exactly its `Content-Length` is read, and only as
`settlement.settled_decision` reads every settlement: the answered settlement of this very
request, answering exactly its card with one of the card's own options.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
from urllib.parse import urlsplit

from user_questions._hooks.events import hook_origin, parse_event
from user_questions._hooks.permission_call import permission_call
from user_questions._hooks.settlement import settled_decision
from user_questions._host_link.url import parse_host_url
from user_questions._reading.json_reader import load_json
from user_questions.cli._hook_options import HookOptions

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

    from user_questions._hooks.events import Client

__all__ = ["DECIDE_PATH", "MAX_REPLY_BYTES", "read_reply", "rule_output"]

DECIDE_PATH = "api/decide"
"""Where a host lets its rules decide an approval, relative to its base URL."""
MAX_REPLY_BYTES = 4 * 1024 * 1024
"""The largest answer read; a larger one is no decision (a settled card is far smaller)."""
_STATUS_OK = re.compile(r"HTTP/1\.1 200(?: [^\r\n]*)?")
_FIELD = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*")
"""One header line (RFC 9110's token, then the value without its surrounding blanks)."""
_ONCE = ("content-length", "content-type", "transfer-encoding")
"""The headers that say how to read the body: one that comes twice is no decision."""


def rule_output(client: Client, options: HookOptions, text: str) -> dict[str, Any] | None:
    """The hook's output for the event in `text` when a rule of the host decided it; `None`
    when a person is to be asked (or anything went wrong), which the full path then does."""
    try:
        return _decided(client, options, text)
    except Exception:  # no decision, whatever it was: the full path asks and says what is wrong
        return None


def _decided(client: Client, options: HookOptions, text: str) -> dict[str, Any] | None:
    event = parse_event(text)
    call = None if event is None else permission_call(client, event)
    if event is None or call is None or not options.url:
        return None
    base, _, url_token = parse_host_url(options.url)
    token = options.token or url_token
    if not token:
        return None
    origin = hook_origin(client, event)
    rpc_id = os.urandom(16).hex()  # `secrets` costs milliseconds to import
    card = call.card()
    body = {
        "type": "ask",
        "rpcId": rpc_id,
        "sessionId": origin.session or f"uq@{socket.gethostname()}",
        "questions": [card],
        "origin": {"client": origin.client, "cwd": origin.cwd},
        "approval": {
            "tool": call.tool,
            "input": call.arguments,
            "agent": origin.client,
            "cwd": origin.cwd,
        },
    }
    deadline = time.monotonic() + options.connect_budget()
    reply = _post(
        base + DECIDE_PATH, token, json.dumps(body, ensure_ascii=False), options.ca, deadline
    )
    decision = None if reply is None else settled_decision(read_reply(reply), rpc_id, card)
    return None if decision is None else call.output(decision)


def read_reply(received: bytes) -> object:
    """The JSON document of an HTTP reply to `/api/decide`, when it is an HTTP/1.1 `200` whose
    body is exactly its `Content-Length` of `application/json`; `None` for anything else (a
    redirect, an error, HTTP/1.0, a chunked or mislabelled body, a header given twice, bytes
    beyond the length, JSON `_json.load_json` refuses)."""
    head, separator, content = received.partition(b"\r\n\r\n")
    if not separator:
        return None
    status, *lines = head.decode("latin-1").split("\r\n")
    if _STATUS_OK.fullmatch(status) is None:
        return None
    headers: dict[str, str] = {}
    for line in lines:
        field = _FIELD.fullmatch(line)
        if field is None:  # a folded or malformed line: the head cannot be read for sure
            return None
        name, value = field[1].lower(), field[2]
        if name in _ONCE and name in headers:
            return None
        headers[name] = value
    media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
    length = headers.get("content-length", "")
    if "transfer-encoding" in headers or media_type != "application/json":
        return None
    if not length.isdigit() or not length.isascii() or int(length) != len(content):
        return None
    return load_json(content)


def _post(url: str, token: str, body: str, ca: str | None, deadline: float) -> bytes | None:
    """Everything the host sent back to one POST, until it closed the connection; `None` when it
    sent more than `MAX_REPLY_BYTES`. Raises `TimeoutError` once `deadline` passes, whatever the
    host is doing.

    HTTP/1.1 on a socket, one request and `Connection: close`: `http.client` alone (its email
    parser) would take a third of the path's time budget to import."""
    parts = urlsplit(url)
    assert parts.hostname is not None  # `parse_host_url` refuses a URL without one
    https = parts.scheme == "https"
    data = body.encode("utf-8")
    request = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode("latin-1") + data
    with _connect(parts.hostname, parts.port or (443 if https else 80), deadline) as raw:
        if https:
            from user_questions._host_link.tls import client_context  # ssl only when it is needed

            raw.settimeout(_left(deadline))  # the whole handshake, not each of its reads
            with client_context(ca).wrap_socket(raw, server_hostname=parts.hostname) as tls:
                return _exchange(tls, request, deadline)
        return _exchange(raw, request, deadline)


def _connect(host: str, port: int, deadline: float) -> socket.socket:
    """A connection to `host`, each of its addresses tried within what is left until `deadline`."""
    problem: OSError = TimeoutError("no address to connect to")
    # An ASCII name goes as bytes: as text, `getaddrinfo` encodes it with the `idna` codec,
    # whose import (`stringprep`, `unicodedata`) costs the hook a millisecond.
    name = host.encode("ascii") if host.isascii() else host
    addresses = socket.getaddrinfo(name, port, 0, socket.SOCK_STREAM)
    for family, kind, protocol, _, address in addresses:
        connection = socket.socket(family, kind, protocol)
        try:
            connection.settimeout(_left(deadline))
            connection.connect(address)
        except OSError as error:
            connection.close()
            problem = error
        else:
            return connection
    raise problem


def _exchange(connection: socket.socket, request: bytes, deadline: float) -> bytes | None:
    """Send `request`, then read until the host closes. Each step may take only what is left
    until `deadline` (CPython counts a TLS read, a handshake and `sendall` against one deadline),
    so a host that drips its answer a byte at a time is given up on in time."""
    connection.settimeout(_left(deadline))
    connection.sendall(request)
    received = bytearray()
    while True:
        connection.settimeout(_left(deadline))
        chunk = connection.recv(65536)
        if not chunk:
            return bytes(received)
        received += chunk
        if len(received) > MAX_REPLY_BYTES:
            return None


def _left(deadline: float) -> float:
    """Seconds left until `deadline`; `TimeoutError` when none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the host did not answer in time")
    return left
