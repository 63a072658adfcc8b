"""`uq hook`'s quick path: a permission prompt a rule decides, asked in one HTTP request.

A hook that sits in front of every tool call must cost little when the host already knows the
answer (a rule: docs/rules.md). So, before anything heavy is loaded, a permission prompt is sent
to `POST /api/decide` with the standard library alone: the same card and approval the full path
would send (`permission_call`), one request, one answer. When a rule decided it, its output is
printed here; in every other case (no rule, a plain question, no host, a refusal, anything odd)
nothing was stored and `None` sends the hook down its full path (`_hook_run`), which asks a
person and says what went wrong as it always does. Nothing here ever allows on a doubt: only an
`answered` settlement whose answer chose `Allow` allows.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any
from urllib.parse import urlsplit

from user_questions._hooks.approval_card import decision_of
from user_questions._hooks.events import Client, hook_origin, parse_event
from user_questions._hooks.permission_call import permission_call
from user_questions._host_link.url import parse_host_url
from user_questions.cli._hook_options import HookOptions
from user_questions.errors import UserQuestionError

__all__ = ["DECIDE_PATH", "MAX_REPLY_BYTES", "rule_output"]

DECIDE_PATH = "api/decide"
"""Where a host lets its rules decide an approval, relative to its base URL."""
MAX_REPLY_BYTES = 4 * 1024 * 1024
"""The largest answer read; a larger one is no decision (a settled card is far smaller)."""


def rule_output(client: Client, options: HookOptions, text: str) -> dict[str, Any] | None:
    """The hook's output for the event in `text` when a rule of the host decided it; `None`
    when a person is to be asked (or anything went wrong), which the full path then does."""
    try:
        return _decided(client, options, text)
    except (OSError, UserQuestionError, ValueError, TypeError, AttributeError):
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
    body = {
        "type": "ask",
        "rpcId": os.urandom(16).hex(),  # `secrets` costs milliseconds to import
        "sessionId": origin.session or f"uq@{socket.gethostname()}",
        "questions": [call.card()],
        "origin": {"client": origin.client, "cwd": origin.cwd},
        "approval": {
            "tool": call.tool,
            "input": call.arguments,
            "agent": origin.client,
            "cwd": origin.cwd,
        },
    }
    reply = _post(base + DECIDE_PATH, token, json.dumps(body, ensure_ascii=False), options)
    payload = None if reply is None else reply.get("payload")
    if not isinstance(payload, dict) or payload.get("outcome") != "answered":
        return None
    answers = (payload.get("answer") or {}).get("answers") or [{}]
    answer = answers[0]
    return call.output(decision_of(answer.get("selected"), answer.get("custom")))


def _post(url: str, token: str, body: str, options: HookOptions) -> dict[str, Any] | None:
    """The JSON object a 200 answer holds; `None` for any other answer.

    HTTP/1.1 on a socket, one request and `Connection: close`: `http.client` alone (its email
    parser) would take a third of the path's time budget to import."""
    parts = urlsplit(url)
    assert parts.hostname is not None  # `parse_host_url` refuses a URL without one
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    data = body.encode("utf-8")
    request = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode("latin-1") + data
    with socket.create_connection((parts.hostname, port), options.connect_timeout) as raw:
        if https:
            from user_questions._host_link.tls import client_context  # ssl only when it is needed

            context = client_context(options.ca)
            with context.wrap_socket(raw, server_hostname=parts.hostname) as tls:
                return _exchange(tls, request)
        return _exchange(raw, request)


def _exchange(connection: socket.socket, request: bytes) -> dict[str, Any] | None:
    connection.sendall(request)
    received = bytearray()
    while chunk := connection.recv(65536):
        received += chunk
        if len(received) > MAX_REPLY_BYTES:
            return None
    head, _, content = bytes(received).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    if status_line.split(" ")[1:2] != ["200"]:
        return None
    headers = dict(line.lower().partition(":")[::2] for line in header_lines)
    if "chunked" in headers.get("transfer-encoding", ""):
        return None  # never sent for this answer; read as no decision rather than misread
    reply = json.loads(content)
    return reply if isinstance(reply, dict) else None
