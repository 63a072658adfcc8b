"""A stand-in host on loopback that misbehaves, one way per case, for the fail-closed tests.

It answers `POST /<case>/api/decide` (the hooks' quick path) and the WebSocket `/<case>/ws/ask`
(every asker) the way the case named by the path's first segment says, written by hand on raw
sockets so that each case can break exactly one thing a real host never would: a settlement of
another request, a redirect, a reply dripped a byte at a time, a silent socket, a close code, a
frame over the limit, a header given twice. Everything else in a case is a host's honest
behaviour (docs/protocol.md), so what a gate does can only come from the one misbehaviour.

Three listeners: `http` (plain), `https` (TLS, a trustme authority whose certificate is `ca`), and
`other`, another host that allows everything it is asked, where a redirect may point: a gate that
reaches it has followed a redirect, and `contacts("_other")` says so. `allow` is the control: an
honest host that settles every card with `Allow`, which a gate must allow (so the tests can fail).

`python -m tests.standin` runs it for the TypeScript client's tests: it prints
`{"http": port, "https": port, "other": port, "ca": path}` on one line, serves until stdin closes,
and answers `GET /_stats/<case>` with what the case saw (`StandIn.seen`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import ssl
import struct
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme

ALLOW = "Allow"
DENY = "Deny"
ALWAYS = "Allow and don't ask again"
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
"""RFC 6455's key for `Sec-WebSocket-Accept`."""
DRIP_PAUSE = 0.2
"""Seconds between the bytes of a dripped reply: each byte comes well within any read's timeout,
so only a deadline for the whole exchange can end it."""
OVERSIZE = 4 * 1024 * 1024 + 1
"""A frame one byte over what the clients accept (`MAX_REPLY_BYTES`)."""

Json = dict[str, Any]


@dataclass
class Seen:
    """What one case saw: when each WebSocket handshake and each HTTP request came, and whether
    each carried a token."""

    handshakes: list[float] = field(default_factory=list)
    requests: list[float] = field(default_factory=list)
    tokens: list[bool] = field(default_factory=list)
    frames: list[Json] = field(default_factory=list)

    def as_json(self) -> Json:
        return {
            "handshakes": self.handshakes,
            "requests": self.requests,
            "tokens": self.tokens,
            "frames": [frame.get("type") for frame in self.frames],
        }


