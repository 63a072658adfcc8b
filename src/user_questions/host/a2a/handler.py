"""`InboxHandler`: the A2A operations, each mapped onto the hub and the store.

The `a2a` extra: the official SDK's `RequestHandler`, served by its JSON-RPC dispatcher
(`host/a2a/routes.py`), which puts the request behind each call in the call's context. Every call
comes through the host's gate, so it carries a token the host accepts; what it may do follows
from that token as on every other surface:

- `SendMessage` / `SendStreamingMessage` ask, as the asker protocol's `ask` does: the token's
  routes, deadline, escalation and reminders apply, its name is recorded as the asker, and the
  rules decide an approval the message carries. The task's id is made from the token's name and
  the message's `messageId`, so a client that sends the same message again (its connection
  dropped) gets the same task, on any node. The task's context is the message's `contextId`, or
  else the task itself; its session in the inbox is `a2a:<contextId>`.
- A message without `returnImmediately` waits until the task ends (A2A's blocking default), as
  long as its client stays connected; a stream sends the task, then its answer and its final
  status, and ends.
- `GetTask`, `SubscribeToTask`, `CancelTask` and the push configurations reach the tasks the
  token asked (an admin's: every task); any other id is `TaskNotFoundError`, whether or not a
  request has it. `CancelTask` withdraws the request from every page.
- A message naming a task (`taskId`) is refused: a person's task never asks back, so it takes no
  further message (A2A's `UnsupportedOperationError`).
- `ListTasks` lists the tasks the token asked (an admin's: every task), from the store's
  history, with A2A's filters and an opaque page token (`host/a2a/listing.py`).

A refusal of ours becomes the A2A error its kind is (`InvalidParamsError` for a malformed or
oversized question, `TaskNotFoundError`, ...), with our code in its details (`{"code":
"LIMIT_EXCEEDED"}`). An unexpected failure is logged and answered with `InternalError`, whose
message says nothing of it.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import anyio
from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers import RequestHandler
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    A2AError,
    ContentTypeNotSupportedError,
    InternalError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from starlette.requests import Request

from user_questions._lifecycle.disposer import Disposer
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Origin
from user_questions.host.a2a.card import extended_card
from user_questions.host.a2a.listing import list_tasks
from user_questions.host.a2a.naming import CONTEXT_PREFIX
from user_questions.host.a2a.parts import content_of
from user_questions.host.a2a.push import PushSender
from user_questions.host.a2a.tasks import session_of, task_of
from user_questions.host.gate.fair_share import share_of
from user_questions.host.gate.roles import asker_reached, audience_of, withdrawer
from user_questions.host.gate.security import INTERNAL_ERROR_MESSAGE, Identity, identity_of
from user_questions.host.hub import Hub
from user_questions.host.stores import Store, StoredQuestion
from user_questions.outcomes import RequestState, Surface

__all__ = ["CANCEL_NOTE", "ORIGIN_CLIENT", "REQUEST_STATE_KEY", "InboxHandler", "base_url_of"]

logger = logging.getLogger("user_questions.host.a2a")

REQUEST_STATE_KEY = "user_questions.request"
"""Where the call's context holds the Starlette request behind it."""
ORIGIN_CLIENT = "a2a"
"""The origin a task is shown with when its message names none."""
CANCEL_NOTE = "its asker canceled the A2A task"
"""The note of a request withdrawn by `CancelTask`, shown in the history."""
_TASK_IDS = uuid.UUID("5c6f1d8e-6a0b-4d3b-9f0e-a2a7a5c0e111")
"""The namespace of the task ids made from a token's name and a message id."""
_INVALID = frozenset(
    {
        ErrorCode.BAD_REQUEST,
        ErrorCode.EMPTY_QUESTIONS,
        ErrorCode.BAD_INTENT,
        ErrorCode.BAD_QUESTION,
        ErrorCode.TOO_MANY_QUESTIONS,
        ErrorCode.LIMIT_EXCEEDED,
        ErrorCode.REQUEST_TOO_LARGE,
    }
)
"""Our codes of a request that is wrong as sent: A2A's `InvalidParamsError`."""

P = ParamSpec("P")
R = TypeVar("R")


def base_url_of(request: Request) -> str:
    """The base URL (ending in `/`) clients reach this host at: its public URL when it has one
    (`--public-url`), else the one this request was made to."""
    public = request.app.state.public_url
    return public.base if public is not None else str(request.base_url)


@dataclass(frozen=True, slots=True)
class _Call:
    """Who makes an A2A call, and the host it reaches."""

    request: Request
    identity: Identity

    @property
    def hub(self) -> Hub:
        hub: Hub = self.request.app.state.hub
        return hub

    @property
    def store(self) -> Store:
        store: Store = self.request.app.state.store
        return store


def _call(context: ServerCallContext) -> _Call:
    request: Request = context.state[REQUEST_STATE_KEY]
    identity = identity_of(request.scope)
    assert identity is not None, "the gate lets no call in without a token"
    return _Call(request, identity)


