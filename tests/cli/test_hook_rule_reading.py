"""`uq hook`'s quick path reads a reply to `POST /api/decide` as the full path reads a settlement:
whatever comes back, it allows (or denies) only what the full path would.

The quick path runs for real (`rule_output`, over a socket to a one-reply host on loopback); the
full path's reading of the same settlement is the one `RemoteProvider` and the service make of an
`ask/settled` frame on `/ws/ask`: the frame model, this request's rpcId, the outcome, the
service's check of the answer against the card, and the card's decision.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.e2e.test_fail_closed_hooks import event_of
from user_questions._checks import check_answer
from user_questions._hooks.approval_card import ALLOW, ALLOW_ALWAYS, DENY, ApprovalDecision
from user_questions._hooks.permission_call import PermissionCall, permission_call
from user_questions.approvals import decision_for
from user_questions.cli._hook_options import HookOptions
from user_questions.cli._hook_rule import rule_output
from user_questions.errors import UserQuestionError
from user_questions.frames import AskerReply, AskSettled
from user_questions.outcomes import Outcome
from user_questions.types import AskUserQuestionItem

if TYPE_CHECKING:  # a name for mypy only
    from user_questions._hooks.events import Client

OURS = "our-rpcId-goes-here-0123456789ab"
"""Stands for the rpcId the quick path chose (32 characters, as long), in a generated reply: the
host puts the real one in, which keeps the reply's `Content-Length` right."""
SUGGESTED = [{"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow"}]


class OneReplyHost:
    """A host on loopback that answers each request with `reply`, the request's own rpcId put
    where the reply says `OURS`; it keeps the last request's rpcId."""

    def __init__(self) -> None:
        self.reply = b""
        self.rpc_id = ""
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            with connection:
                received = b""
                while b"\r\n\r\n" not in received:
                    received += connection.recv(65536)
                head, _, body = received.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                while len(body) < length:
                    body += connection.recv(65536)
                self.rpc_id = json.loads(body)["rpcId"]
                ours = json.dumps(self.rpc_id).encode()
                connection.sendall(self.reply.replace(json.dumps(OURS).encode(), ours))

    def close(self) -> None:
        self._socket.close()


@pytest.fixture(scope="module")
def host() -> Iterator[OneReplyHost]:
    running = OneReplyHost()
    yield running
    running.close()


def full_path_reading(body: bytes, rpc_id: str, card: dict[str, Any]) -> ApprovalDecision | None:
    """What the full path decides on receiving `body` as a frame on `/ws/ask`; `None` for no
    decision (a frame it ignores or fails the ask on)."""
    try:
        reply = AskerReply.model_validate_json(body)
    except ValidationError:
        return None
    payload = reply.payload
    if reply.rpc_id != rpc_id or not isinstance(payload, AskSettled):
        return None
    if payload.outcome != Outcome.ANSWERED or payload.answer is None:
        return None
    question = AskUserQuestionItem.model_validate(card)
    try:
        return decision_for(question, check_answer([question], payload.answer))
    except UserQuestionError:
        return None


def mostly(good: Any, *wrong: Any) -> st.SearchStrategy[Any]:
    """`good` nine times in ten, else one of `wrong`: each part of a reply is mostly right, so
    that replies wrong in one part only are common."""
    return st.sampled_from([good] * 9 * max(1, len(wrong)) + list(wrong))


@st.composite
def items(draw: st.DrawFn) -> Any:
    """An answer item: mostly the card's, each field possibly wrong."""
    item: dict[str, Any] = {}
    if draw(mostly(True, False)):
        item["id"] = draw(mostly("approval", "other", "", None))
    if draw(mostly(True, False)):
        labels = st.sampled_from([ALLOW, ALLOW_ALWAYS, DENY, "allow", "Allow ", "Other"])
        item["selected"] = draw(
            st.lists(labels, min_size=1, max_size=1) | st.lists(labels, max_size=3) | st.none()
        )
    if draw(st.integers(0, 3)) == 0:
        item["custom"] = draw(st.sampled_from([None, "", "  ", "not that", "\x00", 7]))
    return item


