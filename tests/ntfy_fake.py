"""An ntfy server on loopback, written from ntfy's published documentation of publishing (its
sections "Publishing", "Publish as JSON", "Action buttons", "List of all parameters" and
"Limitations", at ntfy.sh/docs/publish/), never from our notifier's code.

What it reads, as ntfy documents it:

- a `PUT`/`POST` to `/<topic>` (topic names `[-_A-Za-z0-9]{1,64}`): the body is the message; its
  parameters are headers, case-insensitive, each under its documented aliases (`X-Title`,
  `Title`, `t`; `X-Actions`, `Actions`, `Action`; `X-Click`, `Click`; `X-Sequence-ID`,
  `Sequence-ID`, `SID`; `X-Priority`, `Priority`, `prio`, `p`; `X-Tags`, `Tags`, `tag`, `ta`), any
  of them possibly RFC 2047 encoded words;
- a `PUT`/`POST` of a JSON object to the root URL `/` ("Publish as JSON"): `topic` (required),
  `message`, `title`, `tags`, `priority`, `actions`, `click`, `sequence_id`;
- actions ("Defining actions"): a JSON array or the short format `<action>, <label>, <url>[,
  key=value...]`, separated by `;`; **up to three**; an `http` action has `label` and `url`
  (required), `method` (default **POST**), `headers` (a map), `body` and `clear`;
- `Authorization` (Bearer or Basic) when the test set credentials; a missing or wrong one is
  401, as a protected topic answers;
- a message body up to 4,096 bytes ("Limitations"; longer ones become attachments: refused here,
  since the host must never send one).

Anything else is answered 400 and recorded in `refused` with why. Each accepted message is kept
per topic; one with the sequence id of an earlier one replaces it on the "phone" (`shown`), as
ntfy's updating of notifications does. `tap(message, label)` sends an `http` action exactly as the
ntfy app does when its button is tapped (its method, URL, headers and body) and returns the
status; with `clear`, a 2xx clears the notification the button was on. The app dismisses it by its
notification id, which a replacement with the same sequence id shares: when the replacement arrived
while the tap's request was in flight, the replacement is the one cleared.
"""

from __future__ import annotations

import email.header
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.receivers import Received, serving

MAX_ACTIONS = 3
MAX_MESSAGE_BYTES = 4096
TOPIC = re.compile(r"[-_A-Za-z0-9]{1,64}")
ALIASES = {
    "title": ("x-title", "title", "t"),
    "actions": ("x-actions", "actions", "action"),
    "click": ("x-click", "click"),
    "sequence_id": ("x-sequence-id", "sequence-id", "sid"),
    "priority": ("x-priority", "priority", "prio", "p"),
    "tags": ("x-tags", "tags", "tag", "ta"),
}
PRIORITIES = {"min": 1, "low": 2, "default": 3, "high": 4, "max": 5, "urgent": 5}


@dataclass(frozen=True)
class Message:
    """A message ntfy accepted, as its subscribers read it."""

    topic: str
    message: str
    title: str | None
    click: str | None
    sequence_id: str | None
    priority: int | None
    tags: list[str]
    actions: list[dict[str, Any]]
    authorization: str | None

    def action(self, label: str) -> dict[str, Any]:
        (found,) = [action for action in self.actions if action["label"] == label]
        return found


