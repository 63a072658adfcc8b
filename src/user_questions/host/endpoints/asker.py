"""`AskerConnection`: the asker protocol (`/ws/ask`), one `RemoteProvider` (or other asker).

An asker sends `ask` (submit, or re-attach under the same rpcId), `withdraw` and `ping`; each gets
one reply at once (`ask/pending`, `ask/settled`, `ask/error`, `pong`), and every request still
pending on this connection gets its `ask/settled` when it settles. A reply is sent at once by the
task that read the frame; a settlement (reported by the hub as it happens, without waiting) goes
through an outbox to a task of its own. Both send under one lock, so frames never interleave, and a
request's reply goes out before its settlement can: the settlement needs an answer to the request,
which no page has before the reply's turn. docs/protocol.md has the frames.

On a database that several hosts share, a host that loses it (`STORE_UNAVAILABLE`) tells each
request it watches for this asker with an `ask/error` of that code, and stops watching them: the
asker asks again, on another host that may still reach the database, and re-attaches there.
"""

from __future__ import annotations

import contextlib
import json
import math

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
from user_questions.host.endpoints.connection import HostConnection
from user_questions.host.endpoints.decoding import PONG, FrameError, parse, receive_texts
from user_questions.host.gate.fair_share import share_of
from user_questions.host.gate.roles import audience_of, withdrawer
from user_questions.host.stores import StoredQuestion
from user_questions.outcomes import Surface

__all__ = ["AskerConnection"]

_GONE = (WebSocketDisconnect, WebSocketDisconnected)
"""The peer left: read (a disconnect), or found by a send after it closed (a reply that took long,
as one does while the store is away)."""
_KINDS: dict[str, type[Frame]] = {"ask": Ask, "withdraw": Withdraw, "ping": Ping}


class AskerConnection(HostConnection):
    """An asker's WebSocket: the requests it watches and the outbox of its replies."""

    kind = "asker"

    def __init__(self, websocket: WebSocket) -> None:
        super().__init__(websocket)
        self._outbox, self._settlements = anyio.create_memory_object_stream[str](math.inf)
        self._lock = anyio.Lock(fast_acquire=True)
        self._watching: dict[str, Disposer] = {}
        """The pending requests asked on this connection: the remover of each one's watcher."""
        self._watcher = self._settled
        """Each request's watcher: one bound method for all, where each ask made one (kept
        while the request is pending)."""

    async def serve(self) -> None:
        """Take asks and withdrawals; report each request's settlement once it happens."""
        stats = self.websocket.app.state.store.stats
        lost = stats.on_fault(self._store_lost) if stats.shared else nothing
        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._deliver)
                with contextlib.suppress(*_GONE):
                    async for text in receive_texts(self.websocket):
                        await self._send(await self._reply(text))
                task_group.cancel_scope.cancel()
        finally:
            lost()
            for stop in self._watching.values():
                stop()
            self._outbox.close()
            self._settlements.close()

    async def _send(self, frame: str) -> None:
        async with self._lock:
            await self.websocket.send_text(frame)

    async def _deliver(self) -> None:
        with contextlib.suppress(*_GONE):  # the asker left: it will re-attach
            async for frame in self._settlements:
                await self._send(frame)

    async def _reply(self, text: str | bytes) -> str:
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
            return _failed(usable_id(frame.rpc_id), self.internal_error())

    async def _ask(self, frame: Ask) -> str:
        watcher = None if frame.rpc_id in self._watching else self._watcher
        record, stop = await self.hub.submit(
            frame.rpc_id,
            frame.session_id,
            frame.questions,
            watcher=watcher,
            asked_by=self.person,
            origin=frame.origin,
            audience=audience_of(self.identity),
            approval=frame.approval,
            deadline=None if self.identity is None else self.identity.deadline,
            escalate=() if self.identity is None else self.identity.escalate,
            remind=None if self.identity is None else self.identity.remind,
            approvals=1 if self.identity is None else self.identity.approvals,
            share=share_of(self.identity),
        )
        if not record.pending:
            return settled_reply(record)
        if watcher is not None:
            self._watching[record.own_rpc_id] = stop
        return pending_reply(record.own_rpc_id)

    async def _withdraw(self, frame: Withdraw) -> str:
        stop = self._watching.pop(frame.rpc_id, None)
        if stop is not None:
            stop()
        own = await self.hub.own(frame.rpc_id, self.person)
        record = await self.hub.withdraw(
            frame.rpc_id if own is None else own.rpc_id,
            via=Surface.ASKER,
            by=self.person,
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
            self._outbox.send_nowait(_failed(rpc_id, fault))

    def _settled(self, record: StoredQuestion) -> None:
        self._watching.pop(record.own_rpc_id, None)
        self._outbox.send_nowait(settled_reply(record))


def _failed(rpc_id: str | None, error: UserQuestionError) -> str:
    payload = AskFailed(code=str(error.code), message=error.message, retry_after=error.retry_after)
    return AskerReply(rpc_id=rpc_id, payload=payload).model_dump_json()
