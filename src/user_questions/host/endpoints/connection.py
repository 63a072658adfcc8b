"""`HostConnection`: one WebSocket of a host, whoever opened it, until it ends or its token is
revoked.

Each protocol is a subclass that owns its per-connection state and implements `serve()`
(`page.PageConnection` for `/ws`, `asker.AskerConnection` for `/ws/ask`); `endpoint` is the route's
handler. The base accepts the socket, records who opened it (`person`, a token's name), and when
that token is revoked meanwhile stops `serve()` and closes the socket with `REVOKED_CLOSE_CODE`. A
frame that makes a handler fail unexpectedly is answered with `INTERNAL_ERROR` (`internal_error`)
and logged, so that one frame never ends a connection and every other request on it. An open
connection is counted, by `kind`, in the hub's metrics (`uq_connections`).
"""

from __future__ import annotations

import contextlib
import logging

import anyio
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import ROLE_HEADER
from user_questions.host.gate.roles import viewer
from user_questions.host.gate.security import INTERNAL_ERROR_MESSAGE, Identity, identity_of
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import Hub, Sees

__all__ = ["REVOKED_CLOSE_CODE", "REVOKED_REASON", "HostConnection", "internal_error"]

logger = logging.getLogger("user_questions.host")

REVOKED_CLOSE_CODE = 4401
"""The close code of a WebSocket whose token was revoked (or its role changed) while it was
open."""
REVOKED_REASON = "this token was revoked or changed"


def internal_error(connection: object) -> UserQuestionError:
    """Log the exception being handled (a frame of `connection` made a handler fail) and
    return the `INTERNAL_ERROR` to answer that frame with."""
    logger.exception("%r failed to answer a frame", connection)
    return UserQuestionError(INTERNAL_ERROR_MESSAGE, ErrorCode.INTERNAL_ERROR)


class HostConnection:
    """One open WebSocket: its peer, the hub it talks to, and the person behind its token."""

    kind: str = ""
    """What the metrics count it as (`page`, `asker`)."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.hub: Hub = websocket.app.state.hub
        identity = identity_of(websocket.scope)
        assert identity is not None, "the security middleware lets no one in without a token"
        self.identity: Identity = identity
        self.person = identity.name
        """The name of the token that opened it (`owner` for the start-up token)."""
        self.sees: Sees | None = viewer(identity)
        """Which requests it may see; `None`: all of them."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.person}>"

    @classmethod
    async def endpoint(cls, websocket: WebSocket) -> None:
        """The route's handler: serve one connection of this kind to its end."""
        await cls(websocket).run()

    async def serve(self) -> None:
        """Talk to the peer until it leaves; the socket is accepted already."""
        raise NotImplementedError

    def internal_error(self) -> UserQuestionError:
        """Log the exception being handled (a frame made a handler fail) and return the
        `INTERNAL_ERROR` to answer that frame with."""
        return internal_error(self)

    async def accept(self) -> None:
        """Accept the socket, telling the peer its token's role."""
        await self.websocket.accept(headers=[(ROLE_HEADER.encode(), self.identity.role.encode())])

    async def run(self) -> None:
        """Accept, then `serve()` until the peer leaves or the token is revoked (then close the
        socket with `REVOKED_CLOSE_CODE`)."""
        tokens: Tokens = self.websocket.app.state.tokens
        with anyio.CancelScope() as revoked, self.hub.metrics.connected(self.kind):
            stop = tokens.on_revoke(self.identity, revoked.cancel)
            try:
                await self.accept()
                await self.serve()
            finally:
                stop()
        gone = WebSocketState.DISCONNECTED
        if revoked.cancelled_caught and gone not in (
            self.websocket.client_state,
            self.websocket.application_state,
        ):
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):  # the peer left meanwhile
                await self.websocket.close(REVOKED_CLOSE_CODE, REVOKED_REASON)
