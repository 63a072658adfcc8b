"""A request of the host as an A2A task: its state, its status message, its answer artifact.

The `a2a` extra. A task is a request, read from the store as any surface reads it, so every node
sharing the store, and a host restarted meanwhile, shows the same task: its id is the request's
rpcId, its `contextId` the request's session without the `a2a:` prefix (`session_of`). Each
outcome has one A2A state:

    pending     TASK_STATE_WORKING     a person has not answered yet
    answered    TASK_STATE_COMPLETED   the answer in the artifact `answer` (`parts.answer_parts`)
    dismissed   TASK_STATE_REJECTED    a person dismissed it: no answer, never an invented one
    withdrawn   TASK_STATE_CANCELED    its asker canceled it (the note says how)
    timed-out   TASK_STATE_FAILED      its deadline passed, said in the status message

The status message says the same in words; its id is fixed per task and state, so a client that
reads a task twice sees the same message. The task's history is the ask, as the host keeps it
(a data part with the questions, whatever parts the asker sent).
"""

from __future__ import annotations

from datetime import datetime

from a2a.types import Artifact, Message, Role, Task, TaskState, TaskStatus
from google.protobuf.timestamp_pb2 import Timestamp

from user_questions.host.a2a.naming import CONTEXT_PREFIX
from user_questions.host.a2a.parts import AskPart, answer_parts, ask_data, data_part, text_part
from user_questions.host.stores import StoredQuestion
from user_questions.outcomes import RequestState

__all__ = [
    "ANSWER_ARTIFACT",
    "STATE_OF",
    "TERMINAL_STATES",
    "context_of",
    "session_of",
    "task_of",
]

ANSWER_ARTIFACT = "answer"
"""The id and name of a completed task's artifact."""
STATE_OF: dict[RequestState, TaskState] = {
    RequestState.PENDING: TaskState.TASK_STATE_WORKING,
    RequestState.ANSWERED: TaskState.TASK_STATE_COMPLETED,
    RequestState.DISMISSED: TaskState.TASK_STATE_REJECTED,
    RequestState.WITHDRAWN: TaskState.TASK_STATE_CANCELED,
    RequestState.TIMED_OUT: TaskState.TASK_STATE_FAILED,
}
"""The A2A state of each state of a request."""
TERMINAL_STATES = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
"""The states a task never leaves."""
_WORDS = {
    RequestState.PENDING: "Waiting for a person to answer in the inbox.",
    RequestState.ANSWERED: "A person answered: the answer is in the artifact.",
    RequestState.DISMISSED: "A person dismissed the question without answering it.",
    RequestState.WITHDRAWN: "The question was withdrawn before anyone answered it",
    RequestState.TIMED_OUT: "Nobody answered in time",
}
"""What the status message says; a withdrawal and a timeout say why (the request's note)."""
_WHY = {RequestState.WITHDRAWN: "its asker gave up", RequestState.TIMED_OUT: "its deadline passed"}


def session_of(context_id: str) -> str:
    """The session of a request asked in the A2A context `context_id`."""
    return CONTEXT_PREFIX + context_id


def context_of(session_id: str) -> str:
    """The A2A context of a request of session `session_id`."""
    return session_id.removeprefix(CONTEXT_PREFIX)


def task_of(record: StoredQuestion, *, history_length: int | None = None) -> Task:
    """`record` as an A2A task; `history_length` 0 leaves its history out (A2A's rule)."""
    context_id = context_of(record.session_id)
    task = Task(id=record.rpc_id, context_id=context_id, status=_status(record, context_id))
    if record.answer is not None:
        parts = answer_parts(record.questions, record.answer)
        task.artifacts.append(
            Artifact(artifact_id=ANSWER_ARTIFACT, name=ANSWER_ARTIFACT, parts=parts)
        )
    if history_length is None or history_length > 0:
        task.history.append(_ask_message(record, context_id))
    return task


def _status(record: StoredQuestion, context_id: str) -> TaskStatus:
    words = _WORDS[record.state]
    if record.state in _WHY:
        words = f"{words}: {record.note or _WHY[record.state]}."
    message = Message(
        message_id=f"{record.rpc_id}/{record.state.value}",
        context_id=context_id,
        task_id=record.rpc_id,
        role=Role.ROLE_AGENT,
        parts=[text_part(words)],
    )
    moment = record.settled_at or record.asked_at
    return TaskStatus(state=STATE_OF[record.state], message=message, timestamp=_timestamp(moment))


def _ask_message(record: StoredQuestion, context_id: str) -> Message:
    ask = AskPart(questions=list(record.questions), origin=record.origin, approval=record.approval)
    return Message(
        message_id=f"{record.rpc_id}/ask",
        context_id=context_id,
        task_id=record.rpc_id,
        role=Role.ROLE_USER,
        parts=[data_part(ask_data(ask))],
    )


def _timestamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp
