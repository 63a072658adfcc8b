"""`HostProvider`: the provider of agents that run in the host's own process.

`HostProvider(hub)` asks through a running `Hub`; the hub knows nothing of it, as it knows nothing
of its other clients (the page and asker connections). It behaves as `RemoteProvider` does, without
the network, and shares with it the module below both (`user_questions._host_link.ask_endings`).
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

import anyio

from user_questions._host_link.ask_endings import (
    WITHDRAW_TIMEOUT,
    settled_answer,
    withdraw_note,
    withdraw_reason,
)
from user_questions._lifecycle.disposer import Disposer, nothing
from user_questions.errors import UserQuestionError
from user_questions.frames import Origin
from user_questions.host.hub import Hub
from user_questions.outcomes import Surface
from user_questions.service import AskUserQuestionRequest
from user_questions.types import AskUserQuestionAnswer

if TYPE_CHECKING:
    from user_questions.host.stores import StoredQuestion

__all__ = ["HostProvider"]

logger = logging.getLogger("user_questions.host")


class HostProvider:
    """A `UserQuestionProvider` for agents in the host's own process.

    The request is stored before any page sees it; the session is the agent's id, or `session`;
    `origin`, when given, is kept and shown with each request; a dismissal raises
    `ASK_CANCELLED`; cancelling the ask (an abort or a timeout) withdraws the request from every
    page, with the abort's reason as the withdrawal's note when it is text.
    """

    def __init__(self, hub: Hub, session: str = "host", *, origin: Origin | None = None) -> None:
        self.hub = hub
        self.session = session
        self.origin = origin

    def __repr__(self) -> str:
        return f"<HostProvider session={self.session!r}>"

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        rpc_id = uuid.uuid4().hex
        session = request.agent.id if request.agent is not None else self.session
        settled = anyio.Event()
        outcome: list[StoredQuestion] = []

        def watch(record: StoredQuestion) -> None:
            outcome.append(record)
            settled.set()

        stop: Disposer = nothing
        try:
            record, stop = await self.hub.submit(
                rpc_id,
                session,
                request.questions,
                watcher=watch,
                origin=self.origin,
                approval=request.approval,
            )
            if record.pending:
                await settled.wait()
                record = outcome[0]
        except anyio.get_cancelled_exc_class():
            with anyio.move_on_after(WITHDRAW_TIMEOUT, shield=True):
                try:
                    signal = request.signal
                    await self.hub.withdraw(
                        rpc_id,
                        via=Surface.HOST,
                        reason=withdraw_reason(signal),
                        note=withdraw_note(signal),
                    )
                except UserQuestionError as error:  # the store is down: it stays pending
                    logger.warning("could not withdraw question %s: %s", rpc_id, error)
            raise
        finally:
            stop()
        assert record.outcome is not None
        return settled_answer(record.outcome, record.answer)
