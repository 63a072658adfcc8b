"""The fuzzers' host and clients: uvicorn serving the app in a thread of this process, or a real
`uq serve`, and sync clients of its three channels over real sockets.

`Channels` keeps one asker socket and one page socket open across inputs (reopening one only
when the protocol closed it, as for a frame over the limit), so a refusal that drops a socket is
seen. After every input, `real_ask()` asks a request through the asker protocol, answers it
through the HTTP API and waits for the asker to hear the answer: the host still serves.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.fuzz.oracle import (
    Reply,
    check_asker_reply,
    check_http_reply,
    check_page_reply,
    fail,
)
from tests.fuzz.strategies import FRESH, TARGET, TARGET_QUESTIONS, Probe
from user_questions.frames import MAX_FRAME_BYTES
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.server import bind

__all__ = ["Channels", "HostLog", "in_process_host"]

TOKEN = "fuzz-token-0123456789"
REPLY_SECONDS = 10.0
"""The longest a reply may take: a detail's render is bounded by half a second."""
PUSHED = ("question/requested", "question/resolved")
"""What the host pushes to a page by itself, between the replies to its frames."""
_PING = '{"type": "ping"}'
_PONG = {"payload": {"type": "pong"}}


class HostLog(logging.Handler):
    """Keeps the errors the host logs (a traceback is one): a fuzzed host logs none."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.errors: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(("uvicorn", "user_questions")):
            self.errors.append(self.format(record))


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.serving = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.serving.set()


@contextlib.contextmanager
def in_process_host(folder: Path) -> Iterator[tuple[str, HostLog]]:
    """The host on a fresh SQLite store, served by uvicorn (as `uq serve` configures it) in a
    thread; its address and its log."""
    log = HostLog()
    logging.getLogger().addHandler(log)
    sock = bind("127.0.0.1", 0)
    config = uvicorn.Config(
        create_app(HostConfig(store=folder / "host.db", token=TOKEN)),
        ws="websockets-sansio",
        ws_max_size=MAX_FRAME_BYTES,
        ws_per_message_deflate=False,
        # Keepalive pings draw from the `random` module in another thread, which hypothesis
        # would take for a strategy using it; inputs come often enough to keep sockets alive.
        ws_ping_interval=None,
        lifespan="on",
        log_config=None,
    )
    server = _Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        assert server.serving.wait(30), "uvicorn did not start"
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", log
    finally:
        server.should_exit = True
        thread.join(30)
        logging.getLogger().removeHandler(log)


class Channels:
    """Sync clients of a host's asker socket, page socket and HTTP API."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.headers = {"Authorization": f"Bearer {token}"}
        self.http = httpx.Client(base_url=base, headers=self.headers, timeout=REPLY_SECONDS)
        self._sockets: dict[str, ClientConnection] = {}
        self._ids = itertools.count()
        self._target: str | None = None

    def close(self) -> None:
        for ws in self._sockets.values():
            ws.close()
        self.http.close()

    # -- the three channels ----------------------------------------------------------------

    def ask_socket(self, probe: Probe) -> Reply:
        """Send `probe` on the asker socket (with a new rpcId where it makes one); its reply
        (requests it asked are left pending: pages get more to show, askers more to watch)."""
        return self._exchange("/ws/ask", self._aimed(probe.data), lambda frame: True)

    def page_socket(self, probe: Probe) -> Reply:
        """Send `probe` on the page socket (aimed at a pending request); its one reply."""
        data = self._aimed(probe.data)
        reply = self._exchange("/ws", data, lambda frame: _payload_type(frame) not in PUSHED)
        self._settled_if_accepted(reply.frame)
        return reply

    def respond(self, probe: Probe) -> httpx.Response:
        """`POST /api/respond` with `probe` (aimed at a pending request) as the body."""
        data = self._aimed(probe.data)
        body = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
        response = self.http.post("/api/respond", content=body)
        with contextlib.suppress(ValueError):
            if response.json().get("accepted") is True:
                self._target = None
        return response

    def try_on(self, channel: str, probe: Probe) -> None:
        """Send `probe` through `channel` (`ask`, `page` or `http`) and check the reply."""
        if channel == "ask":
            check_asker_reply(probe, self.ask_socket(probe))
        elif channel == "page":
            check_page_reply(probe, self.page_socket(probe))
        else:
            check_http_reply(probe, self.respond(probe))

    # -- the host still serves --------------------------------------------------------------

    def real_ask(self) -> None:
        """A request asked, answered through the HTTP API and heard by its asker."""
        rpc_id = f"real-{next(self._ids)}"
        checker = self._socket("checker", "/ws/ask")
        try:
            checker.send(json.dumps(_ask_frame(rpc_id, [TARGET_QUESTIONS[0]])))
            pending = json.loads(checker.recv(timeout=REPLY_SECONDS))
            answer = {"answers": [{"id": "pick", "selected": ["b"]}]}
            body = {
                "type": "client-response",
                "rpcId": rpc_id,
                "result": {"ok": True, "value": {"answer": answer}},
            }
            receipt = self.http.post("/api/respond", json=body).json()
            settled = json.loads(checker.recv(timeout=REPLY_SECONDS))
        except (OSError, TimeoutError, ConnectionClosed, httpx.HTTPError, ValueError) as error:
            self._sockets.pop("checker", None)
            fail("host-down", f"a real ask failed: {error!r}")
            return
        expected = {"type": "ask/settled", "outcome": "answered", "answer": answer}
        if pending["payload"] != {"type": "ask/pending"} or receipt != {"accepted": True}:
            fail("host-down", f"a real ask got {pending} and {receipt}")
        elif settled != {"rpcId": rpc_id, "payload": expected}:
            fail("host-down", f"a real ask was settled as {settled}")

    # -- inside -------------------------------------------------------------------------------

    def _socket(self, name: str, path: str) -> ClientConnection:
        if name not in self._sockets:
            url = self.base.replace("http", "ws", 1) + path
            # No bound on unread frames: pushed requests pile up between two inputs, and a
            # client that stopped reading would stall the host's sends (and its own close).
            self._sockets[name] = connect(
                url,
                additional_headers=self.headers,
                max_size=None,
                max_queue=None,
                compression=None,
                ping_interval=None,  # no keepalive: see `in_process_host`
            )
        return self._sockets[name]

    def _exchange(self, path: str, data: str | bytes, is_reply: Any) -> Reply:
        """Send `data`, then read until the reply `is_reply` accepts; then check, with a ping,
        that the socket is still open (a socket the host closed is reopened next time)."""
        ws = self._socket(path, path)
        try:
            ws.send(data)
            reply = self._read(ws, is_reply)
            if reply.frame is not None and reply.frame != _PONG:
                ws.send(_PING)
                alive = self._read(ws, lambda frame: frame == _PONG)
                if alive.frame is None:
                    return Reply(closed=alive.closed, timed_out=alive.timed_out)
        except ConnectionClosed as closed:
            reply = Reply(closed=closed.rcvd.code if closed.rcvd else 1006)
        if reply.frame is None:
            self._sockets.pop(path).close()
        return reply

    def _read(self, ws: ClientConnection, is_reply: Any) -> Reply:
        while True:
            try:
                text = ws.recv(timeout=REPLY_SECONDS)
            except TimeoutError:
                return Reply(timed_out=True)
            except ConnectionClosed as closed:
                return Reply(closed=closed.rcvd.code if closed.rcvd else 1006)
            try:
                frame = json.loads(text)
            except ValueError:
                return Reply(frame=text)
            if is_reply(frame):
                return Reply(frame=frame)

    def _aimed(self, data: str | bytes) -> str | bytes:
        """`data` with `@target@` naming a pending request and `@fresh@` a new rpcId."""
        if isinstance(data, bytes):
            return data
        fresh, target = json.dumps(FRESH), json.dumps(TARGET)
        if fresh in data:
            data = data.replace(fresh, json.dumps(f"fresh-{next(self._ids)}"))
        if target in data:
            data = data.replace(target, json.dumps(self._pending_target()))
        return data

    def _pending_target(self) -> str:
        if self._target is None:
            rpc_id = f"target-{next(self._ids)}"
            asker = self._socket("targets", "/ws/ask")
            asker.send(json.dumps(_ask_frame(rpc_id, TARGET_QUESTIONS)))
            reply = self._read(asker, lambda frame: frame.get("rpcId") == rpc_id).frame
            if not isinstance(reply, dict) or reply["payload"] != {"type": "ask/pending"}:
                fail("host-down", f"a target request was refused: {reply}")
            self._target = rpc_id
        return self._target

    def _settled_if_accepted(self, frame: Any) -> None:
        if _payload(frame).get("accepted") is True:
            self._target = None


def _ask_frame(rpc_id: str, questions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "ask", "rpcId": rpc_id, "sessionId": "fuzz", "questions": questions}


def _payload(frame: Any) -> dict[str, Any]:
    payload = frame.get("payload") if isinstance(frame, dict) else None
    return payload if isinstance(payload, dict) else {}


def _payload_type(frame: Any) -> object:
    return _payload(frame).get("type")
