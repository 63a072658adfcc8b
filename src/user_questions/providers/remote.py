"""`RemoteProvider`: ask the humans of a host (`uq serve`) from another process or machine.

Needs the `web` extra (websockets) and the asyncio backend.

The asker protocol (docs/protocol.md) runs over one WebSocket, `/ws/ask`, shared by every ask of the
provider. Each ask has an `rpcId` generated here, so it survives anything that cuts the
connection: after a dropped connection or a host restart the provider reconnects with backoff
and sends every unsettled `Ask` again; the host's submit is idempotent, so this re-attaches to
the same stored request, and an answer given meanwhile arrives at once, exactly once. When the
ask is cancelled (the service's abort or timeout) the provider sends `Withdraw`, with the reason
the host records (`withdraw_reason`), which takes the request off every page; a withdrawal that
cannot be delivered within `WITHDRAW_TIMEOUT` is sent again on the next connection.

There is no background task: the waiting asks read the socket themselves, one at a time, each
for all of them, handing the socket over as each gets its reply (`RemoteProvider` draws the
states). So the provider needs no task group, and works with or without `async with`. Inside
`async with` the connection stays open between asks; without it, the connection closes when the
last ask ends.

Failing closed, in bounded time (docs/security.md, "Fail closed"):

- Each connection attempt (TCP, TLS and the WebSocket handshake) may take `connect_timeout`
  seconds (default `CONNECT_TIMEOUT`), however slowly the host answers; and a connection does not
  count as made until the host answers what is sent on it: a frame left unanswered for
  `connect_timeout` seconds drops the connection as a silent one.
- Every failed attempt and every dropped connection is followed by a pause, `BACKOFF_FIRST`
  doubling to `BACKOFF_MAX`, jittered, handshakes that succeed included: a pause goes back to
  `BACKOFF_FIRST` only after a connection that was useful (the host answered one of its calls)
  and stayed open `STEADY_AFTER` seconds. A host that accepts and then fails (closes, goes
  silent, sends what cannot be read, cannot store the ask) is never reconnected to in a storm.
- A host that stays unreachable for `unreachable_limit` seconds (default `UNREACHABLE_LIMIT`)
  fails the waiting asks with `HOST_UNREACHABLE`; it never turns into an answer. The clock counts
  from the last *useful* exchange: it stops only when such a steady connection ends, never at a
  mere handshake.
- Never a redirect: a 3xx answer to the handshake is a refusal naming the `Location` it would
  have gone to (`HOST_UNREACHABLE`), so a person can fix the URL; the token never leaves for
  another address.
- Close code 4401 (the token was revoked) fails every ask with `UNAUTHORIZED`, 4403 with
  `FORBIDDEN`: retrying cannot help, so the provider stops, as docs/protocol.md says.

A caller that must know at once whether a host answers (a hook that falls back to its CLI's own
prompt, `uq mcp` refusing to start) calls `connect()` first: it tries each host once and raises
at once. A gate (`require_asker`) that asks before any connection was made gets the same: when no
host answers its first attempt, its asks fail with `HOST_UNREACHABLE` at once, rather than wait
for a host that was never there.

Several hosts sharing one PostgreSQL database (docs/multinode.md) are one inbox: given all their
URLs, the provider connects to the first that answers and, when that one goes away, reconnects
to the next; re-sending each `Ask` re-attaches to the same stored request through any of them.
A host that answers `STORE_UNAVAILABLE` (its database is down), `STORE_FULL` (its disk is full) or
`STORE_BUSY` (its disk is behind) is asked again, with backoff, on a new connection, the next
host first, until it can store the ask or the unreachable limit passes: that is an outage to wait
out, not an outcome.

An ask refused with `RATE_LIMITED` (its token asks faster than the host lets it: docs/host.md,
"Fair share") is asked again after the `retryAfter` the host gave, however often it takes: it
ends only with a reply that is not that refusal, or when its caller's deadline or abort ends it
(nothing is pending on the host meanwhile, so nothing is withdrawn). A refusal is never an
answer; `TOO_MANY_PENDING` fails the ask at once.

An `https://` host is reached over wss, its certificate verified (`tls.client_context`: the
system's authorities, `SSL_CERT_FILE`, and `ca`); a certificate that cannot be verified fails
the asks at once with `HOST_UNREACHABLE`, saying so, since retrying cannot change it.

Each handshake's answer says the token's role (`frames.ROLE_HEADER`), kept as `role`. An agent's
token should be an asker's, which can ask but never answer: given one that can answer, the
provider logs one warning; with `require_asker` (a permission gate: `uq hook`, `uq mcp
--permission-tool`) it refuses it, and a host that does not say, or says it twice or in words it
does not know, before anything is asked.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import socket
import ssl
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

import anyio
from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.http11 import Response

from user_questions._host_link.ask_endings import (
    WITHDRAW_TIMEOUT,
    settled_answer,
    withdraw_note,
    withdraw_reason,
)
from user_questions._host_link.tls import client_context, untrusted, wants_tls
from user_questions._host_link.url import ASK_PATH, parse_host_url
from user_questions._reading.json_reader import JSONRefused, load_json
from user_questions._reading.wire import frame_refusal
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import (
    MAX_FRAME_BYTES,
    ROLE_HEADER,
    Ask,
    AskerReply,
    AskFailed,
    AskSettled,
    Origin,
    Pong,
    Withdraw,
    WithdrawReason,
)
from user_questions.service import AskUserQuestionRequest
from user_questions.types import AskUserQuestionAnswer

__all__ = [
    "parse_host_url",
    "ASK_PATH",
    "BACKOFF_FIRST",
    "BACKOFF_MAX",
    "CONNECT_TIMEOUT",
    "RATE_PAUSE_MAX",
    "RATE_PAUSE_MIN",
    "STEADY_AFTER",
    "UNREACHABLE_LIMIT",
    "RemoteProvider",
]

UNREACHABLE_LIMIT = 300.0
"""Seconds without a useful exchange with the host after which waiting asks fail
(`HOST_UNREACHABLE`)."""
CONNECT_TIMEOUT = 10.0
"""Seconds one connection attempt (TCP, TLS and the WebSocket handshake) may take, and a frame
sent on a connection may wait for the host's first answer."""
BACKOFF_FIRST = 0.05
"""Seconds before the first reconnection attempt; doubled after each failure."""
BACKOFF_MAX = 2.0
"""The longest pause between reconnection attempts."""
STEADY_AFTER = 5.0
"""Seconds a useful connection must stay open for its end to start a new outage (the pause back
at `BACKOFF_FIRST`, the unreachable clock from its end) rather than prolong the current one."""
CLOSE_TIMEOUT = 1.0
"""Seconds a closing connection waits for the host's close frame."""
MAX_REPLY_BYTES = 4 * 1024 * 1024
"""The largest frame accepted from the host."""
RATE_PAUSE_MIN = 0.05
"""The shortest wait before asking again after `RATE_LIMITED`, seconds."""
RATE_PAUSE_MAX = 60.0
"""The longest wait before asking again after `RATE_LIMITED`, seconds."""
_WAIT_OUT = frozenset({ErrorCode.STORE_UNAVAILABLE, ErrorCode.STORE_FULL, ErrorCode.STORE_BUSY})
"""The refusals of a host whose store cannot take the ask for now: asked again later."""
_ASKER = "asker"
"""The role of a token that can ask but never answer."""
_ROLES = frozenset({_ASKER, "person", "admin"})
_STOP_CODES = {
    4401: (ErrorCode.UNAUTHORIZED, "no longer accepts the token (close code 4401)"),
    4403: (ErrorCode.FORBIDDEN, "refused the connection (close code 4403)"),
}
"""The close codes after which reconnecting cannot help (docs/protocol.md)."""
_ASKER_HINT = (
    "give agents an asker's token, which can ask but never answer: the `export UQ_URL=...` "
    "line `uq serve` prints, or one made with `uq token add NAME --role asker`"
)

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class _Call:
    """One request in flight, an ask or the withdrawal of a cancelled one: the frames it
    delivers, in order, on every connection until its reply arrives (it is in
    `RemoteProvider._calls` until then)."""

    rpc_id: str
    frames: tuple[str] | tuple[str, str]
    """Its `Ask`, then, for a withdrawal, its `Withdraw`: a withdrawal never reaches a
    connection before the `Ask` it withdraws."""
    on: ClientConnection | None = None
    """The connection its first `sent` frames went on; on any other, none has gone yet."""
    sent: int = 0
    reply: AskSettled | AskFailed | None = None
    woken: anyio.Event = field(default_factory=anyio.Event)
    """Set once, to wake its waiting ask: when its reply arrives, or when the ask is handed the
    socket to read."""

    @property
    def withdrawal(self) -> bool:
        """Whether it withdraws the request (its ask was cancelled)."""
        return len(self.frames) == 2

    def owes(self, ws: ClientConnection) -> bool:
        """Whether `ws` has not had all its frames yet."""
        return self.on is not ws or self.sent < len(self.frames)