class Peer:
    """One accepted connection: reading lines, HTTP heads and WebSocket frames; writing bytes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def write(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def drip(self, data: bytes) -> None:
        for index in range(len(data)):
            await self.write(data[index : index + 1])
            await asyncio.sleep(DRIP_PAUSE)

    async def silence(self) -> None:
        """Read and drop whatever comes until the peer leaves; answer nothing (not even pings)."""
        while await self.reader.read(65536):
            pass

    async def send(self, value: Json | str) -> None:
        text = value if isinstance(value, str) else json.dumps(value)
        await self.write(frame(0x1, text.encode()))

    async def close(self, code: int, reason: str = "") -> None:
        await self.write(frame(0x8, struct.pack("!H", code) + reason.encode()))

    async def frames(self) -> AsyncIterator[Json]:
        """Each text frame the client sends, parsed; pings are answered, a close ends it."""
        while True:
            opcode, payload = await read_frame(self.reader)
            if opcode == 0x8:
                with contextlib.suppress(ConnectionError):
                    await self.write(frame(0x8, payload[:2]))
                return
            if opcode == 0x9:
                await self.write(frame(0xA, payload))
            elif opcode in (0x1, 0x2):
                yield json.loads(payload)


def frame(opcode: int, payload: bytes) -> bytes:
    """A server's frame: final, unmasked."""
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", 0x80 | opcode, size)
    elif size < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 126, size)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, size)
    return head + payload


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One whole message from a client (its frames are masked; continuations are joined)."""
    message, first = bytearray(), None
    while True:
        byte0, byte1 = await reader.readexactly(2)
        size = byte1 & 0x7F
        if size == 126:
            (size,) = struct.unpack("!H", await reader.readexactly(2))
        elif size == 127:
            (size,) = struct.unpack("!Q", await reader.readexactly(8))
        mask = await reader.readexactly(4) if byte1 & 0x80 else b"\0\0\0\0"
        data = await reader.readexactly(size)
        message += bytes(value ^ mask[index % 4] for index, value in enumerate(data))
        first = byte0 & 0x0F if first is None else first
        if byte0 & 0x80:  # the final frame (the clients never split a message)
            return first, bytes(message)


# -- what the cases answer ------------------------------------------------------------------------


def settled(rpc_id: str | None, answer: Json | None, **payload: Any) -> Json:
    """An `ask/settled` reply, answered with `answer` unless the payload says otherwise."""
    body: Json = {"type": "ask/settled", "outcome": "answered", **payload}
    if answer is not None:
        body["answer"] = answer
    reply: Json = {"payload": body}
    if rpc_id is not None:
        reply["rpcId"] = rpc_id
    return reply


def chose(card: Json, *labels: str, **extra: Any) -> Json:
    return {"answers": [{"id": card["id"], "selected": list(labels), **extra}]}


Settle = Callable[[Json], Json]
"""The reply a case gives an `ask` (its frame or `/api/decide` body)."""


def _card(ask: Json) -> Json:
    return dict(ask["questions"][0])


SETTLEMENTS: dict[str, Settle] = {
    "allow": lambda ask: settled(ask["rpcId"], chose(_card(ask), ALLOW)),
    "other-rpc": lambda ask: settled("not-" + ask["rpcId"], chose(_card(ask), ALLOW)),
    "no-rpc": lambda ask: settled(None, chose(_card(ask), ALLOW)),
    "other-question": lambda ask: settled(
        ask["rpcId"], {"answers": [{"id": "other", "selected": [ALLOW]}]}
    ),
    "no-item-id": lambda ask: settled(ask["rpcId"], {"answers": [{"selected": [ALLOW]}]}),
    "ask-error-type": lambda ask: settled(ask["rpcId"], chose(_card(ask), ALLOW), type="ask/error"),
    "two-items": lambda ask: settled(
        ask["rpcId"],
        {
            "answers": [
                {"id": "other", "selected": [ALLOW]},
                {"id": _card(ask)["id"], "selected": [DENY]},
            ]
        },
    ),
    "always-not-offered": lambda ask: settled(ask["rpcId"], chose(_card(ask), ALWAYS)),
    "allow-and-text": lambda ask: settled(ask["rpcId"], chose(_card(ask), ALLOW, custom="ok")),
    "unreadable-answered": lambda ask: settled(
        ask["rpcId"], {"answers": [{"id": _card(ask)["id"]}]}
    ),
}
"""A settlement for each wrong reading (the issue's list), and the honest `allow`."""


def http_reply(
    status: str, body: bytes = b"", *, version: str = "HTTP/1.1", headers: str = ""
) -> bytes:
    length = f"Content-Length: {len(body)}\r\n" if "Content-Length" not in headers else ""
    return (
        f"{version} {status}\r\nContent-Type: application/json\r\n{length}{headers}"
        f"Connection: close\r\n\r\n"
    ).encode() + body


def json_reply(value: Json, **options: Any) -> bytes:
    return http_reply("200 OK", json.dumps(value).encode(), **options)


@dataclass(frozen=True)
class Case:
    """How a case answers: `/api/decide` (`decide`), the WebSocket handshake (`handshake`), and
    each `ask` once connected (`session`). The defaults are an honest host on which no rule
    decides anything and nobody answers."""

    decide: str = "no-rule"
    handshake: str = "asker"
    session: str = "pending"
    note: str = ""


CASES: dict[str, Case] = {
    # The control: an honest host whose rules (and people) allow everything.
    "allow": Case(decide="allow", session="allow"),
    # An honest host where nobody answers: what ends the wait is the asker's own deadline.
    "pending": Case(),
    # An honest host where a person denies: the full path's reading, when the quick path has
    # no decision (the tests of the quick path's wrong replies end here).
    "deny": Case(session="deny"),
    # The quick path's wrong settlements (the full path behind them is "deny").
    **{
        f"decide-{name}": Case(decide=name, session="deny")
        for name in SETTLEMENTS
        if name != "allow"
    },
    **{
        f"decide-{how}": Case(decide=how, session="deny")
        for how in ("http10", "short-length", "chunked", "two-lengths")
    },
    # The full path's wrong settlements, over /ws/ask.
    **{f"ws-{name}": Case(session=name) for name in SETTLEMENTS if name != "allow"},
    # Redirects (to `redirect-target`, which allows everything, on this host or another one), and
    # the other answers to the handshake (and to /api/decide) that are no reply at all.
    **{
        name: Case(decide=name.removeprefix("error-"), handshake=name.removeprefix("error-"))
        for name in (
            "redirect-same",
            "redirect-other",
            "error-500-empty",
            "error-503-body",
            "garbage",
            "drip",
            "silent",
        )
    },
    "redirect-target": Case(decide="allow", session="allow"),
    "two-roles": Case(handshake="two-roles"),
    "unknown-role": Case(handshake="unknown-role"),
    # After a handshake that succeeds.
    "silent-after": Case(session="silent"),
    "store-unavailable": Case(session="store-unavailable"),
    "oversize": Case(session="oversize"),
    **{
        f"close-{code}": Case(session=f"close-{code}")
        for code in (1000, 1001, 1006, 1009, 1011, 1013, 4000, 4401, 4403)
    },
}


class StandIn:
    """The three listeners, serving `CASES` on a loop of their own (a thread), so that tests of
    subprocesses and of coroutines alike can use it."""

    def __init__(self) -> None:
        self.seen: dict[str, Seen] = {}
        self.ports: dict[str, int] = {}
        self.folder = Path(tempfile.mkdtemp(prefix="uq-standin-"))
        self.ca = self.folder / "ca.pem"
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._servers: list[asyncio.Server] = []
        self._peers: set[asyncio.StreamWriter] = set()

    def url(self, case: str, *, scheme: str = "http", token: str = "standin-token") -> str:
        port = self.ports["https" if scheme == "https" else "http"]
        return f"{scheme}://127.0.0.1:{port}/{case}/?token={token}"

    def contacts(self, case: str) -> Seen:
        return self.seen.setdefault(case, Seen())

    def start(self) -> StandIn:
        authority = trustme.CA()
        server = authority.issue_cert("127.0.0.1", "localhost")
        authority.cert_pem.write_to_path(str(self.ca))
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server.configure_cert(context)
        self._thread.start()
        for name, tls in (("http", None), ("https", context), ("other", None)):
            started = asyncio.run_coroutine_threadsafe(self._listen(name, tls), self._loop)
            self.ports[name] = started.result(10)
        return self

    def stop(self) -> None:
        async def close() -> None:
            for server in self._servers:
                server.close()
            for writer in list(self._peers):  # each serving task then ends on its own
                writer.transport.abort()
            await asyncio.sleep(0.05)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _listen(self, name: str, tls: ssl.SSLContext | None) -> int:
        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self._peers.add(writer)
            try:
                await self._serve(name, Peer(reader, writer))
            except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError, OSError):
                pass  # the client left: what it did is recorded
            finally:
                self._peers.discard(writer)
                writer.close()

        server = await asyncio.start_server(accepted, "127.0.0.1", 0, ssl=tls)
        self._servers.append(server)
        port: int = server.sockets[0].getsockname()[1]
        return port

    async def _serve(self, listener: str, peer: Peer) -> None:
        head = await peer.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ", 2)[1]
        headers = [line.partition(":") for line in lines[1:] if line]
        named = {name.strip().lower(): value.strip() for name, _, value in headers}
        case_name, _, rest = path.lstrip("/").partition("/")
        if listener == "other":
            case_name, rest = "_other", rest
        if case_name == "_stats":
            await peer.write(json_reply(self.contacts(rest.strip("/")).as_json()))
            return
        seen = self.contacts(case_name)
        seen.tokens.append("authorization" in named)
        case = Case(decide="allow", session="allow") if listener == "other" else CASES[case_name]
        if rest.startswith("ws/ask") and named.get("upgrade", "").lower() == "websocket":
            seen.handshakes.append(time.monotonic())
            await self._websocket(case, case_name, listener, peer, named, seen)
        else:
            seen.requests.append(time.monotonic())
            length = int(named.get("content-length", "0"))
            body = await peer.reader.readexactly(length) if length else b"{}"
            await self._decide(case, listener, peer, json.loads(body))

    def _location(self, where: str, listener: str, path: str) -> str:
        """Where a redirect points: `redirect-target` on this listener (`redirect-same`), or on
        another host (`redirect-other`): the `other` listener from plain http, and from https
        the same listener under another name (`localhost`), which its certificate also names."""
        secure = listener == "https"
        scheme = (
            ("wss" if secure else "ws")
            if path.startswith("ws/")
            else ("https" if secure else "http")
        )
        host, port = "127.0.0.1", self.ports[listener]
        if where == "redirect-other":
            host, port = ("localhost", port) if secure else ("127.0.0.1", self.ports["other"])
        return f"{scheme}://{host}:{port}/redirect-target/{path}"

    async def _decide(self, case: Case, listener: str, peer: Peer, ask: Json) -> None:
        how = case.decide
        if how in SETTLEMENTS:
            await peer.write(json_reply(SETTLEMENTS[how](ask)))
        elif how == "no-rule":
            await peer.write(http_reply("204 No Content"))
        elif how == "http10":
            await peer.write(json_reply(SETTLEMENTS["allow"](ask), version="HTTP/1.0"))
        elif how == "short-length":
            body = json.dumps(SETTLEMENTS["allow"](ask)).encode()
            honest = json.dumps(settled(ask["rpcId"], chose(_card(ask), DENY))).encode()
            await peer.write(
                http_reply("200 OK", honest + body, headers=f"Content-Length: {len(honest)}\r\n")
            )
        elif how == "chunked":
            body = json.dumps(SETTLEMENTS["allow"](ask)).encode()
            await peer.write(
                http_reply(
                    "200 OK",
                    b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body),
                    headers="Transfer-Encoding: chunked\r\nContent-Length: 0\r\n",
                )
            )
        elif how == "two-lengths":
            body = json.dumps(SETTLEMENTS["allow"](ask)).encode()
            twice = f"Content-Length: {len(body)}\r\nContent-Length: {len(body)}\r\n"
            await peer.write(http_reply("200 OK", body, headers=twice))
        else:
            await self._refuse(how, listener, peer, "api/decide")

    async def _refuse(self, how: str, listener: str, peer: Peer, path: str) -> None:
        """The answers that are no reply at all, to a request or to a handshake."""
        if how.startswith("redirect-"):
            location = self._location(how, listener, path)
            await peer.write(http_reply("302 Found", headers=f"Location: {location}\r\n"))
        elif how == "500-empty":
            await peer.write(http_reply("500 Internal Server Error"))
        elif how == "503-body":
            error = {"error": {"code": "STORE_UNAVAILABLE", "message": "the store is down"}}
            await peer.write(http_reply("503 Service Unavailable", json.dumps(error).encode()))
        elif how == "garbage":
            await peer.write(os.urandom(64) + b"\r\n\r\n" + os.urandom(64))
        elif how == "drip":
            await peer.drip(
                http_reply("204 No Content", headers="X-Padding: " + "x" * 200 + "\r\n")
            )
        elif how == "silent":
            await peer.silence()
        else:
            raise AssertionError(f"no such behaviour: {how}")

    async def _websocket(
        self, case: Case, name: str, listener: str, peer: Peer, named: dict[str, str], seen: Seen
    ) -> None:
        role = "X-UQ-Role: asker\r\n"
        if case.handshake == "two-roles":
            role = "X-UQ-Role: asker\r\nX-UQ-Role: admin\r\n"
        elif case.handshake == "unknown-role":
            role = "X-UQ-Role: Asker\r\n"
        elif case.handshake != "asker":
            await self._refuse(case.handshake, listener, peer, "ws/ask")
            return
        key = named["sec-websocket-key"].encode()
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest()).decode()
        await peer.write(
            (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Accept: {accept}\r\n{role}\r\n"
            ).encode()
        )
        if case.session == "silent":
            await peer.silence()
            return
        async for sent in peer.frames():
            seen.frames.append(sent)
            if await self._answer(case.session, peer, sent):
                return

    async def _answer(self, how: str, peer: Peer, sent: Json) -> bool:
        """Answer one frame; `True` once the case has closed the connection."""
        rpc_id = sent.get("rpcId")
        if sent.get("type") == "ping":
            await peer.send({"payload": {"type": "pong"}})
            return False
        if sent.get("type") == "withdraw":  # a withdrawal is always confirmed
            await peer.send(
                {"rpcId": rpc_id, "payload": {"type": "ask/settled", "outcome": "withdrawn"}}
            )
            return False
        card = _card(sent)
        if how == "pending":
            await peer.send({"rpcId": rpc_id, "payload": {"type": "ask/pending"}})
        elif how == "deny":
            await peer.send(settled(rpc_id, chose(card, DENY)))
        elif how in SETTLEMENTS:
            await peer.send(SETTLEMENTS[how](sent))
        elif how == "store-unavailable":
            error = {
                "type": "ask/error",
                "code": "STORE_UNAVAILABLE",
                "message": "the store is down",
            }
            await peer.send({"rpcId": rpc_id, "payload": error})
        elif how == "oversize":
            await peer.send(
                {"rpcId": rpc_id, "payload": {"type": "ask/pending"}, "pad": "x" * OVERSIZE}
            )
        elif how.startswith("close-"):
            await peer.send({"rpcId": rpc_id, "payload": {"type": "ask/pending"}})
            code = int(how.removeprefix("close-"))
            if code != 1006:  # 1006: the connection ends without a closing handshake
                await peer.close(code, "stand-in")
            return True
        else:
            raise AssertionError(f"no such session: {how}")
        return False


def main() -> None:
    """Serve for another process (the TypeScript tests) until stdin closes."""
    stand_in = StandIn().start()
    print(json.dumps({**stand_in.ports, "ca": str(stand_in.ca)}), flush=True)
    sys.stdin.read()
    stand_in.stop()


if __name__ == "__main__":
    main()
