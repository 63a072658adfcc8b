"""`PageConnection`: the page protocol (`/ws`), one browser (or `uq answer`'s watch) at a time.

On connect the page gets every pending request's `question/requested` frame, then every change as it
happens (`Hub.subscribe`); each frame the page sends gets exactly one reply: a receipt for a
`client-response`, a pong for a `ping`, an `error` frame for anything unreadable that names no
rpcId. Replies and pushed frames share the socket under one lock, so they never interleave.

A page that connects to `/ws?replay=batch` gets the pending requests in `question/replay`
frames instead, a batch of them per WebSocket message (`replay_batches`): the first batch is
small, so that the page shows the count and its first cards at once, the others carry up to
`REPLAY_BATCH` requests. Each request's frame is written by the hub around its questions'
JSON text; a batch only joins them. docs/protocol.md has the frames.

With `/ws?replay=paced` (the inbox page), the page pings once it has read each batch, and the
host keeps at most `REPLAY_WINDOW` batches unread ahead of it: a replay of 100,000 requests is
36 MB, and sent as fast as the socket takes it, megabytes of it sat in the socket buffers ahead
of the receipt of an answer given meanwhile (hundreds of milliseconds, `benchmarks/`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import anyio
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected

from user_questions._languages import from_accept_language, speaking
from user_questions.errors import UserQuestionError
from user_questions.frames import (
    ClientResponse,
    ErrorFrame,
    ErrorPayload,
    Frame,
    Ping,
    Receipt,
    ReceiptFrame,
)
from user_questions.host._frame_text import replay_frame
from user_questions.host.endpoints.connection import HostConnection
from user_questions.host.endpoints.decoding import PONG, FrameError, parse, receive_texts
from user_questions.host.hub import PageSubscription
from user_questions.outcomes import Surface

__all__ = [
    "BEHIND_CLOSE_CODE",
    "REPLAY_BATCH",
    "REPLAY_WINDOW",
    "PageConnection",
    "replay_batches",
]

BEHIND_CLOSE_CODE = 1013
"""The close code of a page the hub dropped (too far behind, or the host stopping): the page
reconnects and gets every pending request replayed."""
REPLAY_BATCH = 1000
"""Requests in one `question/replay` frame at most (the first carries `_FIRST_BATCH`)."""
REPLAY_WINDOW = 2
"""Batches of a paced replay sent ahead of the page's pings (`?replay=paced`)."""
_FIRST_BATCH = 50
_BATCH_BYTES = 1 << 20
"""A batch closes once its requests' frames reach this many characters (a larger frame goes
alone)."""
_GONE = (WebSocketDisconnect, WebSocketDisconnected)
"""The peer left: read (a disconnect), or found by a send after it closed (a reply that took long,
as one does while the store is away)."""
_KINDS: dict[str, type[Frame]] = {"client-response": ClientResponse, "ping": Ping}


def replay_batches(frames: Sequence[str]) -> Iterator[str]:
    """The `question/replay` frames that carry `frames` (serialised `question/requested`
    frames, oldest first), in order, each joined as it is needed; one frame with no requests
    when there are none."""
    start, limit = 0, _FIRST_BATCH
    while True:
        end, size = start, 0
        while end < len(frames) and end - start < limit and (end == start or size < _BATCH_BYTES):
            size += len(frames[end])
            end += 1
        yield replay_frame(len(frames), frames[start:end])
        if end == len(frames):
            return
        start, limit = end, REPLAY_BATCH


class PageConnection(HostConnection):
    """A page's WebSocket: its subscription to the hub and the lock its frames are sent under."""

    kind = "page"

    def __init__(self, websocket: WebSocket) -> None:
        super().__init__(websocket)
        replay = websocket.query_params.get("replay")
        self._language = from_accept_language(websocket.headers.get("accept-language"))
        """The page's language (its `Accept-Language`): what its receipts say is written in."""
        self._batched = replay in ("batch", "paced")
        self._read: anyio.Semaphore | None = None
        """While a paced replay is sent: a slot per batch the host may send ahead of the
        page's pings."""
        if replay == "paced":
            self._read = anyio.Semaphore(REPLAY_WINDOW, max_value=REPLAY_WINDOW)
        self._lock = anyio.Lock(fast_acquire=True)
        self._subscription: PageSubscription | None = None

    async def serve(self) -> None:
        """Replay the pending requests, push every change, and answer each frame."""
        self._subscription = subscription = self.hub.subscribe(self.sees)
        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._push, subscription)
                with contextlib.suppress(*_GONE):
                    async for text in receive_texts(self.websocket):
                        await self._send(await self._reply(text))
                task_group.cancel_scope.cancel()
        finally:
            subscription.close()

    async def _send(self, frame: str) -> None:
        async with self._lock:
            await self.websocket.send_text(frame)

    async def _push(self, subscription: PageSubscription) -> None:
        with contextlib.suppress(*_GONE):  # the page left: the reader sees it too
            snapshot = subscription.snapshot
            # The lock is taken per message, so that a receipt is not held behind a long replay.
            for frame in replay_batches(snapshot) if self._batched else snapshot:
                if self._read is not None:
                    await self._read.acquire()
                await self._send(frame)
            self._read = None  # the replay is sent: later pings are only pings
            async for frame in subscription.frames:
                await self._send(frame)
            await self.websocket.close(BEHIND_CLOSE_CODE)

    async def _reply(self, text: str | bytes) -> str:
        try:
            frame = parse(text, _KINDS)
        except FrameError as error:
            if error.rpc_id is None:
                return _error_frame(error)
            refusal = Receipt(accepted=False, reason="bad-response", message=error.message)
            return ReceiptFrame(rpc_id=error.rpc_id, payload=refusal).model_dump_json()
        if isinstance(frame, Ping):
            if self._read is not None and self._read.value < REPLAY_WINDOW:
                self._read.release()  # the page has read a batch of the replay
            return PONG
        assert isinstance(frame, ClientResponse)
        try:
            with speaking(self._language):  # a counted approval's receipt, in the page's
                receipt = await self.hub.respond(
                    frame, via=Surface.WEB, by=self.person, sees=self.sees
                )
        except UserQuestionError as error:  # the store failed: nothing was settled; try again
            return _error_frame(error)
        except Exception:
            return _error_frame(self.internal_error())
        return ReceiptFrame(rpc_id=frame.rpc_id, payload=receipt).model_dump_json()


def _error_frame(error: UserQuestionError) -> str:
    payload = ErrorPayload(code=str(error.code), message=error.message)
    return ErrorFrame(payload=payload).model_dump_json()
