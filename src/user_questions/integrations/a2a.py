"""A2A client side: an agent's task that pauses for a person is answered from the inbox.

Needs the `a2a` extra (the official `a2a-sdk`). An A2A task stops in `input-required` (the agent
needs an answer, sent as a message on the same task) or `auth-required` (it needs an
authorization, such as a person's approval before a destructive action). `watch_task(client,
task_id, asker)` follows a remote task (streaming with `SubscribeToTask` when the agent offers it,
else polling `GetTask`) until it ends:

- each `input-required` status message becomes a request in the inbox, read as the host reads an
  asker's message (`host.a2a.parts`): text parts ask a free-text question, a data part holding
  our `questions` asks those, one holding an `approval` asks the approval card;
- each `auth-required` becomes an approval card: the call its data part names, or else "Allow
  <agent> to go on?" with the agent's words as its detail;
- the person's answer goes back as a message on the same `taskId` (a data part `{"answers":
  [...]}` and its text rendering, `host.a2a.parts.answer_parts`);
- when the task moves on without that answer (another client answered, it was canceled, it
  ended), the card is withdrawn from every page, with why as its note in the history.

A card's rpcId is made from the task and its status message, so a watch that restarts re-attaches
to its card, and gets an answer given meanwhile. A dismissal or a deadline is never turned into an
answer: the watch raises `ASK_CANCELLED` or `ASK_TIMED_OUT` and sends the agent nothing, so the
task keeps waiting for whoever else may answer it. `uq a2a watch` is this, on the command line.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field

try:
    from a2a.client import Client
    from a2a.types import (
        GetTaskRequest,
        Message,
        Role,
        SendMessageConfiguration,
        SendMessageRequest,
        StreamResponse,
        SubscribeToTaskRequest,
        Task,
        TaskState,
    )
    from a2a.utils.errors import A2AError, TaskNotFoundError, UnsupportedOperationError
except ImportError as error:  # pragma: no cover - exercised by hand without the extra
    raise ImportError(
        "user_questions.integrations.a2a needs the A2A SDK: pip install 'user-questions[a2a]'"
    ) from error

import anyio

from user_questions.abort import AbortController, AbortSignal
from user_questions.approvals import ALLOW, DENY
from user_questions.asker import Asker
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.a2a.parts import answer_parts, content_of
from user_questions.host.a2a.tasks import TERMINAL_STATES
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

__all__ = [
    "AUTHORIZATION_ID",
    "POLL_INTERVAL",
    "UNREACHABLE_LIMIT",
    "authorization_question",
    "questions_of_status",
    "state_name",
    "watch_task",
]

logger = logging.getLogger("user_questions.integrations.a2a")

POLL_INTERVAL = 2.0
"""Seconds between two `GetTask` of an agent that does not stream."""
UNREACHABLE_LIMIT = 300.0
"""Seconds the agent may stay unreachable before the watch gives up (`HOST_UNREACHABLE`)."""
RETRY_FIRST = 0.5
RETRY_MAX = 10.0
AUTHORIZATION_ID = "authorization"
"""The id of the card an `auth-required` without a described call asks."""
WAITING_STATES = frozenset(
    {TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED}
)
"""The states in which the agent waits for its client."""
_CARDS = uuid.UUID("0b7e1c55-2a2a-4f6e-b3f1-7a5c2a1d9e42")
"""The namespace of the cards' rpcIds, made from a task and its status message."""


def state_name(state: TaskState) -> str:
    """A task state as people read it: `input-required`, `completed`, ..."""
    name: str = TaskState.Name(state)
    return name.removeprefix("TASK_STATE_").lower().replace("_", "-")


def authorization_question(
    agent: str, text: str, others: tuple[str, ...] = ()
) -> AskUserQuestionItem:
    """The card of an `auth-required` that names no call: allow the agent to go on, or not."""
    detail = "\n\n".join([text.strip(), *others]) if text.strip() or others else None
    return AskUserQuestionItem(
        id=AUTHORIZATION_ID,
        header="Authorization",
        question=f"Allow {agent} to go on?",
        detail=detail,
        options=[
            AskUserQuestionOption(label=ALLOW, description="Let the agent go on with its task."),
            AskUserQuestionOption(
                label=DENY, description="Do not. Type a reason instead to tell the agent why."
            ),
        ],
    )