def _refusal(error: UserQuestionError) -> A2AError:
    """The A2A error a refusal of ours is, with our code in its details (and, for
    `RATE_LIMITED`, the seconds to wait as `retryAfter`)."""
    data: dict[str, object] = {"code": str(error.code)}
    if error.retry_after is not None:
        data["retryAfter"] = error.retry_after
    if error.code in _INVALID:
        return InvalidParamsError(error.message, data)
    if error.code == ErrorCode.NOT_FOUND:
        return TaskNotFoundError(error.message, data)
    return InternalError(error.message, data)


def _a2a_error(method: str, error: Exception) -> A2AError:
    """What a call that failed with `error` answers: an A2A error as it is, a refusal of ours
    as its A2A error, anything else as an `InternalError` that says nothing of it (logged; call
    it while handling `error`)."""
    if isinstance(error, A2AError):
        return error
    if isinstance(error, UserQuestionError):
        return _refusal(error)
    logger.exception("A2A %s failed", method)
    return InternalError(INTERNAL_ERROR_MESSAGE, {"code": "INTERNAL_ERROR"})


def _answered(
    method: Callable[P, Coroutine[Any, Any, R]],
) -> Callable[P, Coroutine[Any, Any, R]]:
    """Answer a failure of `method` as `_a2a_error` says."""

    @functools.wraps(method)
    async def answer(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except Exception as error:
            raise _a2a_error(method.__name__, error) from None

    return answer


def _streamed(
    method: Callable[P, AsyncGenerator[Event]],
) -> Callable[P, AsyncGenerator[Event]]:
    """`_answered`, for a stream: a failure ends it with its A2A error."""

    @functools.wraps(method)
    async def stream(*args: P.args, **kwargs: P.kwargs) -> AsyncGenerator[Event]:
        inner = method(*args, **kwargs)
        try:
            async for event in inner:
                yield event
        except Exception as error:
            raise _a2a_error(method.__name__, error) from None
        finally:
            await inner.aclose()

    return stream


class _Settlement:
    """A watcher of one request: `wait()` returns it once it has settled."""

    def __init__(self) -> None:
        self._settled = anyio.Event()
        self._record: StoredQuestion | None = None

    def __call__(self, record: StoredQuestion) -> None:
        self._record = record
        self._settled.set()

    async def wait(self) -> StoredQuestion:
        await self._settled.wait()
        assert self._record is not None
        return self._record


class InboxHandler(RequestHandler):
    """The A2A operations of the inbox (see the module docstring)."""

    def __init__(self, push: PushSender, ended: Callable[[StoredQuestion], None]) -> None:
        self.push = push
        self._ended = ended
        """Queues the push of a task that has ended (`host/a2a/__init__.py`)."""

    # -- asking -----------------------------------------------------------------------------

    @_answered
    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        call = _call(context)
        watcher = None if params.configuration.return_immediately else _Settlement()
        record, stop = await self._ask(call, params, watcher)
        try:
            if record.pending and watcher is not None:
                settled = await _unless_gone(call.request, watcher.wait())
                record = settled or record
        finally:
            stop()
        return task_of(record, history_length=_history_length(params.configuration))

    @_streamed
    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        call = _call(context)
        watcher = _Settlement()
        record, stop = await self._ask(call, params, watcher)
        try:
            async for event in _events(record, watcher):
                yield event
        finally:
            stop()

    async def _ask(
        self, call: _Call, params: SendMessageRequest, watcher: _Settlement | None
    ) -> tuple[StoredQuestion, Disposer]:
        """Store and show the request a message asks (or re-attach to it)."""
        message, identity = params.message, call.identity
        if message.task_id:
            found = await self._task(call, message.task_id)
            ended = found.state != RequestState.PENDING
            raise UnsupportedOperationError(
                f"task {message.task_id} has ended; a new question is a new message, without taskId"
                if ended
                else f"task {message.task_id} waits for a person and takes no further message; "
                "cancel it and ask again"
            )
        if not message.message_id:
            raise InvalidParamsError("the message has no messageId", {"code": "BAD_REQUEST"})
        content = content_of(message)
        if content.others:
            raise ContentTypeNotSupportedError(
                "the inbox asks from text parts and a data part with questions; this message "
                f"also holds {content.others[0]}",
                {"code": "BAD_REQUEST"},
            )
        questions = content.questions()
        rpc_id = str(uuid.uuid5(_TASK_IDS, f"{identity.name}\n{message.message_id}"))
        ask = content.ask
        configuration = params.configuration
        push = None
        if configuration.HasField("task_push_notification_config"):
            push = TaskPushNotificationConfig()
            push.CopyFrom(configuration.task_push_notification_config)
            push.task_id = rpc_id
            push = await self.push.configs.add(push)  # before the task can end
        try:
            record, stop = await call.hub.submit(
                rpc_id,
                session_of(message.context_id or rpc_id),
                questions,
                watcher=watcher,
                asked_by=identity.name,
                origin=(ask.origin if ask is not None else None) or Origin(client=ORIGIN_CLIENT),
                audience=audience_of(identity),
                approval=None if ask is None else ask.approval,
                deadline=identity.deadline,
                escalate=identity.escalate,
                remind=identity.remind,
                approvals=identity.approvals,
                share=share_of(identity),
            )
        except Exception:
            if push is not None:  # no task: its webhook is forgotten
                await self.push.configs.delete(rpc_id, push.id)
            raise
        if push is not None and not record.pending:
            self._ended(record)  # sent again for a task that has ended: pushed now
        return record, stop

    # -- following --------------------------------------------------------------------------

    @_answered
    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        record = await self._task(_call(context), params.id)
        length = params.history_length if params.HasField("history_length") else None
        return task_of(record, history_length=length)

    @_streamed
    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        call = _call(context)
        found = await self._task(call, params.id)
        if not found.pending:
            raise UnsupportedOperationError(
                f"task {params.id} has ended ({found.state}); GetTask reads how"
            )
        watcher = _Settlement()
        record, stop = await call.hub.submit(  # re-attach, on any node: it watches the request
            found.rpc_id,
            found.session_id,
            found.questions,
            watcher=watcher,
            asked_by=found.asked_by,
            origin=found.origin,
            approval=found.approval,
        )
        try:
            async for event in _events(record, watcher):
                yield event
        finally:
            stop()

    @_answered
    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        call = _call(context)
        found = await self._task(call, params.id)
        if found.pending:
            found = (
                await call.hub.withdraw(
                    found.rpc_id,
                    via=Surface.ASKER,
                    by=call.identity.name,
                    reason="cancelled",
                    note=CANCEL_NOTE,
                    sees=withdrawer(call.identity),
                )
                or found
            )
        if found.state not in (RequestState.PENDING, RequestState.WITHDRAWN):
            raise TaskNotCancelableError(
                f"task {params.id} has ended ({found.state}) and cannot be canceled",
                {"code": "NOT_PENDING"},
            )
        return task_of(found)

    @_answered
    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        call = _call(context)
        return await list_tasks(call.store, params, asker_reached(call.identity))

    # -- push notifications -----------------------------------------------------------------

    @_answered
    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        call = _call(context)
        await self._task(call, params.task_id)
        kept = await self.push.configs.add(params)
        record = await call.store.get(params.task_id)
        if record is not None and not record.pending:
            self._ended(record)  # it ended meanwhile, before the node that ended it looked
        return kept

    @_answered
    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        await self._task(_call(context), params.task_id)
        config = await self.push.configs.get(params.task_id, params.id)
        if config is None:
            raise TaskNotFoundError(
                f"task {params.task_id} has no push config {params.id!r}", {"code": "NOT_FOUND"}
            )
        return config

    @_answered
    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        await self._task(_call(context), params.task_id)
        configs = await self.push.configs.of_task(params.task_id)
        return ListTaskPushNotificationConfigsResponse(configs=configs)

    @_answered
    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        await self._task(_call(context), params.task_id)
        await self.push.configs.delete(params.task_id, params.id)

    # -- the card -----------------------------------------------------------------------------

    @_answered
    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        call = _call(context)
        return extended_card(base_url_of(call.request), call.identity)

    # -- helpers ------------------------------------------------------------------------------

    async def _task(self, call: _Call, task_id: str) -> StoredQuestion:
        """The request that is task `task_id`, if this token may reach it.

        Raises:
            TaskNotFoundError: for any other id, whether or not a request has it.
        """
        record = await call.store.get(task_id) if task_id else None
        reaches = withdrawer(call.identity)
        if (
            record is None
            or not record.session_id.startswith(CONTEXT_PREFIX)
            or (reaches is not None and not reaches(record))
        ):
            raise TaskNotFoundError(f"no task has the id {task_id!r}", {"code": "NOT_FOUND"})
        return record


async def _events(record: StoredQuestion, watcher: _Settlement) -> AsyncGenerator[Event]:
    """A task's stream: the task as it is, then, once it ends, its answer and final status."""
    yield task_of(record)
    if not record.pending:
        return
    settled = await watcher.wait()
    ended = task_of(settled, history_length=0)
    for artifact in ended.artifacts:
        yield TaskArtifactUpdateEvent(
            task_id=ended.id, context_id=ended.context_id, artifact=artifact, last_chunk=True
        )
    yield TaskStatusUpdateEvent(task_id=ended.id, context_id=ended.context_id, status=ended.status)


def _history_length(configuration: Any) -> int | None:
    return configuration.history_length if configuration.HasField("history_length") else None


async def _unless_gone(request: Request, waiting: Awaitable[R]) -> R | None:
    """What `waiting` gives, or `None` once the client behind `request` has disconnected."""
    result: list[R] = []

    async def wait() -> None:
        result.append(await waiting)
        group.cancel_scope.cancel()

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(wait)
        group.start_soon(watch)
    return result[0] if result else None
