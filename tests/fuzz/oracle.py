"""What every reply to a fuzzer's input must be: a documented status or frame, with a code.

Each check names the broken promise by kind when it fails (`FuzzFailure.kind`): `dropped` (the
socket closed where the protocol keeps it open), `wrong-close`, `no-reply`, `undocumented` (not
a reply the protocol describes), `internal-error` (`INTERNAL_ERROR`, `STORE_UNAVAILABLE`,
`BAD_STORE` or an HTTP 500: a healthy host never says them), `no-headers`, `long-message`,
`accepted-malformed`, `refused-valid`, `wrong-code`, `undeliverable` (text no socket can
carry), `host-down` (a real ask failed afterwards) and `log` (a traceback or an error in the
host's log). Every failure goes through `fail`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from tests.fuzz.strategies import Probe
from user_questions import ErrorCode, ToolResult
from user_questions.frames import MAX_MESSAGE_LENGTH
from user_questions.host.gate.security import CONTENT_SECURITY_POLICY

__all__ = [
    "FuzzFailure",
    "Reply",
    "check_asker_reply",
    "check_http_reply",
    "check_page_reply",
    "check_tool_result",
    "fail",
]

UNHEALTHY = frozenset({ErrorCode.INTERNAL_ERROR, ErrorCode.STORE_UNAVAILABLE, ErrorCode.BAD_STORE})
"""Codes a host with a working store never gives, whatever it is sent."""
STATUS_OF: dict[str, int] = {
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.FORBIDDEN_ORIGIN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.REQUEST_TOO_LARGE: 413,
    ErrorCode.PAGE_MISSING: 500,
    ErrorCode.INTERNAL_ERROR: 500,
    ErrorCode.STORE_UNAVAILABLE: 503,
}
"""The HTTP status of each code, as docs/protocol.md lists them; any other code is a 400."""
TOO_LARGE_CLOSE_CODE = 1009
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
TOOL_CODES: dict[str, str] = {ErrorCode.BAD_REQUEST: ErrorCode.INVALID_ARGS}
"""A frame's code and the tool's for the same fault: the tool reads its own arguments."""


class FuzzFailure(AssertionError):
    """A reply broke a promise of the protocol."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


def fail(kind: str, detail: str) -> None:
    """Report a broken promise of the kind `kind` (see the module docstring)."""
    raise FuzzFailure(kind, detail)


@dataclass(frozen=True)
class Reply:
    """What a socket said to one frame: a frame, or its closing (code), or nothing in time."""

    frame: Any = None
    closed: int | None = None
    timed_out: bool = False


def _documented_code(code: object, where: str) -> None:
    if code in UNHEALTHY:
        fail("internal-error", f"{where}: {code}")
    elif not isinstance(code, str) or code not in ErrorCode.__members__:
        fail("undocumented", f"{where}: code {code!r} is not an ErrorCode")


def _message(message: object, where: str) -> None:
    if not isinstance(message, str):
        fail("undocumented", f"{where}: message {message!r} is not a string")
    elif len(message) > MAX_MESSAGE_LENGTH:
        fail("long-message", f"{where}: a message of {len(message)} characters")


def _socket_reply(probe: Probe, reply: Reply, where: str) -> dict[str, Any] | None:
    """The reply frame, when the socket gave one; the close and timeout rules checked."""
    if probe.too_large:
        if reply.closed != TOO_LARGE_CLOSE_CODE:
            fail("wrong-close", f"{where}: a frame over the limit got {reply}")
        return None
    if reply.timed_out:
        fail("no-reply", f"{where}: nothing in time")
    elif reply.closed is not None:
        fail("dropped", f"{where}: closed with {reply.closed}")
    elif not isinstance(reply.frame, dict) or not isinstance(reply.frame.get("payload"), dict):
        fail("undocumented", f"{where}: {reply.frame!r}")
    else:
        frame: dict[str, Any] = reply.frame
        if set(frame) - {"rpcId", "payload"} or not isinstance(frame.get("rpcId", ""), str):
            fail("undocumented", f"{where}: {frame!r}")
        return frame
    return None


