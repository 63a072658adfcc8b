"""`AskerConnection`: the asker protocol (`/ws/ask`), one `RemoteProvider` (or other asker).

An asker sends `ask` (submit, or re-attach under the same rpcId), `withdraw` and `ping`; each gets
one reply at once (`ask/pending`, `ask/settled`, `ask/error`, `pong`), and every request still
pending on this connection gets its `ask/settled` when it settles. docs/protocol.md has the frames.

`AskerSession` answers the frames and watches the requests; it sends through a function it is
given, which two ways of serving a socket provide:

- under the host's own server (`uq serve`), the socket is handed over (`host/_hand_over.py`):
  once accepted, no task waits on it. `_TakenAsker` takes each frame as it arrives and answers the
  frames in turn in a task that lives only while some wait; replies and settlements are written to
  the socket at once. An asker waiting for its answer costs its socket and its request, not a
  task, a scope and every layer's frame (docs/performance.md: a fleet of agents on one host).
- elsewhere (Starlette's test client, another ASGI server), `AskerConnection.serve` reads the
  frames in the connection's task, and a settlement (reported by the hub as it happens, without
  waiting) goes through an outbox to a task of its own; both send under one lock.

Either way frames never interleave, and a request's reply goes out before its settlement can:
the settlement needs an answer to the request, which no page has before the reply is written.

On a database that several hosts share, a host that loses it (`STORE_UNAVAILABLE`) tells each
request it watches for this asker with an `ask/error` of that code, and stops watching them: the
asker asks again, on another host that may still reach the database, and re-attaches there.
"""

from __future__ import annotations

import collections
import contextlib
import json
import math
from collections.abc import Callable
from typing import Protocol

import anyio
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected

from user_questions._checks import usable_id
from user_questions._lifecycle.disposer import Disposer, nothing
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import (
    Ask,
    AskerReply,
    AskFailed,
    Frame,
    Ping,
    Withdraw,
)
from user_questions.host._frame_text import pending_reply, settled_reply
from user_questions.host._hand_over import HandOver, hand_over_of
from user_questions.host.endpoints.connection import (
    REVOKED_CLOSE_CODE,
    REVOKED_REASON,
    HostConnection,
    internal_error,
)
from user_questions.host.endpoints.decoding import PONG, FrameError, parse, receive_texts
from user_questions.host.gate.fair_share import share_of
from user_questions.host.gate.roles import audience_of, withdrawer
from user_questions.host.gate.security import Identity
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import Hub
from user_questions.host.stores import StoredQuestion, StoreStats
from user_questions.outcomes import Surface

__all__ = ["ANSWERING", "AskerConnection", "AskerTurns", "Turn"]

_GONE = (WebSocketDisconnect, WebSocketDisconnected)
"""The peer left: read (a disconnect), or found by a send after it closed (a reply that took long,
as one does while the store is away)."""
ANSWERING = 512
"""Frames of handed-over asker sockets answered at once, at most, host-wide (`AskerTurns`)."""
_KINDS: dict[str, type[Frame]] = {"ask": Ask, "withdraw": Withdraw, "ping": Ping}