@st.composite
def documents(draw: st.DrawFn) -> Any:
    """A reply's JSON: mostly a settlement of this request, each part possibly wrong."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.recursive(st.none() | st.booleans() | st.text(max_size=5), st.lists))
    payload: dict[str, Any] = {
        "type": draw(mostly("ask/settled", "ask/error", "ask/pending", "x")),
        "outcome": draw(mostly("answered", "dismissed", "withdrawn", 1)),
    }
    if draw(mostly(True, False)):
        answers = draw(mostly(1, 0, 2)) * [None]
        answers = [draw(items()) for _ in answers]
        payload["answer"] = draw(mostly({"answers": answers}, answers, None, {}))
    reply: dict[str, Any] = {"payload": payload}
    if draw(mostly(True, False)):
        reply["rpcId"] = draw(mostly(OURS, "someone else's", None))
    return reply


@st.composite
def replies(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """An HTTP reply (its bytes) and its body: mostly an HTTP/1.1 200 of JSON, each part of
    the framing possibly wrong."""
    body = json.dumps(draw(documents())).encode()
    version = draw(mostly("HTTP/1.1", "HTTP/1.0", "HTTP/2"))
    status = draw(mostly("200 OK", "204 No Content", "302 Found", "500 Error"))
    length = len(body) + draw(mostly(0, -3, 4))
    headers = [f"Content-Length: {length}", "Content-Type: application/json"]
    wrong = [
        "Content-Type: text/plain",
        "Transfer-Encoding: chunked",
        " folded",
        "Content-Length: 1",
    ]
    headers = draw(mostly(headers, headers[:1], headers[1:], *[[*headers, one] for one in wrong]))
    head = "\r\n".join([f"{version} {status}", *draw(st.permutations(headers)), "X-Other: 1"])
    return head.encode() + b"\r\n\r\n" + body, body


CLIENTS: dict[str, tuple[Client, list[dict[str, Any]]]] = {
    "codex": ("codex", []),
    "claude": ("claude", []),
    "claude with suggestions": ("claude", SUGGESTED),
}
"""Each card: Codex's and Claude Code's (without "don't ask again"), and Claude Code's with it."""


def ask_quick_path(host: OneReplyHost, case: str, reply: bytes) -> tuple[Any, PermissionCall]:
    """The quick path's output for `case`'s prompt when the host answers `reply`, and the call."""
    client, suggested = CLIENTS[case]
    event = json.loads(event_of(client))
    if suggested:
        event["permission_suggestions"] = suggested
    call = permission_call(client, event)
    assert call is not None
    host.reply = reply
    options = HookOptions(f"http://127.0.0.1:{host.port}/?token=t", None, None, None, 5.0)
    return rule_output(client, options, json.dumps(event)), call


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reply=replies(), case=st.sampled_from(sorted(CLIENTS)))
def test_the_quick_path_decides_only_what_the_full_path_would(
    host: OneReplyHost, reply: tuple[bytes, bytes], case: str
) -> None:
    output, call = ask_quick_path(host, case, reply[0])
    decided = None if output is None else output["hookSpecificOutput"]["decision"]["behavior"]
    event(f"quick path: {decided or 'no decision'}")
    if output is None:
        return  # no decision: the full path asks
    body = reply[1].replace(json.dumps(OURS).encode(), json.dumps(host.rpc_id).encode())
    full = full_path_reading(body, host.rpc_id, call.card())
    assert full is not None, f"the quick path decided {output} where the full path would not"
    assert output == call.output(full)


@pytest.mark.parametrize(
    ("case", "chosen", "decision"),
    [
        ("codex", ALLOW, {"behavior": "allow"}),
        ("codex", DENY, {"behavior": "deny", "message": "The user denied this Bash call."}),
        (
            "claude with suggestions",
            ALLOW_ALWAYS,
            {"behavior": "allow", "updatedPermissions": SUGGESTED},
        ),
    ],
)
def test_the_settlement_of_this_request_is_decided_on_the_quick_path(
    host: OneReplyHost, case: str, chosen: str, decision: dict[str, Any]
) -> None:
    """The other side of the property: the quick path does decide, where it must."""
    answer = {"answers": [{"id": "approval", "selected": [chosen]}]}
    document = {
        "rpcId": OURS,
        "payload": {"type": "ask/settled", "outcome": "answered", "answer": answer},
    }
    text = json.dumps(document).encode()
    reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
    output, _ = ask_quick_path(host, case, reply % (len(text), text))
    assert output == {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}
    }
