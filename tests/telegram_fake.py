"""A Telegram Bot API server on loopback, written from the published reference, for a real host
to poll: `POST /bot<token>/<method>` with a JSON or multipart body, answered
`{"ok": true, "result": ...}` or `{"ok": false, "error_code", "description", "parameters"}`.

It keeps what a bot sends (messages with their inline keyboards, documents, callback answers),
refuses what Telegram refuses (a wrong token: 401; HTML it cannot parse, a text over 4096
characters, callback data over 64 bytes, an edit that changes nothing: 400; a second
`getUpdates` while one waits: 409 for the first, as Telegram ends it), and lets a test play the
users: `send` a text (a reply to a message with `reply_to`), `tap` a button. `rate_limit(method)`
answers the next call 429 with `retry_after`; `drop(method)` closes the connection of the next
call without an answer.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "123456:TEST-token_for-the-fake"
USERNAME = "uq_test_bot"
WAIT_SECONDS = 15.0
_TAGS = frozenset(
    {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre", "tg-spoiler",
     "blockquote", "span"}
)  # fmt: skip
"""The tags the Bot API's HTML parse mode accepts."""


class _Entities(HTMLParser):
    """Reads a text as the HTML parse mode does; `problem` says why Telegram would refuse it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.text: list[str] = []
        self.problem: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _TAGS:
            self.problem = self.problem or f'Unsupported start tag "{tag}"'
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open.pop() != tag:
            self.problem = self.problem or f'Unmatched end tag "{tag}"'

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed_text(text: str) -> tuple[str, str | None]:
    """The text a user sees of `text` in HTML parse mode, and why it cannot be parsed."""
    parser = _Entities()
    parser.feed(text)
    parser.close()
    if parser.open and parser.problem is None:
        parser.problem = f'Can\'t find end tag corresponding to start tag "{parser.open[-1]}"'
    return "".join(parser.text), parser.problem


@dataclass
class Message:
    chat_id: int
    message_id: int
    text: str
    markup: dict[str, Any] | None
    edits: int = 0

    @property
    def buttons(self) -> list[dict[str, Any]]:
        rows = (self.markup or {}).get("inline_keyboard", [])
        return [button for row in rows for button in row]

    @property
    def shown(self) -> str:
        """The text as the user sees it."""
        return parsed_text(self.text)[0]


@dataclass
class FakeBotApi:
    url: str = ""
    messages: list[Message] = field(default_factory=list)
    documents: list[tuple[int, str, bytes]] = field(default_factory=list)
    callback_answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    conflicts: int = 0
    """`getUpdates` calls ended by another one (two pollers at once)."""
    _updates: list[dict[str, Any]] = field(default_factory=list)
    _next_update: int = 1
    _polling: int = 0
    _poll_generation: int = 0
    _faults: dict[str, list[str]] = field(default_factory=dict)
    _lock: threading.Condition = field(default_factory=threading.Condition)

    # -- what a test does -----------------------------------------------------------------------

    def send(self, user: int, text: str, *, reply_to: Message | None = None) -> None:
        """User `user` writes `text` in their private chat with the bot; with `reply_to`, as a
        reply to that message, which the update's `reply_to_message` holds as the Bot API's
        reference says: "For replies in the same chat and message thread, the original
        message", itself without a `reply_to_message` of its own."""
        message: dict[str, Any] = {
            "message_id": 10_000 + self._next_update, "date": int(time.time()), "text": text,
            "from": {"id": user, "is_bot": False, "first_name": f"user{user}"},
            "chat": {"id": user, "type": "private"},
        }  # fmt: skip
        if reply_to is not None:
            message["reply_to_message"] = {
                "message_id": reply_to.message_id, "date": 0, "text": reply_to.shown,
                "from": {"id": 123456, "is_bot": True, "first_name": "UQ", "username": USERNAME},
                "chat": {"id": reply_to.chat_id, "type": "private"},
            }  # fmt: skip
        self._update({"message": message})

    def tap(self, user: int, message: Message, button: str) -> str:
        """User `user` taps the button whose text (a toggle's without its box) begins with
        `button`; the callback query's id."""
        (data,) = [
            b["callback_data"]
            for b in message.buttons
            if b["text"].removeprefix("☐ ").removeprefix("☑ ").startswith(button)
        ]
        query_id = f"q{self._next_update}"
        self._update({"callback_query": {
            "id": query_id, "data": data, "chat_instance": "1",
            "from": {"id": user, "is_bot": False, "first_name": f"user{user}"},
            "message": {"message_id": message.message_id, "date": 0,
                        "chat": {"id": message.chat_id, "type": "private"}},
        }})  # fmt: skip
        return query_id

    def rate_limit(self, method: str) -> None:
        self._faults.setdefault(method, []).append("429")

    def drop(self, method: str) -> None:
        self._faults.setdefault(method, []).append("drop")

    def wait(self, what: Any, seconds: float = WAIT_SECONDS) -> Any:
        """`what()` once it is truthy (`AssertionError` after `seconds`)."""
        deadline = time.monotonic() + seconds
        with self._lock:
            while not (found := what()):
                left = deadline - time.monotonic()
                assert left > 0, f"not in time; messages: {self.messages}"
                self._lock.wait(min(left, 0.2))
            return found

    def messages_in(self, chat: int) -> list[Message]:
        return [message for message in self.messages if message.chat_id == chat]

    def answer_to(self, query_id: str) -> dict[str, Any]:
        return self.wait(lambda: self.callback_answers.get(query_id))  # type: ignore[no-any-return]

    # -- the Bot API --------------------------------------------------------------------------

    def _update(self, body: dict[str, Any]) -> None:
        with self._lock:
            self._updates.append({"update_id": self._next_update, **body})
            self._next_update += 1
            self._lock.notify_all()

    def handle(self, method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        with self._lock:
            self.calls.append(method)
            self._lock.notify_all()
            fault = self._faults.get(method)
            if fault:
                kind = fault.pop(0)
                if kind == "drop":
                    return None
                return 429, _error(429, "Too Many Requests: retry after 1", retry_after=1)
        if method == "getUpdates":
            return self._get_updates(body)
        with self._lock:
            result = self._method(method, body)
            self._lock.notify_all()
            return result

    def _get_updates(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        offset = int(body.get("offset", 0))
        deadline = time.monotonic() + float(body.get("timeout", 0))
        with self._lock:
            if self._polling:
                self.conflicts += 1
            self._poll_generation += 1
            mine = self._poll_generation
            self._polling += 1
            try:
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
                while not self._updates and time.monotonic() < deadline:
                    if self._poll_generation != mine:
                        return 409, _error(
                            409,
                            "Conflict: terminated by other getUpdates request; "
                            "make sure that only one bot instance is running",
                        )
                    self._lock.wait(min(0.1, deadline - time.monotonic()))
                return 200, {"ok": True, "result": list(self._updates[:100])}
            finally:
                self._polling -= 1

    def _method(self, method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if method == "getMe":
            return _ok({"id": 123456, "is_bot": True, "first_name": "UQ", "username": USERNAME})
        if method == "deleteWebhook":
            return _ok(True)
        if method == "answerCallbackQuery":
            self.callback_answers[str(body["callback_query_id"])] = body
            return _ok(True)
        if method == "sendDocument":
            chat, (name, content) = int(body["chat_id"]), body["document"]
            self.documents.append((chat, name, content))
            return _ok({"message_id": self._new_id(), "chat": {"id": chat, "type": "private"}})
        if method in ("sendMessage", "editMessageText"):
            problem = _check_text(body)
            if problem is not None:
                return 400, _error(400, f"Bad Request: {problem}")
            chat = int(body["chat_id"])
            if method == "sendMessage":
                message = Message(chat, self._new_id(), body["text"], body.get("reply_markup"))
                self.messages.append(message)
                return _ok({"message_id": message.message_id, "date": 0, "text": message.shown,
                            "chat": {"id": chat, "type": "private"}})  # fmt: skip
            found = [m for m in self.messages_in(chat) if m.message_id == body["message_id"]]
            if not found:
                return 400, _error(400, "Bad Request: message to edit not found")
            edited = found[0]
            markup = body.get("reply_markup")
            if edited.text == body["text"] and edited.markup == markup:
                return 400, _error(
                    400,
                    "Bad Request: message is not modified: specified new "
                    "message content and reply markup are exactly the same",
                )
            edited.text, edited.markup, edited.edits = body["text"], markup, edited.edits + 1
            return _ok(True)
        return 404, _error(404, "Not Found: method not found")

    def _new_id(self) -> int:
        return len(self.messages) + len(self.documents) + 1


def _check_text(body: dict[str, Any]) -> str | None:
    text = body.get("text")
    if not isinstance(text, str) or not text:
        return "message text is empty"
    shown, problem = parsed_text(text) if body.get("parse_mode") == "HTML" else (text, None)
    if problem is not None:
        return f"can't parse entities: {problem}"
    if len(shown) > 4096:
        return "message is too long"
    for row in (body.get("reply_markup") or {}).get("inline_keyboard", []):
        for button in row:
            data = button.get("callback_data", "")
            if not 1 <= len(data.encode()) <= 64:
                return "BUTTON_DATA_INVALID"
    return None


def _ok(result: Any) -> tuple[int, dict[str, Any]]:
    return 200, {"ok": True, "result": result}


def _error(code: int, description: str, **parameters: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if parameters:
        error["parameters"] = parameters
    return error


def _body(content_type: str, raw: bytes) -> dict[str, Any]:
    if content_type.startswith("application/json"):
        parsed: dict[str, Any] = json.loads(raw)
        return parsed
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        filename = part.get_filename()
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        fields[str(name)] = (filename, payload) if filename else payload.decode()
    return fields


@contextmanager
def fake_bot_api() -> Iterator[FakeBotApi]:
    """A fake Bot API on a loopback port, for the bot `TOKEN`."""
    fake = FakeBotApi()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            token, _, method = self.path.removeprefix("/bot").partition("/")
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if token != TOKEN:
                status, answer = 401, _error(401, "Unauthorized")
            else:
                handled = fake.handle(method, _body(self.headers.get("Content-Type", ""), raw))
                if handled is None:
                    self.close_connection = True
                    self.connection.close()
                    return
                status, answer = handled
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(OSError):  # the host stopped waiting (it is stopping)
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