def questions_of_status(task: Task, agent: str) -> list[AskUserQuestionItem]:
    """The questions a person is asked for a task waiting in `input-required` or
    `auth-required` (see the module docstring); what its message holds besides (a file, other
    data) is listed in the first question's detail.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a data part with malformed questions,
            `EMPTY_QUESTIONS` for an `input-required` whose message says nothing.
    """
    content = content_of(task.status.message)
    if task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED and content.ask is None:
        return [authorization_question(agent, content.text, content.others)]
    questions = content.questions()
    if content.others:
        first = questions[0]
        extra = "\n".join(f"- The agent also sent {other}" for other in content.others)
        detail = extra if first.detail is None else f"{first.detail}\n\n{extra}"
        questions[0] = first.model_copy(update={"detail": detail})
    return questions


@dataclass(eq=False)
class _Card:
    """The request in the inbox for one waiting status of the task."""

    key: str
    stop: AbortController = field(default_factory=AbortController)


class _Watch:
    """One task followed until it ends: its latest snapshot, and the card it waits on."""

    def __init__(
        self, client: Client, task_id: str, asker: Asker, agent: str, timeout: float | None
    ) -> None:
        self.client = client
        self.task_id = task_id
        self.asker = asker
        self.agent = agent
        self.timeout = timeout
        self.task = Task(id=task_id)
        self.card: _Card | None = None
        self.answered: set[str] = set()
        """The waiting statuses already answered: a late snapshot never asks one again."""
        self.failure: UserQuestionError | None = None
        self.group: anyio.abc.TaskGroup | None = None

    async def run(self, poll_interval: float) -> Task:
        async with anyio.create_task_group() as self.group:
            self.group.start_soon(self._follow, poll_interval)
        if self.failure is not None:
            raise self.failure
        try:  # the ended task as the agent keeps it, its artifacts whole
            return await self.client.get_task(GetTaskRequest(id=self.task_id))
        except A2AError:
            return self.task

    # -- what the agent says ------------------------------------------------------------------

    def seen(self, event: StreamResponse) -> None:
        """Take one event of the task (from a stream or a read) into its snapshot, and act;
        an artifact waits for the ended task, which is read whole."""
        kind = event.WhichOneof("payload")
        if kind == "task" and event.task.id == self.task_id:
            self.task.CopyFrom(event.task)
        elif kind == "status_update" and event.status_update.task_id == self.task_id:
            self.task.status.CopyFrom(event.status_update.status)
        else:
            return  # an artifact is read with the ended task; a message is not the task's
        self._act()

    def _act(self) -> None:
        state = self.task.status.state
        key = _key(self.task)
        if self.card is not None and self.card.key != key:
            moved = "ended" if state in TERMINAL_STATES else "moved on"
            self.card.stop.abort(f"the agent's task {moved}: {state_name(state)}")
            self.card = None
        if state in TERMINAL_STATES:
            self._end()
        elif state in WAITING_STATES and self.card is None and key not in self.answered:
            self.card = _Card(key)
            assert self.group is not None
            self.group.start_soon(self._ask, self.card, _copy(self.task))

    def _end(self, failure: UserQuestionError | None = None) -> None:
        self.failure = self.failure or failure
        if self.card is not None:
            self.card.stop.abort("the watch of the agent's task stopped")
            self.card = None
        assert self.group is not None
        self.group.cancel_scope.cancel()

    # -- following the task -------------------------------------------------------------------

    async def _follow(self, poll_interval: float) -> None:
        """Read the task, then follow it: streamed while the agent streams, else polled; a
        dropped stream or a failed read is tried again, for at most `UNREACHABLE_LIMIT`."""
        streaming = True
        retry, since = RETRY_FIRST, None
        while True:
            try:
                self.seen(
                    StreamResponse(task=await self.client.get_task(GetTaskRequest(id=self.task_id)))
                )
                if streaming:
                    try:
                        async for event in self.client.subscribe(
                            SubscribeToTaskRequest(id=self.task_id)
                        ):
                            self.seen(event)
                            retry, since = RETRY_FIRST, None
                    except (NotImplementedError, UnsupportedOperationError):
                        streaming = False  # the agent (or this client) does not stream it
                # A stream that ended before the task did (the agent closed it): read again soon.
                await anyio.sleep(poll_interval)
                retry, since = RETRY_FIRST, None
            except TaskNotFoundError:
                self._end(
                    UserQuestionError(
                        f"the agent has no task {self.task_id!r}", ErrorCode.NOT_FOUND
                    )
                )
                return
            except A2AError as error:
                since = since or time.monotonic()
                if time.monotonic() - since > UNREACHABLE_LIMIT:
                    self._end(
                        UserQuestionError(
                            f"the agent did not answer for {UNREACHABLE_LIMIT:g} s: {error}",
                            ErrorCode.HOST_UNREACHABLE,
                        )
                    )
                    return
                logger.warning("following task %s: %s; trying again", self.task_id, error)
                await anyio.sleep(retry)
                retry = min(RETRY_MAX, retry * 2)

    # -- asking the person --------------------------------------------------------------------

    async def _ask(self, card: _Card, waiting: Task) -> None:
        """Ask the person about one waiting status, and send the agent their answer."""
        try:
            questions = questions_of_status(waiting, self.agent)
            content = content_of(waiting.status.message)
            approval = None if content.ask is None else content.ask.approval
            signals = [card.stop.signal]
            if self.timeout is not None:
                signals.append(AbortSignal.timeout(self.timeout))
            answer = await self.asker.ask(
                questions,
                signal=AbortSignal.any(signals),
                rpc_id=str(uuid.uuid5(_CARDS, f"{self.task_id}\n{card.key}")),
                approval=approval,
            )
        except UserQuestionError as error:
            if card.stop.signal.aborted:
                return  # withdrawn: the task moved on
            self._end(error)
            return
        self.answered.add(card.key)
        if self.card is card:
            self.card = None
        reply = Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid5(_CARDS, f"{self.task_id}\n{card.key}\nanswer")),
            task_id=self.task_id,
            context_id=waiting.context_id,
            parts=answer_parts(questions, answer),
        )
        request = SendMessageRequest(
            message=reply, configuration=SendMessageConfiguration(return_immediately=True)
        )
        try:
            async for event in self.client.send_message(request):
                self.seen(event)
        except A2AError as error:
            self._end(
                UserQuestionError(
                    f"the agent refused the answer to task {self.task_id}: {error}",
                    ErrorCode.BAD_ANSWER,
                )
            )


