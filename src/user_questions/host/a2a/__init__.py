"""A2A: the inbox as an agent other agents call (`uq serve`).

A person in the inbox is reachable as an A2A agent (A2A 1.0, on the official `a2a-sdk`, the `a2a`
extra): an asker's token sends a message, a person answers it in the inbox, and the task ends
with the answer. `InboxAgent` is what `create_app` mounts: the public Agent Card's route, the
JSON-RPC endpoint's, and the host task that delivers push notifications. The SDK takes most of a
second to import and about 12 MB of the host's memory (a third of an idle host's own), so it is
loaded in a worker thread only when the first A2A request comes (the card or the endpoint) or an
A2A task ends (its push goes out): a host nobody calls over A2A never holds it. Without the extra
both routes answer 404 with the line that installs it. The room's modules, the SDK's side:

    naming    the routes' paths and the tasks' session prefix (no SDK)
    parts     A2A messages in our vocabulary and back (shared with `uq a2a watch`)
    tasks     a request as an A2A task: its state, status message and answer artifact
    card      the public and the extended Agent Card
    listing   `ListTasks`: its parameters as a history query, a page as its answer
    push      push configurations in the store, and their delivery
    handler   the A2A operations, mapped onto the hub and the store
    routes    the card's endpoint and the SDK's JSON-RPC endpoint

This module needs no SDK: it listens to the hub from the moment the host starts, so that a task
that ends before the SDK is loaded (its deadline passed while the host was down, say) is queued,
loads it, and is still pushed.
docs/integrations/a2a.md says what maps to what, and what is lossy.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from typing import TYPE_CHECKING

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.a2a.naming import A2A_PATH, CARD_PATH, CONTEXT_PREFIX
from user_questions.host.hub import HostTask, Hub
from user_questions.host.stores import SettingStore, StoredQuestion

if TYPE_CHECKING:
    from user_questions.host.a2a.routes import InboxEndpoints

__all__ = ["PUSH_QUEUE", "InboxAgent"]

logger = logging.getLogger("user_questions.host.a2a")

PUSH_QUEUE = 1000
"""Ended tasks waiting for their pushes to go out; more are dropped, with a log line."""
_MISSING = "this host speaks A2A with its a2a extra: pip install 'user-questions[a2a]'"


class InboxAgent:
    """The inbox as an A2A agent: `routes` to mount, `tasks` to run beside the hub.

    Args:
        store: Where the push configurations are kept (the host's store, opened by the app).
        push_private: Allow push notifications to private and loopback addresses
            (`uq serve --a2a-push-private`).
    """

    def __init__(self, store: SettingStore, *, push_private: bool = False) -> None:
        self.store = store
        self.push_private = push_private
        self.routes: list[BaseRoute] = [
            Route(CARD_PATH, self._card, methods=["GET"]),
            Route(A2A_PATH, self._rpc, methods=["POST"]),
        ]
        self.tasks: list[HostTask] = [self._run]
        self._queue: MemoryObjectSendStream[StoredQuestion] | None = None
        """Where ended tasks wait for their pushes, while the host runs."""
        self._wanted: anyio.Event | None = None
        """Set when the SDK is first needed (an A2A request came, or an A2A task ended), while
        the host runs."""
        self._loading: anyio.Event | None = None
        self._loaded = False
        self._endpoints: InboxEndpoints | None = None
        self._failure: Exception | None = None

    def ended(self, record: StoredQuestion) -> None:
        """Queue the push of `record` if it is an A2A task that has ended; never waits."""
        if record.pending or not record.session_id.startswith(CONTEXT_PREFIX):
            return
        if self._queue is None:
            logger.warning("the host is not running; dropped the push of task %s", record.rpc_id)
            return
        try:
            self._queue.send_nowait(record)
            self._want()
        except anyio.WouldBlock:
            logger.warning(
                "%d A2A pushes wait already; dropped task %s's", PUSH_QUEUE, record.rpc_id
            )
        except anyio.ClosedResourceError:
            logger.warning("the host is stopping; dropped the push of task %s", record.rpc_id)

    async def _run(self, hub: Hub) -> None:
        """Listen for ended tasks at once; once the SDK is needed, load it and deliver their
        pushes."""
        queue, ended = anyio.create_memory_object_stream[StoredQuestion](PUSH_QUEUE)
        self._queue = queue
        self._wanted = wanted = anyio.Event()
        stop = hub.on_event(self.ended)
        try:
            async with queue, ended:  # closed also when the host stops before the SDK is needed
                await wanted.wait()
                endpoints = await self._load()
                if endpoints is None:
                    return  # no SDK, so no task and no push
                await endpoints.push.deliver(ended)
        finally:
            stop()
            self._queue = None
            self._wanted = None

    def _want(self) -> None:
        """Wake the pushes' task: the SDK is needed, so it loads it (or waits for the load
        under way) and then delivers."""
        if self._wanted is not None:
            self._wanted.set()

    async def _load(self) -> InboxEndpoints | None:
        """The SDK's endpoints, loaded once (in a worker thread); `None` without the extra.

        Raises:
            RuntimeError: when loading them failed (a broken install); the log says why.
        """
        self._want()
        while not self._loaded:
            if self._loading is not None:
                await self._loading.wait()
                continue
            self._loading = loading = anyio.Event()
            try:
                self._endpoints = await self._import()
                self._loaded = True
            except Exception as error:
                logger.exception("the A2A SDK could not be loaded")
                self._failure = error
                self._loaded = True
            finally:
                if not self._loaded:
                    self._loading = None  # cancelled (the host stops): the next caller loads
                loading.set()
        if self._failure is not None:
            raise RuntimeError("the A2A SDK could not be loaded") from self._failure
        return self._endpoints

    async def _import(self) -> InboxEndpoints | None:
        if importlib.util.find_spec("a2a") is None:
            return None
        await anyio.to_thread.run_sync(importlib.import_module, "user_questions.host.a2a.routes")
        from user_questions.host.a2a.routes import inbox_endpoints

        return inbox_endpoints(self.store, self.ended, push_private=self.push_private)

    async def _card(self, request: Request) -> Response:
        endpoints = await self._load()
        if endpoints is None:
            raise UserQuestionError(_MISSING, ErrorCode.NOT_FOUND)
        return await endpoints.card(request)

    async def _rpc(self, request: Request) -> Response:
        endpoints = await self._load()
        if endpoints is None:
            raise UserQuestionError(_MISSING, ErrorCode.NOT_FOUND)
        return await endpoints.rpc(request)