class AskerSession:
    """What one asker's connection knows: the requests asked on it that it watches. It answers
    each frame (`reply`) and sends a request's settlement, or a lost store's error, through
    `push` as it happens."""

    def __init__(
        self, hub: Hub, stats: StoreStats, identity: Identity, push: Callable[[str], None]
    ) -> None:
        self.hub = hub
        self.identity = identity
        self._push = push
        self._watching: dict[str, Disposer] = {}
        """The pending requests asked on this connection: the remover of each one's watcher."""
        self._watcher = self._settled
        """Each request's watcher: one bound method for all, where each ask made one (kept
        while the request is pending)."""
        self._ended = False
        self._lost = stats.on_fault(self._store_lost) if stats.shared else nothing

    def __repr__(self) -> str:
        return f"<AskerSession of {self.identity.name}>"

    def end(self) -> None:
        """The socket ended: stop watching (the asker re-attaches, here or on another host)."""
        self._ended = True
        self._lost()
        watching, self._watching = self._watching, {}
        for stop in watching.values():
            stop()

    async def reply(self, text: str | bytes) -> str:
        """The one reply to a frame."""
        try:
            frame = parse(text, _KINDS)
        except FrameError as error:
            return _failed(error.rpc_id, error)
        if isinstance(frame, Ping):
            return PONG
        assert isinstance(frame, Ask | Withdraw)
        try:
            if isinstance(frame, Withdraw):
                return await self._withdraw(frame)
            return await self._ask(frame)
        except UserQuestionError as error:
            return _failed(usable_id(frame.rpc_id), error)
        except Exception:
            return _failed(usable_id(frame.rpc_id), internal_error(self))

    async def _ask(self, frame: Ask) -> str:
        identity = self.identity
        watcher = None if frame.rpc_id in self._watching else self._watcher
        record, stop = await self.hub.submit(
            frame.rpc_id,
            frame.session_id,
            frame.questions,
            watcher=watcher,
            asked_by=identity.name,
            origin=frame.origin,
            audience=audience_of(identity),
            approval=frame.approval,
            deadline=identity.deadline,
            escalate=identity.escalate,
            remind=identity.remind,
            approvals=identity.approvals,
            share=share_of(identity),
        )
        if not record.pending:
            return settled_reply(record)
        if watcher is not None:
            if self._ended:  # the asker left while it was stored: nobody to tell here
                stop()
            else:
                self._watching[record.own_rpc_id] = stop
        return pending_reply(record.own_rpc_id)

    async def _withdraw(self, frame: Withdraw) -> str:
        stop = self._watching.pop(frame.rpc_id, None)
        if stop is not None:
            stop()
        person = self.identity.name
        own = await self.hub.own(frame.rpc_id, person)
        record = await self.hub.withdraw(
            frame.rpc_id if own is None else own.rpc_id,
            via=Surface.ASKER,
            by=person,
            reason=frame.reason,
            note=frame.note,
            sees=withdrawer(self.identity),
        )
        if record is None:
            raise UserQuestionError(
                f"no request has rpcId {json.dumps(frame.rpc_id)}", ErrorCode.NOT_FOUND
            )
        return settled_reply(record)

    def _store_lost(self, fault: UserQuestionError | None) -> None:
        """Send the asker elsewhere for every request it waits for here, once this host has
        lost the database it shares with others."""
        if fault is None or fault.code != ErrorCode.STORE_UNAVAILABLE:
            return
        watching, self._watching = self._watching, {}
        for rpc_id, stop in watching.items():
            stop()
            self._push(_failed(rpc_id, fault))

    def _settled(self, record: StoredQuestion) -> None:
        self._watching.pop(record.own_rpc_id, None)
        self._push(settled_reply(record))


class AskerConnection(HostConnection):
    """An asker's WebSocket, served by the server once handed over (`_TakenAsker`), else by
    this connection's task with an outbox for the settlements."""

    kind = "asker"

    @classmethod
    async def endpoint(cls, websocket: WebSocket) -> None:
        hand_over = hand_over_of(websocket.scope)
        if hand_over is None:
            await cls(websocket).run()
            return
        connection = cls(websocket)
        await connection.accept()
        state = websocket.app.state
        session = AskerSession(
            connection.hub, state.store.stats, connection.identity, hand_over.send_text
        )
        _TakenAsker(session, hand_over, state.tokens, state.asker_turns)

    async def serve(self) -> None:
        """Take asks and withdrawals; report each request's settlement once it happens."""
        outbox, settlements = anyio.create_memory_object_stream[str](math.inf)
        lock = anyio.Lock(fast_acquire=True)
        stats = self.websocket.app.state.store.stats
        session = AskerSession(self.hub, stats, self.identity, outbox.send_nowait)

        async def send(frame: str) -> None:
            async with lock:
                await self.websocket.send_text(frame)

        async def deliver() -> None:
            with contextlib.suppress(*_GONE):  # the asker left: it will re-attach
                async for frame in settlements:
                    await send(frame)

        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(deliver)
                with contextlib.suppress(*_GONE):
                    async for text in receive_texts(self.websocket):
                        await send(await session.reply(text))
                task_group.cancel_scope.cancel()
        finally:
            session.end()
            outbox.close()
            settlements.close()