async def watch_task(
    client: Client,
    task_id: str,
    asker: Asker,
    *,
    agent: str = "the agent",
    question_timeout: float | None = None,
    poll_interval: float = POLL_INTERVAL,
) -> Task:
    """Follow the A2A task `task_id` through `client` until it ends, answering each pause for a
    person through `asker` (see the module docstring), and return it as it ended.

    Args:
        agent: How the cards name the agent (its card's `name`, say).
        question_timeout: Seconds each card may wait for the person; then `ASK_TIMED_OUT`.
        poll_interval: Seconds between two reads of a task the agent does not stream.

    Raises:
        UserQuestionError: `ASK_CANCELLED` when the person dismissed a card, `ASK_TIMED_OUT`,
            `NOT_FOUND` when the agent has no such task, `HOST_UNREACHABLE` when the agent
            stayed unreachable for `UNREACHABLE_LIMIT` seconds, `BAD_ANSWER` when it refused
            the answer, and the asker's codes. The task is left as it is: nothing is sent to
            the agent for a card that was not answered.
    """
    return await _Watch(client, task_id, asker, agent, question_timeout).run(poll_interval)


def _key(task: Task) -> str:
    """What tells one status of the task from another: its state and its message (or time)."""
    status = task.status
    mark = status.message.message_id or status.timestamp.ToJsonString()
    return f"{status.state}:{mark}"


def _copy(task: Task) -> Task:
    copied = Task()
    copied.CopyFrom(task)
    return copied