def check_asker_reply(probe: Probe, reply: Reply) -> None:
    """The reply to one `/ws/ask` frame."""
    frame = _socket_reply(probe, reply, "/ws/ask")
    if frame is None:
        return
    payload = frame["payload"]
    kind = payload.get("type")
    if kind not in ("ask/pending", "ask/settled", "ask/error", "pong"):
        fail("undocumented", f"/ws/ask: {frame!r}")
    if kind == "ask/error":
        _documented_code(payload.get("code"), "/ws/ask")
        _message(payload.get("message"), "/ws/ask")
    if probe.refused and kind in ("ask/pending", "ask/settled"):
        fail("accepted-malformed", f"/ws/ask: a {probe.label} input got {kind}")
    if probe.code is not None and (kind, payload.get("code")) != ("ask/error", probe.code):
        fail("wrong-code", f"/ws/ask: a {probe.label} input got {payload}, not {probe.code}")
    if probe.accepted and kind != "ask/pending":
        fail("refused-valid", f"/ws/ask: a valid ask got {payload}")


def check_page_reply(probe: Probe, reply: Reply) -> None:
    """The reply to one `/ws` frame (the requests the host pushes meanwhile aside)."""
    frame = _socket_reply(probe, reply, "/ws")
    if frame is None:
        return
    payload = frame["payload"]
    kind = payload.get("type")
    if kind == "error":
        if "rpcId" in frame:
            fail("undocumented", f"/ws: an error frame names an rpcId: {frame!r}")
        _documented_code(payload.get("code"), "/ws")
        _message(payload.get("message"), "/ws")
        accepted = False
    elif kind == "client-response/receipt":
        accepted = _receipt(payload, "/ws")
    elif kind != "pong":
        fail("undocumented", f"/ws: {frame!r}")
        return
    else:
        accepted = False
    _expected(probe, accepted, payload.get("code"), payload.get("reason"), "/ws")


def _receipt(receipt: dict[str, Any], where: str) -> bool:
    accepted = receipt.get("accepted")
    if accepted is True:
        return True
    if accepted is not False or receipt.get("reason") not in ("not-pending", "bad-response"):
        fail("undocumented", f"{where}: receipt {receipt!r}")
    _message(receipt.get("message"), where)
    return False


def _expected(probe: Probe, accepted: bool, code: object, reason: object, where: str) -> None:
    if probe.refused and accepted:
        fail("accepted-malformed", f"{where}: a {probe.label} input was accepted")
    if probe.code is not None and code != probe.code and reason != "bad-response":
        fail("wrong-code", f"{where}: a {probe.label} input got {code or reason}, not {probe.code}")
    if probe.accepted and not accepted:
        fail("refused-valid", f"{where}: a valid response was not accepted ({code or reason})")


def check_http_reply(probe: Probe, response: httpx.Response) -> None:
    """The answer to one `POST /api/respond`."""
    where = f"POST /api/respond {response.status_code}"
    for name, value in SECURITY_HEADERS.items():
        if response.headers.get(name) != value:
            fail("no-headers", f"{where}: {name} is {response.headers.get(name)!r}")
    if response.status_code >= 500:
        fail("internal-error", f"{where}: {response.text[:200]}")
        return
    try:
        body = json.loads(response.content)
    except ValueError:
        fail("undocumented", f"{where}: not JSON: {response.text[:200]!r}")
        return
    if probe.too_large:
        if (response.status_code, body.get("error", {}).get("code")) != (413, "REQUEST_TOO_LARGE"):
            fail("wrong-close", f"{where}: a body over the limit got {body}")
        return
    if response.status_code == 200:
        _expected(probe, _receipt(body, where), None, body.get("reason"), where)
        return
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        fail("undocumented", f"{where}: {body!r}")
        return
    code = error.get("code")
    _documented_code(code, where)
    _message(error.get("message"), where)
    if STATUS_OF.get(str(code), 400) != response.status_code:
        fail("undocumented", f"{where}: {code} is not documented with this status")
    _expected(probe, False, code, None, where)


def check_tool_result(probe: Probe, result: ToolResult) -> None:
    """What `ctx.tools.execute("ask_user_question", ...)` returned for one input."""
    try:
        json.dumps(result.content, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        fail("undeliverable", f"the model would be sent {result.text!r}")
    if not result.is_error:
        if probe.refused:
            fail("accepted-malformed", f"a {probe.label} input was answered: {result.text}")
        return
    info = (result.error or {}).get("info")
    if not isinstance(info, dict):
        fail("internal-error", f"a tool failure without a code: {result.text[:200]}")
        return
    _documented_code(info.get("code"), "ask_user_question")
    expected = None if probe.code is None else TOOL_CODES.get(probe.code, probe.code)
    if expected is not None and info.get("code") != expected:
        fail("wrong-code", f"a {probe.label} input got {info}, not {expected}")
    if probe.accepted:
        fail("refused-valid", f"valid arguments failed: {result.text[:200]}")