class Turn(Protocol):
    """What takes a turn (`AskerTurns`): a socket with a frame to answer."""

    def start(self) -> None:
        """Its turn has come: answer one frame, then tell the turns it is `done`."""


class AskerTurns:
    """Turns at answering the frames of handed-over asker sockets, host-wide: at most
    `ANSWERING` are answered at once, and a socket with a frame waiting gets the next free turn
    after every socket that was waiting before it, one frame a turn.

    A burst of asks (a fleet of agents starting together) would otherwise answer every frame at
    once, each in a task of its own holding its frames while it waits for its commit: memory the
    process keeps once the burst is over. Waiting its turn, a frame costs its text alone, and a
    socket that sends many cannot keep the others waiting (the server stops reading it while a
    few of its frames wait). The commits of the frames answered at once still share a disk write
    (`stores/_group_commit.py`)."""

    def __init__(self, at_once: int = ANSWERING) -> None:
        self._free = at_once
        self._waiting: collections.deque[Turn] = collections.deque()

    def __repr__(self) -> str:
        return f"<AskerTurns {self._free} free, {len(self._waiting)} waiting>"

    def want(self, asker: Turn) -> None:
        """`asker` has a frame to answer: start it now if a turn is free, else in its turn."""
        if self._free:
            self._free -= 1
            asker.start()
        else:
            self._waiting.append(asker)

    def done(self) -> None:
        """A turn ended: the socket that has waited longest gets it."""
        if self._waiting:
            self._waiting.popleft().start()
        else:
            self._free += 1


class _TakenAsker:
    """An asker's socket the server serves (a `Receiver`): its frames wait in `_frames` and are
    answered in its turns (`AskerTurns`), one frame a turn, each in a task of its own."""

    def __init__(
        self, session: AskerSession, hand_over: HandOver, tokens: Tokens, turns: AskerTurns
    ) -> None:
        self._hand_over = hand_over
        self._session = session
        self._turns = turns
        self._frames: list[str | bytes] = []
        self._in_line = False
        """Waiting for a turn or in one."""
        uncount = session.hub.metrics.connection(AskerConnection.kind)
        revoked = tokens.on_revoke(session.identity, self._revoked)
        self._undo = (uncount, revoked, self._session.end)
        hand_over.take(self)

    def __repr__(self) -> str:
        return f"<_TakenAsker of {self._session.identity.name}>"

    @property
    def backlog(self) -> int:
        return len(self._frames)

    def received(self, data: str | bytes) -> None:
        self._frames.append(data)
        if not self._in_line:
            self._in_line = True
            self._turns.want(self)

    def closed(self, code: int) -> None:
        self._frames.clear()  # the asker left: it asks again, or re-attaches, when it is back
        for undo in self._undo:
            undo()

    def start(self) -> None:
        """Its turn: answer its first frame."""
        self._hand_over.spawn(self._answer())

    def _revoked(self) -> None:
        self._hand_over.close(REVOKED_CLOSE_CODE, REVOKED_REASON)

    async def _answer(self) -> None:
        try:
            if self._frames:  # none when the socket ended while it waited for its turn
                reply = await self._session.reply(self._frames.pop(0))
                self._hand_over.send_text(reply)
                await self._hand_over.drained()
        finally:
            self._turns.done()
            if self._frames:
                self._turns.want(self)  # its next frame waits behind the others
            else:
                self._in_line = False
                self._hand_over.read_on()


def _failed(rpc_id: str | None, error: UserQuestionError) -> str:
    payload = AskFailed(code=str(error.code), message=error.message, retry_after=error.retry_after)
    return AskerReply(rpc_id=rpc_id, payload=payload).model_dump_json()
