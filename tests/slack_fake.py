"""Slack's Web API and Socket Mode on loopback, written from the published reference, for a real
host to connect to: `POST /api/<method>` with `Authorization: Bearer <token>` and a JSON body,
answered `{"ok": true, ...}` or `{"ok": false, "error": "invalid_auth"}` (HTTP 200), a rate
limit as HTTP 429 `{"ok": false, "error": "ratelimited"}` with `Retry-After`; and the WebSocket
that `apps.connections.open` names (a ticket, used once), which says `hello`, then sends
envelopes `{"envelope_id", "type", "payload", "accepts_response_payload"}` that must be
acknowledged (`{"envelope_id": ...}`) within 3 seconds, and `disconnect` when it is refreshed.

It keeps what an app sends (messages with their blocks, edits, ephemeral messages, modals),
refuses what Slack refuses (the wrong token: `invalid_auth`, a bot token opening a connection:
`not_allowed_token_type`; blocks over Slack's limits: `invalid_blocks`; an unknown or used
`trigger_id`; an edit of no message: `message_not_found`), and lets a test play the users: `dm`
a text, `click` a button, `submit` a modal. An envelope not acknowledged is sent again on the next
connection, as Slack retries it. `rate_limit(method)` answers the next call 429;
`disconnect()` asks the app to reconnect; `drop()` closes the socket without a word.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

APP_TOKEN = "xapp-1-A0TESTAPP-1-fakeappsecret"
BOT_TOKEN = "xoxb-1-2-fakebotsecret"
BOT_USER = "U0BOT"
ACK_SECONDS = 3.0
TRIGGER_SECONDS = 3.0
WAIT_SECONDS = 15.0
_BOT_METHODS = frozenset(
    {"auth.test", "chat.postMessage", "chat.update", "chat.postEphemeral", "views.open"}
)
_LINK = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")


def shown(mrkdwn: str) -> str:
    """What a user sees of `mrkdwn`: `<url|label>` as its label, `<url>`, `<@U1>` as written
    inside, then the three entities unescaped."""
    text = _LINK.sub(lambda m: m[2] if m[2] is not None else m[1], mrkdwn)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


@dataclass
class Message:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    edits: int = 0

    @property
    def buttons(self) -> list[dict[str, Any]]:
        return [
            element
            for block in self.blocks
            if block["type"] == "actions"
            for element in block["elements"]
            if element["type"] == "button"
        ]

    @property
    def labels(self) -> list[str]:
        return [button["text"]["text"] for button in self.buttons]

    @property
    def shown(self) -> str:
        """The blocks' texts as the user sees them (plain text is shown as it is)."""
        return "\n".join(
            shown(text) if kind == "mrkdwn" else text
            for block in self.blocks
            for kind, text in _kinds(block)
        )


def _kinds(block: dict[str, Any]) -> list[tuple[str, str]]:
    if isinstance(block.get("text"), dict):
        return [(block["text"]["type"], block["text"]["text"])]
    if block["type"] == "context":
        return [(element["type"], element["text"]) for element in block["elements"]]
    return []


@dataclass
class View:
    user: str
    view: dict[str, Any]