class RemoteProvider:
    """A `UserQuestionProvider` that asks through a host, for agents in another process.

    The connection (`_ws`, `_down_since`) is in one of three states:

        closed ──a reader connects──> connected ──lost──> down ──a reader reconnects──> connected
        down ──unreachable for `unreachable_limit`, or a host refuses us──> closed
        connected ──`aclose()`──> closed

    Closed is where it starts; down, a reader tries host after host with backoff, and giving
    up fails the waiting asks (`HOST_UNREACHABLE`, or the refusal).

    Each request in flight is a call (`_Call`):

        asking ──its reply (settled, refused, failed)──> done
        asking ──its ask is cancelled──> withdrawing (a new call) ──confirmed──> done

    A call is in `_calls`, by rpcId, until it is done; a withdrawal that could not be delivered
    stays there, and goes with the next connection.

    On a connection a call sends the frames it has not sent on that one (`_Call.sent`, counted
    per connection), `Ask` before `Withdraw`: at once when it is made while connected, and on
    every new connection.

    Reading: the asks waiting for their reply (`_waiting`) read the socket themselves, one at
    a time; `_reader` is the call whose ask reads, `None` while none waits:

        waiting ──its reply, read by the reader──> done
        waiting ──nobody reads, or it is handed the socket──> reading
        reading ──its own reply, or its ask cancelled──> done, handing the socket over

    The reader connects when the connection is closed or down and hands every reply to its
    call (waking its ask: `_Call.woken`); when it is done it hands the socket to the ask that
    began to wait last (`_hand_over`), which first sends what a reader cancelled mid-send left
    unsent. So exactly one task reads while any ask waits, none does when none waits, and no
    task outlives its ask, with or without `async with`. There is no reader task: one in a
    task group of the provider's own would need `async with` (without it, no scope outlives
    every ask), and a reader task beside each ask, tried, doubled the asker's CPU per ask.

    Args:
        url: The host's URL as `uq serve` printed it; a `?token=` in it is used as the token.
            Or the URLs of several hosts on one database, tried in turn (they share a token).
        token: The host's token; else the first URL's, else `$UQ_TOKEN`.
        session: Names the requests of asks made without an agent (with an agent, its id is
            the session); default `<program>@<hostname>`.
        origin: Where the asks come from (the asking program, its folder), sent with every ask
            and shown with its questions; default none.
        unreachable_limit: Seconds without a useful exchange with any host (failed attempts,
            connections that drop, go silent or cannot store the ask) before waiting asks fail
            with `HOST_UNREACHABLE`; `None` waits for the host for ever.
        connect_timeout: Seconds one connection attempt to a host may take, and a frame sent
            on a connection may wait for the host's first answer.
        ca: A PEM file of the certificate authority that signed an `https://` host's
            certificate, trusted besides the system's (and `SSL_CERT_FILE`'s).
        require_asker: Refuse a token that can answer (`FORBIDDEN`, before anything is asked),
            and a host that does not say a token's role: for a permission gate, which an agent
            holding such a token could pass by answering itself. Otherwise such a token is
            used, with one warning. A gate's asks also fail at once when no host answers their
            first connection (`connect()` says the same up front).

    Raises:
        UserQuestionError: `BAD_TOKEN` when no token is given anywhere, `BAD_REQUEST` for a URL
            that is not `http(s)://` or `ws(s)://`, no URL at all, or a `ca` that cannot be
            read.
    """

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        token: str | None = None,
        session: str | None = None,
        unreachable_limit: float | None = UNREACHABLE_LIMIT,
        connect_timeout: float = CONNECT_TIMEOUT,
        origin: Origin | None = None,
        ca: str | os.PathLike[str] | None = None,
        require_asker: bool = False,
    ) -> None:
        hosts = [parse_host_url(one) for one in ([url] if isinstance(url, str) else url)]
        if not hosts:
            raise UserQuestionError("RemoteProvider needs a host URL", ErrorCode.BAD_REQUEST)
        token = token or hosts[0][2] or os.environ.get("UQ_TOKEN")
        if not token:
            raise UserQuestionError(
                "RemoteProvider needs the host's token: pass token=, use the URL `uq serve` "
                "printed (with ?token=), or set UQ_TOKEN",
                ErrorCode.BAD_TOKEN,
            )
        self.urls = tuple(base for base, _, _ in hosts)
        """Every host's base URL, in the order they are tried."""
        self.url = self.urls[0]
        """The host connected to last (at first, the first one)."""
        self.session = session or _default_session()
        self.origin = origin
        self._ws_urls = [ws_url for _, ws_url, _ in hosts]
        tls = client_context(ca) if any(wants_tls(ws_url) for ws_url in self._ws_urls) else None
        self._tls = [tls if wants_tls(ws_url) else None for ws_url in self._ws_urls]
        """The context each host's certificate is verified with (`None` for plain ws)."""
        self._token = token
        self._limit = unreachable_limit
        self._connect_timeout = connect_timeout
        self._calls: dict[str, _Call] = {}
        self._ws: ClientConnection | None = None
        self._host = 0
        """The index of the host to connect to next."""
        self._waiting: dict[_Call, None] = {}
        """The calls whose asks wait for their reply, in the order they began to wait."""
        self._reader: _Call | None = None
        """The call whose ask reads the socket for every call; `None` while none waits."""
        self._entered = False
        self._down_since: float | None = None
        """The unreachable clock: since when the host has given nothing useful; `None` while
        nothing has failed since the last steady connection."""
        self._backoff = BACKOFF_FIRST
        """The pause before the next attempt, once one is owed."""
        self._owe_pause = False
        """Whether an attempt failed or a connection dropped since the last pause."""
        self._problem = "no connection yet"
        """What went wrong last, for the message of `HOST_UNREACHABLE`."""
        self._opened_at = 0.0
        self._useful = False
        """Whether the host has answered a call on the current connection."""
        self._awaiting: float | None = None
        """When the oldest frame the host has not answered went on the current connection."""
        self._recv_scope: anyio.CancelScope | None = None
        """The scope of the reader's wait for a frame, whose deadline a frame sent meanwhile
        brings forward."""
        self.role: str | None = None
        """The role the host gave the token on the last connection (`asker`, `person`,
        `admin`); `None` before one, or from a host older than roles."""
        self._require_asker = require_asker
        self._warned = False
        self._ever_connected = False

    def __repr__(self) -> str:
        return f"<RemoteProvider {self.url} session={self.session!r}>"

    async def __aenter__(self) -> Self:
        self._entered = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._entered = False
        await self.aclose()

    async def aclose(self) -> None:
        """Deliver pending withdrawals, then close the socket.

        Delivering (each host tried once, as `connect()` does, when not connected) takes
        `WITHDRAW_TIMEOUT` or `connect_timeout` at most, whichever is less: a host that came back
        confirms at once, and one that does not confirm is not waited for long.
        """
        # Those whose ask is not still delivering them itself.
        owed = [
            call for call in self._calls.values() if call.withdrawal and call not in self._waiting
        ]
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(self._withdraw_window() if owed else 0):
                if owed and self._ws is None:
                    with contextlib.suppress(UserQuestionError):
                        await self.connect()
                for call in owed if self._ws is not None else ():
                    await self._complete(call)
            if self._ws is not None:
                ws, self._ws = self._ws, None
                await ws.close()
        self._down_since, self._owe_pause = None, False  # closed on purpose: nothing failed

    def _withdraw_window(self) -> float:
        """How long a withdrawal's confirmation is waited for: an answer like any other, so not
        past `connect_timeout`, and never past `WITHDRAW_TIMEOUT`."""
        return min(WITHDRAW_TIMEOUT, self._connect_timeout)

    async def connect(self) -> None:
        """Connect now, trying each host once, rather than at the first ask: so that a caller
        learns at once that no host answers or that the token is refused. Call it inside
        `async with`, before asking; the connection then serves the asks.

        Raises:
            UserQuestionError: `HOST_UNREACHABLE` when no host answered within
                `connect_timeout`, `UNAUTHORIZED` when the token is refused, `FORBIDDEN`
                with `require_asker` when the token can answer.
        """
        if self._ws is not None:
            return
        problem: Exception | None = None
        for _ in self.urls:
            outcome = await self._attempt()
            if isinstance(outcome, ClientConnection):
                return
            if isinstance(outcome, AskFailed):
                raise UserQuestionError(outcome.message, outcome.code)
            problem = outcome
        raise UserQuestionError(
            f"the host at {' or '.join(self.urls)} did not answer; is `uq serve` running? "
            f"({problem})",
            ErrorCode.HOST_UNREACHABLE,
        )

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Ask through the host under a new rpcId and wait for the answer."""
        return await self.ask_with_id(uuid.uuid4().hex, request)

    async def ask_with_id(
        self, rpc_id: str, request: AskUserQuestionRequest
    ) -> AskUserQuestionAnswer:
        """Ask under `rpc_id`: a process that restarts may re-attach to its request, and get the
        answer given while it was away, by asking again with the same rpcId and questions.

        Raises:
            UserQuestionError: `ASK_CANCELLED` (a human dismissed it), `HOST_UNREACHABLE`,
                `UNAUTHORIZED` (wrong token), `REQUEST_TOO_LARGE` (over `MAX_FRAME_BYTES`),
                or the code of a request the host refused (`TOO_MANY_QUESTIONS`,
                `TOO_MANY_PENDING`, `BAD_REQUEST`, ...).
        """
        earlier = self._calls.get(rpc_id)
        if earlier is not None and not earlier.withdrawal:  # an owed withdrawal gives way
            raise UserQuestionError(
                f"rpcId {rpc_id!r} is already being asked by this provider", ErrorCode.BAD_REQUEST
            )
        session = request.agent.id if request.agent is not None else self.session
        ask = Ask(
            rpc_id=rpc_id,
            session_id=session,
            questions=request.questions,
            origin=self.origin,
            approval=request.approval,
        )
        frame = ask.model_dump_json()
        if len(frame.encode()) > MAX_FRAME_BYTES:
            raise UserQuestionError(
                f"the request is {len(frame.encode())} bytes as JSON; a host takes at most "
                f"{MAX_FRAME_BYTES}: shorten the detail or split the questions",
                ErrorCode.REQUEST_TOO_LARGE,
            )
        while True:
            call = self._calls[rpc_id] = _Call(rpc_id, (frame,))
            try:
                reply = await self._complete(call)
            except anyio.get_cancelled_exc_class():
                signal = request.signal
                reason, note = withdraw_reason(signal), withdraw_note(signal)
                withdrawal = self._withdraw_later(call, reason, note)
                with anyio.move_on_after(self._withdraw_window(), shield=True):
                    await self._complete(withdrawal)
                raise
            finally:
                if not self._entered and not self._calls:
                    await self.aclose()
            if not isinstance(reply, AskFailed) or reply.code != ErrorCode.RATE_LIMITED:
                break
            # Refused, so nothing is stored: a cancellation meanwhile has nothing to withdraw.
            await anyio.sleep(_rate_pause(reply.retry_after))
        if isinstance(reply, AskFailed):
            if reply.code == ErrorCode.HOST_UNREACHABLE and rpc_id not in self._calls:
                self._withdraw_later(call, "cancelled")  # if the host comes back, take it down
            raise UserQuestionError(reply.message, reply.code)
        return settled_answer(reply.outcome, reply.answer)

    # -- the connection -----------------------------------------------------------------------

    def _withdraw_later(
        self, call: _Call, reason: WithdrawReason, note: str | None = None
    ) -> _Call:
        """Replace `call` by its withdrawal, sent now if connected and on every reconnection.

        On a new connection the `Ask` goes first, so the withdrawal can never reach the host
        before the `Ask` it withdraws, whichever connection that `Ask` travelled on.
        """
        withdraw = Withdraw(rpc_id=call.rpc_id, reason=reason, note=note).model_dump_json()
        # It has sent what its ask had sent on the same connection: the `Ask` at most.
        sent = min(call.sent, 1)
        withdrawal = _Call(call.rpc_id, (call.frames[0], withdraw), call.on, sent)
        self._calls[call.rpc_id] = withdrawal
        return withdrawal

    def _done(self, call: _Call, reply: AskSettled | AskFailed) -> None:
        """`call` (one of `_calls`) is done: it leaves them, and its ask wakes with `reply`."""
        del self._calls[call.rpc_id]
        call.reply = reply
        call.woken.set()
        if not self._calls:
            self._down_since = None  # the unreachable clock runs only while asks wait

    async def _complete(self, call: _Call) -> AskSettled | AskFailed:
        """Send `call`, then wait for its reply, reading the socket while handed it."""
        await self._send(call)
        self._waiting[call] = None
        if self._reader is None:
            self._reader = call
        try:
            while call.reply is None:
                if self._reader is call:
                    await self._read_until(call)
                else:
                    await call.woken.wait()
        finally:
            del self._waiting[call]
            if self._reader is call:
                self._hand_over()
        return call.reply

    def _hand_over(self) -> None:
        """Hand the socket to the ask that began to wait last, if any: its reply is likely to
        come last, so it reads the most replies for the others before handing it over again
        (to the oldest, each would read one reply: one pass of the event loop more per ask)."""
        waiting = (call for call in reversed(self._waiting) if call.reply is None)
        self._reader = next(waiting, None)
        if self._reader is not None:
            self._reader.woken.set()

    async def _send(self, call: _Call) -> None:
        """Send the frames of `call` that the connection has not had, if connected."""
        ws = self._ws
        if ws is None or call.reply is not None:
            return
        try:
            if call.on is not ws:
                call.on, call.sent = ws, 0  # nothing has gone on this connection yet
            # Counted before it is sent, so that a task sending the same call meanwhile sends
            # the next frame; a new connection (adopted meanwhile) starts the count again.
            while call.on is ws and call.sent < len(call.frames):
                call.sent += 1
                self._expect_answer()
                await ws.send(call.frames[call.sent - 1])
        except ConnectionClosed:
            self._lost(ws)

    def _expect_answer(self) -> None:
        """A frame goes out: unless one already waits, the host has `connect_timeout` seconds
        from now to answer, and a reader waiting without a deadline gets this one."""
        if self._awaiting is not None:
            return
        self._awaiting = anyio.current_time()
        if self._recv_scope is not None:
            self._recv_scope.deadline = min(self._recv_scope.deadline, self._answer_deadline())

    def _answer_deadline(self) -> float:
        """Until when the reader waits for the next frame: for ever, unless one is owed."""
        if self._awaiting is None:
            return float("inf")
        return self._awaiting + self._connect_timeout

    async def _read_until(self, call: _Call) -> None:
        """Read the socket for every call, connecting when needed, until `call` has its reply
        (the asks failing meanwhile, when the host stays unreachable, is one too)."""
        if (ws := self._ws) is not None:  # send what a reader cancelled mid-send left unsent
            for other in [other for other in self._calls.values() if other.owes(ws)]:
                await self._send(other)
        while call.reply is None:
            ws = self._ws or await self._connect()
            if ws is None:
                continue  # the asks have failed; a withdrawal tries the host again
            with anyio.CancelScope(deadline=self._answer_deadline()) as waiting:
                self._recv_scope = waiting
                try:
                    message: str | bytes | None = await ws.recv()
                except ConnectionClosed:
                    message = None
                finally:
                    self._recv_scope = None
            if waiting.cancelled_caught:
                ws.transport.abort()  # silent: a closing handshake would wait for it too
                self._lost(ws)
                self._problem = f"the host did not answer within {self._connect_timeout:g} s"
            elif message is None:
                self._lost(ws)
            elif self._dispatch(message) == "wait out":
                await self._ask_again_later(ws)

    def _dispatch(self, message: str | bytes) -> str:
        """Hand a frame to its call: `useful` (the host answered a call), `wait out` (its store
        could not take it), or `ignored` (nothing any call waits for)."""
        try:
            reply = AskerReply.model_validate_json(message)
        except ValidationError as error:
            return "useful" if self._unreadable(message, error) else "ignored"
        payload = reply.payload
        call = None if reply.rpc_id is None else self._calls.get(reply.rpc_id)
        if call is None or isinstance(payload, Pong):
            return "ignored"
        if isinstance(payload, AskFailed) and payload.code in _WAIT_OUT:
            self._problem = f"the host said {payload.code}: {payload.message}"
            return "wait out"
        self._answered()
        if isinstance(payload, AskSettled | AskFailed):
            self._done(call, payload)
        return "useful"

    def _answered(self) -> None:
        """The host answered a call on the current connection: it is useful, and owes nothing."""
        self._useful = True
        self._awaiting = None

    def _unreadable(self, message: str | bytes, error: ValidationError) -> bool:
        """A frame that is no `AskerReply`: from a newer host, nothing any call waits for; but
        a settlement whose answer cannot be read fails its ask, `BAD_ANSWER` saying why (and
        counts as an answer: `True`)."""
        refused = frame_refusal(error, what="reply")
        if refused.code != ErrorCode.BAD_ANSWER:
            return False
        try:
            rpc_id = load_json(message).get("rpcId")  # an object: only its answer is wrong
        except JSONRefused:
            return False
        call = self._calls.get(rpc_id) if isinstance(rpc_id, str) else None
        if call is None:
            return False
        self._answered()
        self._done(call, AskFailed(code=refused.code, message=refused.message))
        return True

    async def _ask_again_later(self, ws: ClientConnection) -> None:
        """Leave a host whose store is down; every call is sent again on the next connection,
        after the pause, to the next host if there are several (its own link to the database
        may be fine)."""
        self._lost(ws)
        self._host = (self._host + 1) % len(self.urls)
        await ws.close()

    def _lost(self, ws: ClientConnection) -> None:
        """`ws` is gone (closed, silent, or left): a pause is owed before the next attempt, and
        the unreachable clock runs on, unless `ws` was steady (useful for `STEADY_AFTER`
        seconds): then a new outage starts now. Close code 4401 or 4403 fails every ask."""
        if self._ws is not ws:
            return
        self._ws, self._awaiting = None, None
        now = anyio.current_time()
        if self._useful and now - self._opened_at >= STEADY_AFTER:
            self._down_since, self._backoff = now, BACKOFF_FIRST
        elif self._down_since is None:
            self._down_since = now
        self._owe_pause = True
        stop = self._stopped(ws)
        if stop is not None:
            self._fail(stop, withdrawals=True)
        elif ws.close_code is not None:
            self._problem = f"the connection closed with code {ws.close_code}"

    def _stopped(self, ws: ClientConnection) -> AskFailed | None:
        """The refusal a close code that stops (4401, 4403) means; `None` for any other."""
        if ws.close_code not in _STOP_CODES:
            return None
        code, said = _STOP_CODES[ws.close_code]
        reason = f": {ws.close_reason}" if ws.close_reason else ""
        return AskFailed(code=code, message=f"the host at {self.url} {said}{reason}")

    async def _connect(self) -> ClientConnection | None:
        """Connect, after the pause owed, and send every call again; `None` once the host has
        been unreachable for too long, or refused us, after failing the waiting asks."""
        while True:
            if self._owe_pause:
                left = self._limit_left()
                if left is not None and left <= 0:
                    where = " or ".join(self.urls)
                    message = (
                        f"the host at {where} has been unreachable for {self._limit:g} s; "
                        f"is `uq serve` running? ({self._problem})"
                    )
                    self._fail(AskFailed(code=ErrorCode.HOST_UNREACHABLE, message=message))
                    return None
                pause = self._backoff * random.uniform(0.5, 1.0)
                await anyio.sleep(pause if left is None else min(pause, left))
                self._backoff = min(self._backoff * 2, BACKOFF_MAX)
                self._owe_pause = False
            outcome = await self._attempt()
            if isinstance(outcome, ClientConnection):
                return outcome
            if isinstance(outcome, AskFailed):  # retrying cannot help: give up on all
                self._fail(outcome, withdrawals=True)
                return None
            self._problem = str(outcome) or type(outcome).__name__
            if self._require_asker and not self._ever_connected and self._host == 0:
                where = " or ".join(self.urls)
                message = f"the host at {where} did not answer; is `uq serve` running? ({outcome})"
                self._fail(
                    AskFailed(code=ErrorCode.HOST_UNREACHABLE, message=message), withdrawals=True
                )
                return None
            if self._down_since is None:
                self._down_since = anyio.current_time()
            self._owe_pause = True

    def _limit_left(self) -> float | None:
        """Seconds before the unreachable clock reaches the limit; `None` without a limit or
        while it does not run."""
        if self._limit is None or self._down_since is None:
            return None
        return self._down_since + self._limit - anyio.current_time()

    async def _attempt(self) -> ClientConnection | AskFailed | Exception:
        """One attempt on the current host: the connection, adopted; the host's refusal (a status
        under 500, a redirect, a certificate that cannot be verified, a role that is not an
        asker's where `require_asker`: retrying cannot help); or the problem, the next host
        being up next."""
        try:
            ws = await self._open()
        except InvalidStatus as error:
            if error.response.status_code < 500:
                return _refused(self.urls[self._host], error.response)
            problem: Exception = error
        except ssl.SSLCertVerificationError as error:
            message = untrusted(self.urls[self._host], error)
            return AskFailed(code=ErrorCode.HOST_UNREACHABLE, message=message or str(error))
        except (OSError, TimeoutError, InvalidHandshake) as error:
            problem = error
        else:
            refusal = self._check_role(ws)
            if refusal is not None:
                await ws.close()
                return refusal
            await self._adopt(ws)
            if self._ws is ws:
                return ws
            stop = self._stopped(ws)
            if stop is not None:
                return stop
            problem = ConnectionError("the connection closed at once")
        self._host = (self._host + 1) % len(self.urls)  # try the next host, if any
        return problem

    async def _open(self) -> ClientConnection:
        """One attempt to connect to the current host, following no redirect."""
        return await _Connect(
            self._ws_urls[self._host],
            additional_headers={"Authorization": f"Bearer {self._token}"},
            max_size=MAX_REPLY_BYTES,
            open_timeout=self._connect_timeout,
            close_timeout=CLOSE_TIMEOUT,
            compression=None,  # frames are small: compressing them costs more than it saves
            ssl=self._tls[self._host],
        )

    def _check_role(self, ws: ClientConnection) -> AskFailed | None:
        """Keep the role the host gave the token (`ROLE_HEADER`, read once: said twice, or in
        words no host uses, it says nothing); refuse a token that can answer, or a host that does
        not say, when `require_asker`; otherwise warn of a token that can answer, once."""
        said = [] if ws.response is None else ws.response.headers.get_all(ROLE_HEADER)
        self.role = said[0] if len(said) == 1 and said[0] in _ROLES else None
        if self.role == _ASKER:
            return None
        url = self.urls[self._host]
        if self._require_asker:
            if said and self.role is None:
                message = (
                    f"{url} said the token's role unreadably ({ROLE_HEADER}: "
                    f"{', '.join(said)!r}), so it may answer; {_ASKER_HINT}"
                )
            elif self.role is None:
                message = (
                    f"{url} did not say what the token may do (a host older than roles, where "
                    f"every token answers); upgrade it, and {_ASKER_HINT}"
                )
            else:
                message = (
                    f"the token for {url} can answer questions (its role is {self.role}), so an "
                    f"agent holding it could approve its own requests; {_ASKER_HINT}"
                )
            return AskFailed(code=ErrorCode.FORBIDDEN, message=message)
        if said and not self._warned:
            self._warned = True
            logger.warning(
                "the token for %s can answer questions (its role is %s), so an agent holding it "
                "could answer its own; %s",
                url,
                self.role or f"said unreadably as {', '.join(said)!r}",
                _ASKER_HINT,
            )
        return None

    async def _adopt(self, ws: ClientConnection) -> None:
        """Make `ws` the connection and send every call on it again. The pause and the
        unreachable clock stay as they are: a handshake is not yet a useful exchange."""
        self._ws, self._opened_at, self._useful, self._awaiting = (
            ws,
            anyio.current_time(),
            False,
            None,
        )
        self.url = self.urls[self._host]
        for call in list(self._calls.values()):
            await self._send(call)

    def _fail(self, failure: AskFailed, *, withdrawals: bool = False) -> None:
        """Fail every waiting ask; withdrawals stay, to be sent if the host comes back, unless
        the host refused us (then they could never be delivered)."""
        self._problem = failure.message
        for call in list(self._calls.values()):
            if withdrawals or not call.withdrawal:
                self._done(call, failure)
        self._down_since = None


class _Connect(connect):
    """`websockets`' `connect`, following no redirect: a 3xx answer is raised as it came
    (`InvalidStatus`), so that the provider refuses it, naming where it would have gone, and
    the token never travels to an address the person did not give."""

    def process_redirect(self, exc: Exception) -> Exception | str:
        return exc


def _refused(url: str, response: Response) -> AskFailed:
    status = response.status_code
    if 300 <= status < 400:
        where = response.headers.get_all("Location")
        return AskFailed(
            code=ErrorCode.HOST_UNREACHABLE,
            message=f"{url} redirected the asker connection (HTTP {status}) to "
            f"{', '.join(where) or 'nowhere'}; an asker never follows a redirect: if that is "
            "the host, give its URL instead",
        )
    if status == 401:
        return AskFailed(
            code=ErrorCode.UNAUTHORIZED,
            message=f"the host at {url} refused the token (HTTP 401); use the token that "
            "`uq serve` printed",
        )
    return AskFailed(
        code=ErrorCode.HOST_UNREACHABLE,
        message=f"{url} refused the asker connection with HTTP {status}; "
        "is it a user-questions host?",
    )


def _rate_pause(retry_after: float | None) -> float:
    """How long to wait before asking again after `RATE_LIMITED`: the host's `retryAfter`, at
    least `RATE_PAUSE_MIN` and at most `RATE_PAUSE_MAX` (a host's word is not followed beyond
    it: the ask simply asks again), stretched by up to a tenth so that the asks of one token
    that were refused together do not come back together."""
    pause = RATE_PAUSE_MIN if retry_after is None else retry_after
    return min(max(pause, RATE_PAUSE_MIN), RATE_PAUSE_MAX) * random.uniform(1.0, 1.1)


def _default_session() -> str:
    program = Path(sys.argv[0]).stem if sys.argv and sys.argv[0] else ""
    return f"{program or 'python'}@{socket.gethostname()}"