@dataclass
class FakeNtfy:
    netloc: str = ""
    authorization: str | None = None
    """The `Authorization` header every publish must carry, when set."""
    messages: Received = field(default_factory=Received)
    refused: Received = field(default_factory=Received)
    shown: dict[tuple[str, str], Message] = field(default_factory=dict)
    """What the phone shows: `(topic, sequence id or message number)` -> the latest message."""

    def publish(
        self, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, Any]]:
        if self.authorization is not None and headers.get("authorization") != self.authorization:
            return 401, {"code": 40101, "error": "unauthorized"}
        try:
            message = self._read(path, headers, body)
        except (ValueError, KeyError, TypeError) as problem:
            self.refused.add(str(problem))
            return 400, {"code": 40000, "error": str(problem)}
        key = message.sequence_id or f"#{len(self.messages.items)}"
        self.shown[message.topic, key] = message
        self.messages.add(message)
        reply = {"event": "message", "topic": message.topic, "message": message.message}
        return 200, {**reply, **({"sequence_id": key} if message.sequence_id else {})}

    def _read(self, path: str, headers: dict[str, str], body: bytes) -> Message:
        if path == "/":
            published = json.loads(body)
            topic, text = published["topic"], published.get("message", "")
            fields = {name: published.get(name) for name in ALIASES}
        else:
            topic, text = path.strip("/"), body.decode("utf-8")
            fields = {name: _header(headers, ALIASES[name]) for name in ALIASES}
        if not isinstance(topic, str) or not TOPIC.fullmatch(topic):
            raise ValueError(f"not a topic name: {topic!r}")
        if len(text.encode()) > MAX_MESSAGE_BYTES:
            raise ValueError("a message over 4,096 bytes would become an attachment")
        actions = _actions(fields["actions"])
        tags = fields["tags"]
        return Message(
            topic=topic,
            message=text,
            title=fields["title"],
            click=fields["click"],
            sequence_id=fields["sequence_id"],
            priority=_priority(fields["priority"]),
            tags=tags.split(",") if isinstance(tags, str) else list(tags or []),
            actions=actions,
            authorization=headers.get("authorization"),
        )

    def tap(self, message: Message, label: str) -> int:
        """Send the `http` action `label` of `message` as the ntfy app does; its status."""
        action = message.action(label)
        assert action["action"] == "http", action
        body = action.get("body", "").encode() or None
        request = urllib.request.Request(
            action["url"], data=body, method=action.get("method", "POST").upper()
        )
        for name, value in action.get("headers", {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=15) as response:
                status: int = response.status
        except urllib.error.HTTPError as refused:
            status = refused.code
        if action.get("clear") and 200 <= status < 300:
            self._clear(message)
        return status

    def _clear(self, message: Message) -> None:
        """Dismiss `message`'s notification as the app does, by its id: a later message with
        the same sequence id replaced it under that id, and goes with it."""
        if message.sequence_id:
            self.shown.pop((message.topic, message.sequence_id), None)
        else:
            for key in [key for key, shown in self.shown.items() if shown is message]:
                del self.shown[key]


def _header(headers: dict[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        if name in headers:
            return str(email.header.make_header(email.header.decode_header(headers[name])))
    return None


def _actions(given: Any) -> list[dict[str, Any]]:
    """A JSON array (or its text), or the short format, read as ntfy documents them."""
    if given is None or given == "":
        return []
    if isinstance(given, str) and given.lstrip().startswith("["):
        given = json.loads(given)
    if isinstance(given, str):
        given = [_short(part) for part in given.split(";") if part.strip()]
    if not isinstance(given, list) or len(given) > MAX_ACTIONS:
        raise ValueError(f"actions must be a list of at most {MAX_ACTIONS}: {given!r}")
    for action in given:
        if action.get("action") not in {"view", "http", "broadcast", "copy"}:
            raise ValueError(f"an unknown action: {action!r}")
        if not action.get("label"):
            raise ValueError(f"an action without a label: {action!r}")
        if action["action"] in {"view", "http"} and not action.get("url"):
            raise ValueError(f"an {action['action']} action without a url: {action!r}")
        if not isinstance(action.get("headers", {}), dict):
            raise ValueError("an action's headers must be a map")
    return list(given)


def _short(text: str) -> dict[str, Any]:
    """`<action>, <label>, <url>[, key=value]...` (no quoting: the tests' labels need none)."""
    parts = [part.strip() for part in text.split(",")]
    action: dict[str, Any] = {"action": parts[0], "label": parts[1]}
    for part in parts[2:]:
        key, equals, value = part.partition("=")
        if not equals:
            action["url"] = part
        elif key.startswith("headers."):
            action.setdefault("headers", {})[key.removeprefix("headers.")] = value
        else:
            action[key] = value == "true" if key == "clear" else value
    return action


def _priority(given: Any) -> int | None:
    if given is None or given == "":
        return None
    if isinstance(given, int):
        return given
    return PRIORITIES[given] if given in PRIORITIES else int(given)


@contextmanager
def ntfy_server() -> Iterator[FakeNtfy]:
    """An ntfy server on a free loopback port, for the duration of the block."""
    server = FakeNtfy()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, reply = server.publish(self.path, headers, self.rfile.read(length))
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_PUT = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the test reads what arrived

    with serving(Handler) as address:
        server.netloc = address
        yield server