@dataclass
class FakeSlack:
    url: str = ""
    """The Web API's base: methods are at `{url}/{method}`."""
    socket_port: int = 0
    messages: list[Message] = field(default_factory=list)
    ephemerals: list[tuple[str, str, str]] = field(default_factory=list)
    """`(channel, user, text)` of each ephemeral message."""
    views: list[View] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    connections: int = 0
    """WebSocket connections made, with a valid ticket."""
    acks: dict[str, float] = field(default_factory=dict)
    """Seconds from each envelope's (latest) sending to its acknowledgement."""
    late_acks: list[str] = field(default_factory=list)
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Every envelope sent, by id."""
    refused: list[tuple[str, str]] = field(default_factory=list)
    """`(method, error)` of every call answered `ok: false`."""
    _tickets: set[str] = field(default_factory=set)
    _triggers: dict[str, tuple[str, float]] = field(default_factory=dict)
    _unacked: dict[str, tuple[dict[str, Any], float]] = field(default_factory=dict)
    _socket: ServerConnection | None = None
    _faults: dict[str, int] = field(default_factory=dict)
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Condition = field(default_factory=threading.Condition)

    # -- what a test does -----------------------------------------------------------------------

    @staticmethod
    def channel_of(user: str) -> str:
        """The direct-message channel of `user` with the app."""
        return "D" + user[1:]

    def dm(self, user: str, text: str) -> str:
        """User `user` writes `text` in their direct messages with the app; the envelope id."""
        ts = self._ts()
        return self.push("events_api", {
            "type": "event_callback", "team_id": "T0TEAM", "api_app_id": "A0TESTAPP",
            "event_id": f"Ev{next(self._counter)}", "event_time": int(time.time()),
            "event": {"type": "message", "channel_type": "im", "channel": self.channel_of(user),
                      "user": user, "text": text, "ts": ts, "event_ts": ts},
        })  # fmt: skip

    def click(self, user: str, message: Message, button: str) -> str:
        """User `user` clicks the button of `message` whose text (a toggle's without its box)
        begins with `button`; the envelope's id."""
        (element,) = [
            b
            for b in message.buttons
            if b["text"]["text"].removeprefix("☐ ").removeprefix("☑ ").startswith(button)
        ]
        trigger = f"trigger{next(self._counter)}"
        with self._lock:
            self._triggers[trigger] = (user, time.monotonic())
        return self.push("interactive", {
            "type": "block_actions", "trigger_id": trigger, "api_app_id": "A0TESTAPP",
            "user": {"id": user, "username": user.lower(), "team_id": "T0TEAM"},
            "team": {"id": "T0TEAM"}, "channel": {"id": message.channel, "name": "directmessage"},
            "container": {"type": "message", "message_ts": message.ts,
                          "channel_id": message.channel, "is_ephemeral": False},
            "message": {"type": "message", "ts": message.ts, "text": message.text},
            "response_url": f"{self.url}/response/{trigger}",
            "actions": [{"type": "button", "action_id": element["action_id"],
                         "block_id": "b", "value": element.get("value"),
                         "text": element["text"], "action_ts": self._ts()}],
        })  # fmt: skip

    def submit(self, user: str, view: View, text: str) -> None:
        """User `user` types `text` into the modal `view`'s input (in place of what it held)
        and presses its submit button. Slack's client sends no more than the input's
        `max_length`, nor an empty required input: neither can be typed here."""
        (field,) = [block for block in view.view["blocks"] if block["type"] == "input"]
        element = field["element"]
        assert len(text) <= element.get("max_length", 3000), "Slack's field stops at max_length"
        assert text or field.get("optional"), "Slack's field is required"
        value = {"type": "plain_text_input", "value": text or None}
        values = {field["block_id"]: {element["action_id"]: value}}
        self.push("interactive", {
            "type": "view_submission", "api_app_id": "A0TESTAPP",
            "user": {"id": user, "team_id": "T0TEAM"}, "team": {"id": "T0TEAM"},
            "view": {**view.view, "id": "V1", "state": {"values": values}},
        }, accepts_response_payload=True)  # fmt: skip

    def push(
        self, kind: str, payload: dict[str, Any], *, accepts_response_payload: bool = False
    ) -> str:
        """Send an envelope to the app (now, or once it connects); its id."""
        envelope_id = f"env-{next(self._counter)}"
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": accepts_response_payload,
            **({"retry_attempt": 0, "retry_reason": ""} if kind == "events_api" else {}),
        }
        self._send(envelope)
        return envelope_id

    def send_again(self, envelope_id: str) -> None:
        """Send the envelope `envelope_id` once more, as Slack retries one it thinks was lost."""
        self._send(self.sent[envelope_id])

    def _send(self, envelope: dict[str, Any]) -> None:
        envelope_id = envelope["envelope_id"]
        with self._lock:
            self.sent[envelope_id] = envelope
            self._unacked[envelope_id] = (envelope, time.monotonic())
            socket = self._socket
        if socket is not None:
            with contextlib.suppress(ConnectionClosed):
                socket.send(json.dumps(envelope))

    def rate_limit(self, method: str) -> None:
        with self._lock:
            self._faults[method] = self._faults.get(method, 0) + 1

    def disconnect(self) -> None:
        """Ask the app to reconnect, as Slack does before refreshing a connection."""
        socket = self._socket
        assert socket is not None
        socket.send(json.dumps({"type": "disconnect", "reason": "refresh_requested",
                                "debug_info": {"host": "fake"}}))  # fmt: skip

    def drop(self) -> None:
        """Close the connection without a word (a network failure)."""
        socket = self._socket
        assert socket is not None
        socket.close(1011)

    def wait(self, what: Callable[[], Any], seconds: float = WAIT_SECONDS) -> Any:
        """`what()` once it is truthy (`AssertionError` after `seconds`)."""
        deadline = time.monotonic() + seconds
        with self._lock:
            while not (found := what()):
                left = deadline - time.monotonic()
                assert left > 0, f"not in time; messages: {self.messages}"
                self._lock.wait(min(left, 0.1))
            return found

    def messages_in(self, channel: str) -> list[Message]:
        return [m for m in self.messages if m.channel == channel]

    def ephemerals_for(self, user: str) -> list[str]:
        return [text for _, to, text in self.ephemerals if to == user]

    def acked(self, envelope_id: str) -> None:
        self.wait(lambda: envelope_id in self.acks)

    # -- Socket Mode ----------------------------------------------------------------------------

    def _connected(self, socket: ServerConnection) -> None:
        query = parse_qs(urlsplit(socket.request.path if socket.request else "").query)
        ticket = (query.get("ticket") or [""])[0]
        with self._lock:
            if ticket not in self._tickets:
                socket.close(1008, "invalid ticket")
                return
            self._tickets.discard(ticket)
            self.connections += 1
            self._socket = socket
            again = [envelope for envelope, _ in self._unacked.values()]
            self._lock.notify_all()
        socket.send(json.dumps({
            "type": "hello", "num_connections": 1,
            "debug_info": {"host": "fake", "approximate_connection_time": 3600},
            "connection_info": {"app_id": "A0TESTAPP"},
        }))  # fmt: skip
        for envelope in again:  # sent before, never acknowledged: Slack retries it
            if "retry_attempt" in envelope:
                envelope["retry_attempt"] += 1
                envelope["retry_reason"] = "timeout"
            with self._lock:
                self._unacked[envelope["envelope_id"]] = (envelope, time.monotonic())
            socket.send(json.dumps(envelope))
        try:
            for raw in socket:
                ack = json.loads(raw)
                with self._lock:
                    sent = self._unacked.pop(str(ack.get("envelope_id")), None)
                    if sent is not None:
                        took = time.monotonic() - sent[1]
                        self.acks[ack["envelope_id"]] = took
                        if took > ACK_SECONDS:
                            self.late_acks.append(ack["envelope_id"])
                    self._lock.notify_all()
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                if self._socket is socket:
                    self._socket = None
                self._lock.notify_all()

    # -- the Web API ----------------------------------------------------------------------------

    def handle(self, method: str, token: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.calls.append(method)
            try:
                if self._faults.get(method):
                    self._faults[method] -= 1
                    return 429, {"ok": False, "error": "ratelimited"}
                status, answer = self._method(method, token, body)
                if not answer.get("ok"):
                    self.refused.append((method, str(answer.get("error"))))
                return status, answer
            finally:
                self._lock.notify_all()

    def _method(self, method: str, token: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not token:
            return _error("not_authed")
        if token not in (APP_TOKEN, BOT_TOKEN):
            return _error("invalid_auth")
        if method == "apps.connections.open":
            if token != APP_TOKEN:
                return _error("not_allowed_token_type")
            ticket = f"ticket{next(self._counter)}"
            self._tickets.add(ticket)
            return _ok(url=f"ws://127.0.0.1:{self.socket_port}/link/?ticket={ticket}")
        if method not in _BOT_METHODS:
            return _error("unknown_method")
        if token != BOT_TOKEN:
            return _error("not_allowed_token_type")
        if method == "auth.test":
            return _ok(url="https://fake.slack.com/", team="Fake", user="uq", team_id="T0TEAM",
                       user_id=BOT_USER, bot_id="B0BOT")  # fmt: skip
        if method == "chat.postEphemeral":
            if not body.get("channel") or not body.get("user") or not body.get("text"):
                return _error("invalid_arguments")
            self.ephemerals.append((body["channel"], body["user"], body["text"]))
            return _ok(message_ts=self._ts())
        if method == "views.open":
            return self._views_open(body)
        problem = _check_message(body)
        if problem is not None:
            return _error(problem)
        if method == "chat.postMessage":
            message = Message(body["channel"], self._ts(), body["text"], body.get("blocks", []))
            self.messages.append(message)
            posted = {"type": "message", "text": message.text, "ts": message.ts}
            return _ok(channel=message.channel, ts=message.ts, message=posted)
        found = [m for m in self.messages_in(body["channel"]) if m.ts == body.get("ts")]
        if not found:
            return _error("message_not_found")
        edited = found[0]
        edited.text, edited.blocks = body["text"], body.get("blocks", [])
        edited.edits += 1
        return _ok(channel=edited.channel, ts=edited.ts, text=edited.text)

    def _views_open(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        trigger = self._triggers.pop(str(body.get("trigger_id")), None)
        if trigger is None:
            return _error("invalid_trigger_id")
        if time.monotonic() - trigger[1] > TRIGGER_SECONDS:
            return _error("expired_trigger_id")
        view = body.get("view") or {}
        title = view.get("title", {}).get("text", "")
        if view.get("type") != "modal" or not 1 <= len(title) <= 24:
            return _error("invalid_arguments")
        if len(view.get("private_metadata", "")) > 3000 or len(view.get("blocks", [])) > 100:
            return _error("invalid_arguments")
        for block in view.get("blocks", []):
            if block["type"] == "input" and len(block["label"]["text"]) > 2000:
                return _error("invalid_arguments")
            if block["type"] == "input" and len(block.get("hint", {}).get("text", "")) > 2000:
                return _error("invalid_arguments")
            element = block.get("element", {})
            longest = element.get("max_length", 3000)
            if element.get("type") == "plain_text_input" and not 1 <= longest <= 3000:
                return _error("invalid_arguments")
            if len(element.get("initial_value", "")) > longest:
                return _error("invalid_arguments")
        self.views.append(View(trigger[0], view))
        return _ok(view={**view, "id": f"V{next(self._counter)}"})

    def _ts(self) -> str:
        return f"{int(time.time())}.{next(self._counter):06d}"


def _check_message(body: dict[str, Any]) -> str | None:
    """Why Slack would refuse a message's body, if it would."""
    if not body.get("channel"):
        return "channel_not_found"
    blocks = body.get("blocks")
    if not body.get("text") and not blocks:
        return "no_text"
    if blocks is None:
        return None
    if not isinstance(blocks, list) or len(blocks) > 50:
        return "invalid_blocks"
    ids: set[str] = set()
    for block in blocks:
        kind = block.get("type")
        if kind == "section":
            text = block.get("text") or {}
            if (
                text.get("type") not in ("mrkdwn", "plain_text")
                or not 1 <= len(text.get("text", "")) <= 3000
            ):
                return "invalid_blocks"
        elif kind == "header":
            text = block.get("text") or {}
            if text.get("type") != "plain_text" or not 1 <= len(text.get("text", "")) <= 150:
                return "invalid_blocks"
        elif kind == "context":
            if not 1 <= len(block.get("elements", [])) <= 10:
                return "invalid_blocks"
        elif kind == "actions":
            elements = block.get("elements", [])
            if not 1 <= len(elements) <= 25:
                return "invalid_blocks"
            for button in elements:
                text = button.get("text", {}).get("text", "")
                action_id = button.get("action_id", "")
                if not 1 <= len(text) <= 75 or len(button.get("value", "")) > 2000:
                    return "invalid_blocks"
                if not 1 <= len(action_id) <= 255 or action_id in ids:
                    return "invalid_blocks"
                ids.add(action_id)
        else:
            return "invalid_blocks"
    return None


def _ok(**fields: Any) -> tuple[int, dict[str, Any]]:
    return 200, {"ok": True, **fields}


def _error(error: str) -> tuple[int, dict[str, Any]]:
    return 200, {"ok": False, "error": error}


@contextmanager
def fake_slack() -> Iterator[FakeSlack]:
    """A fake Slack (Web API and Socket Mode) on loopback ports, for `APP_TOKEN` and
    `BOT_TOKEN`."""
    fake = FakeSlack()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            method = self.path.removeprefix("/api/")
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            token = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = None
            if not isinstance(body, dict):
                status, answer = _error("invalid_json")
            else:
                status, answer = fake.handle(method, token, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            if status == 429:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/api"
    sockets = serve(fake._connected, "127.0.0.1", 0)
    fake.socket_port = sockets.socket.getsockname()[1]
    threads = [
        threading.Thread(target=server.serve_forever, daemon=True),
        threading.Thread(target=sockets.serve_forever, daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        yield fake
    finally:
        sockets.shutdown()
        server.shutdown()
        server.server_close()
