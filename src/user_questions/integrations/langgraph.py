"""LangGraph: ask a person from inside a graph, and answer a graph's interrupts through the host.

Needs the `langgraph` extra.

LangGraph pauses a graph with `interrupt(value)` inside a node: the value is saved with the
thread's checkpoint, the run returns, and a client later resumes the thread with
`Command(resume=...)`, which runs the node again from its start with `interrupt()` returning the
resume value. Nothing waits in memory, so a question survives the process that asked it.

- `ask_user(questions)` is used inside a node or tool: it interrupts with our request as the
  value, `{"type": "user-questions/ask", "questions": [...]}`, and returns the
  `AskUserQuestionAnswer` it is resumed with (or raises the `UserQuestionError` it carries).
- `forward_interrupts(graph, config, asker)` is the client: it asks every pending interrupt of a
  thread through the asker and resumes the thread with each answer, until none is pending. Each
  interrupt is asked under an rpcId made from the thread and the interrupt's id, so a forwarder
  that was killed and started again re-attaches to the same question on the host, and an answer
  given meanwhile resumes the graph exactly once. `following(graph, asker)` does the same for
  many threads at once, in a long-running process.

Interrupt values it understands: ours; Agent Inbox's list of `HumanInterrupt`s (answered with
its list of `HumanResponse`s; a lone card that allows `accept` and `edit` is asked as an editable
approval of its action, and a changed call resumes it with an `edit` response); a string (asked
as a free-text question, resumed with the text); any other value (shown as JSON, resumed with
the text). An interrupt whose `response_schema` (`interrupt(value, response_schema=...)`) is a
form this package can ask (`_reading.forms`: a flat object of texts, numbers, yes-or-no and
choices) is asked as that form, and resumed with the object the person filled in, typed as the
schema says (an integer stays an integer).
docs/integrations/langgraph.md says what each mapping carries.

A forward never loops on what comes back. An Agent Inbox card answered in a way its config does
not allow (typed text without `allow_respond`, a skip without `allow_ignore`: anything but
`Accept` on a card that offers only that) is not accepted, as in Agent Inbox itself, where such an
interrupt simply stays pending: the forward ends with `ASK_CANCELLED` saying so, and is not asked
again. A request found withdrawn (by an earlier forwarder that was stopped) is asked anew under the
next rpcId, at most `MAX_GENERATIONS` times for one interrupt; then the withdrawal is raised.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import TaskGroup
from pydantic import BaseModel, ValidationError

try:
    from langgraph.types import Command, Interrupt, StateSnapshot, interrupt
except ImportError as error:  # pragma: no cover - exercised by hand without the extra
    raise ImportError(
        "user_questions.integrations.langgraph needs LangGraph: "
        "pip install 'user-questions[langgraph]'"
    ) from error

from user_questions._checks import check_answer, check_request
from user_questions._reading.forms import schema_problem
from user_questions._reading.wire import parse_answer
from user_questions.approvals import ALLOW, approval_of, approval_question, fenced
from user_questions.asker import Asker, Question, questions_of
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import MAX_ID_LENGTH, Approval
from user_questions.integrations._asking import all_or_none, timeout_signal
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
)

__all__ = [
    "ACCEPT",
    "ASK_INTERRUPT",
    "IGNORE",
    "MAX_GENERATIONS",
    "Follower",
    "answer_from_resume",
    "ask_user",
    "following",
    "forward_interrupts",
    "rpc_id_of",
]

logger = logging.getLogger(__name__)

ASK_INTERRUPT = "user-questions/ask"
"""The `type` of the interrupt value `ask_user` raises."""
AGENT = "langgraph"
"""Who asks, on an editable Agent Inbox card's approval."""
ACCEPT = "Accept"
IGNORE = "Ignore"
"""The options of an Agent Inbox interrupt; typed text is its `response`."""
MAX_GENERATIONS = 16
"""How many times one interrupt is asked anew after finding its request withdrawn (each time an
earlier forwarder was stopped while it waited); past it the withdrawal is raised, so a host that
withdraws every request can never make the forwarder ask without end."""
_INPUT_ID = "input"
_ACTION_ID = "action"


# -- inside the graph -----------------------------------------------------------------------------


def ask_user(questions: Sequence[Question]) -> AskUserQuestionAnswer:
    """Ask a person `questions` from inside a LangGraph node or tool, and return the answer.

    The first call interrupts the graph (the thread needs a checkpointer); a client such as
    `forward_interrupts` asks the person and resumes the thread, and LangGraph runs the node
    again, when this returns the answer. The questions are checked here, where the mistake is.

    Raises:
        UserQuestionError: `EMPTY_QUESTIONS`, `BAD_QUESTION`, `BAD_INTENT` or `BAD_REQUEST` for
            bad questions; on resume, the error the ask ended with (`ASK_CANCELLED` for a
            dismissal, `ASK_TIMED_OUT`, ...) or `BAD_ANSWER` for a resume value that does not
            answer these questions.
    """
    items = questions_of(questions)
    check_request(items, None, None, None)
    value = {"type": ASK_INTERRUPT, "questions": [item.model_dump(mode="json") for item in items]}
    return answer_from_resume(items, interrupt(value))


def answer_from_resume(
    questions: Sequence[AskUserQuestionItem], resumed: object
) -> AskUserQuestionAnswer:
    """The answer a resume value carries: an `AskUserQuestionAnswer`, its JSON, or
    `{"error": {"code", "message"}}` for an ask that failed (raised here).

    Raises:
        UserQuestionError: the carried error, or `BAD_ANSWER` for anything else.
    """
    if isinstance(resumed, Mapping) and "error" in resumed:
        error = resumed["error"]
        if isinstance(error, Mapping) and isinstance(error.get("code"), str):
            raise UserQuestionError(str(error.get("message", error["code"])), error["code"])
    answer = resumed if isinstance(resumed, AskUserQuestionAnswer) else parse_answer(resumed)
    return check_answer(questions, answer)


_CARRIED = frozenset({ErrorCode.ASK_CANCELLED, ErrorCode.ASK_TIMED_OUT})
"""The outcomes of a question that `ask_user` raises in the node. Any other failure (the host
unreachable, a token refused) is raised to the forwarder and the interrupt stays pending, so a
forwarder started later can still ask it."""


def _failure(error: UserQuestionError) -> dict[str, Any]:
    if error.code not in _CARRIED:
        raise error
    return {"error": {"code": str(error.code), "message": error.message}}


# -- what each kind of interrupt is asked as -----------------------------------------------------


@dataclass(frozen=True)
class _Mapping:
    """How one interrupt is asked, and how the person's answer becomes its resume value."""

    questions: list[AskUserQuestionItem]
    read: Callable[[AskUserQuestionAnswer], Any]
    """The resume value of an answer; raises `ASK_CANCELLED` for one the graph cannot take."""
    failed: Callable[[UserQuestionError], Any]
    """The resume value of a failed ask, or raises the error (leaving the interrupt pending)."""
    approval: Approval | None = None
    """The call the questions approve, when the graph takes it changed (an Agent Inbox card
    that allows `edit`)."""


class _ActionRequest(BaseModel):
    action: str
    args: dict[str, Any] = {}


class _InboxConfig(BaseModel):
    """What the graph lets the person do; an absent flag is not allowed."""

    allow_ignore: bool = False
    allow_respond: bool = False
    allow_edit: bool = False
    allow_accept: bool = False


class _HumanInterrupt(BaseModel):
    action_request: _ActionRequest
    config: _InboxConfig
    description: str | None = None


def _raise(error: UserQuestionError) -> Any:
    raise error


def _mapping_of(value: object, response_schema: object = None) -> _Mapping:
    if isinstance(value, Mapping) and value.get("type") == ASK_INTERRUPT:
        questions = questions_of(value.get("questions") or [])
        return _Mapping(
            questions,
            read=lambda answer: answer.model_dump(mode="json"),
            failed=_failure,
        )
    inbox = _inbox_requests(value)
    if inbox is not None:
        return _inbox_mapping(inbox)
    form = response_schema if schema_problem(response_schema) is None else None
    if isinstance(value, str):
        question = AskUserQuestionItem(id=_INPUT_ID, question=value)
    else:
        shown = json.dumps(value, ensure_ascii=False, indent=2, default=str)
        question = AskUserQuestionItem(
            id=_INPUT_ID,
            question="The graph is waiting for your input.",
            detail=fenced(shown, "json"),
        )
    if form is None:
        return _Mapping([question], read=_text_of, failed=_raise)
    question = question.model_copy(update={"schema_": form})
    return _Mapping([question], read=_value_of, failed=_raise)


def _value_of(answer: AskUserQuestionAnswer) -> dict[str, Any] | None:
    """A form's resume value: the object the person filled in, typed; `None` when skipped."""
    return answer.answers[0].value


def _text_of(answer: AskUserQuestionAnswer) -> str | None:
    """A free-text question's resume value: the typed text, `None` when skipped."""
    return answer.answers[0].custom


def _inbox_requests(value: object) -> list[_HumanInterrupt] | None:
    """Agent Inbox's interrupt value: a non-empty list of `HumanInterrupt` objects."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(item, Mapping) and "action_request" in item for item in value):
        return None
    try:
        return [_HumanInterrupt.model_validate(item) for item in value]
    except ValidationError as error:
        raise UserQuestionError(
            f"invalid Agent Inbox interrupt: {error.errors(include_url=False)[0]['msg']}",
            ErrorCode.BAD_REQUEST,
        ) from None


def _inbox_mapping(requests: list[_HumanInterrupt]) -> _Mapping:
    editable = _editable_call(requests)
    if editable is not None:
        return _editable_inbox_mapping(requests[0], editable)
    ids = (
        [f"{_ACTION_ID}-{n + 1}" for n in range(len(requests))]
        if len(requests) > 1
        else [_ACTION_ID]
    )
    questions = [_inbox_question(id, request) for id, request in zip(ids, requests, strict=True)]

    def read(answer: AskUserQuestionAnswer) -> list[dict[str, Any]]:
        return [
            _human_response(request, item)
            for request, item in zip(requests, answer.answers, strict=True)
        ]

    return _Mapping(questions, read=read, failed=_raise)


def _editable_call(requests: list[_HumanInterrupt]) -> Approval | None:
    """A lone card that allows both `accept` and `edit`, as an editable approval of its action;
    `None` otherwise (the host checks an edit against a request's one approval)."""
    if len(requests) != 1:
        return None
    (request,) = requests
    if not (request.config.allow_edit and request.config.allow_accept):
        return None
    action = request.action_request
    return approval_of(action.action[:MAX_ID_LENGTH], action.args, agent=AGENT, editable=True)


def _editable_inbox_mapping(request: _HumanInterrupt, call: Approval) -> _Mapping:
    """A card that allows `edit`, asked as the approval card of its action (the host shows a
    request with an approval as that card, so that what a person reads is what a rule matches):
    `Allow` accepts, `Allow` with the call changed edits, anything else is read as on any inbox
    card (typed text a response, a skip or `Deny` an ignore, where the config allows them)."""
    reason = request.description
    question = approval_question(call.tool, call.input, id=_ACTION_ID, reason=reason)

    def read(answer: AskUserQuestionAnswer) -> list[dict[str, Any]]:
        (item,) = answer.answers
        if item.selected == [ALLOW] and item.edited is not None:
            edited = {"action": request.action_request.action, "args": item.edited}
            return [{"type": "edit", "args": edited}]
        if item.selected == [ALLOW]:
            return [{"type": "accept", "args": None}]
        skipped = item.model_copy(update={"selected": []})  # `Deny` reads as a skip
        return [_human_response(request, skipped)]

    return _Mapping([question], read=read, failed=_raise, approval=call)


def _inbox_question(id: str, request: _HumanInterrupt) -> AskUserQuestionItem:
    action, config = request.action_request.action, request.config
    options = []
    if config.allow_accept:
        options.append(AskUserQuestionOption(label=ACCEPT, description="Go ahead as it stands."))
    if config.allow_ignore:
        options.append(AskUserQuestionOption(label=IGNORE, description="Skip this step."))
    if not options and not config.allow_respond:
        raise UserQuestionError(
            f"the Agent Inbox interrupt for {json.dumps(action, ensure_ascii=False)} allows only "
            "edit, which user-questions cannot carry; answer it in Agent Inbox",
            ErrorCode.BAD_REQUEST,
        )
    parts = [request.description] if request.description else []
    if request.action_request.args:
        shown = json.dumps(request.action_request.args, ensure_ascii=False, indent=2, default=str)
        parts.append(fenced(shown, "json"))
    parts.append(
        "Type an answer to send it as your response."
        if config.allow_respond
        else "This step takes no written response."
    )
    return AskUserQuestionItem(
        id=id,
        header=action[:32],
        question=f"How should the agent go on with {action}?",
        detail="\n\n".join(parts),
        options=options or None,
    )


def _human_response(request: _HumanInterrupt, item: AskUserQuestionAnswerItem) -> dict[str, Any]:
    config = request.config
    if item.selected == [ACCEPT]:
        return {"type": "accept", "args": None}
    if item.selected == [IGNORE]:
        return {"type": "ignore", "args": None}
    if item.custom is not None:
        if config.allow_respond:
            return {"type": "response", "args": item.custom}
        raise _not_accepted(request, "typed an answer, and this step takes no written response")
    if config.allow_ignore:
        return {"type": "ignore", "args": None}
    raise _not_accepted(request, "skipped it, and this step cannot be skipped")


def _not_accepted(request: _HumanInterrupt, how: str) -> UserQuestionError:
    """The person answered `request` in a way its config does not allow: as in Agent Inbox, the
    step is not accepted and the interrupt stays pending."""
    action = json.dumps(request.action_request.action, ensure_ascii=False)
    return UserQuestionError(
        f"the person did not accept {action}: they {how}; the interrupt stays pending",
        ErrorCode.ASK_CANCELLED,
    )


# -- the client: asking and resuming -------------------------------------------------------------


def rpc_id_of(thread_id: str, interrupt_id: str, generation: int = 0) -> str:
    """The rpcId an interrupt is asked under: the same for the same thread and interrupt in
    every process, so a restarted forwarder re-attaches. A later `generation` asks anew after an
    earlier one was withdrawn or answered in a way the graph cannot take."""
    digest = hashlib.sha256(f"{thread_id}\0{interrupt_id}".encode()).hexdigest()[:32]
    return f"langgraph-{digest}" + (f".{generation}" if generation else "")


async def _resume_value(
    asker: Asker, thread_id: str, pending: Interrupt, question_timeout: float | None
) -> Any:
    mapping = _mapping_of(pending.value, getattr(pending, "response_schema", None))
    for generation in range(MAX_GENERATIONS + 1):
        signal = timeout_signal(question_timeout)
        try:
            answer = await asker.ask(
                mapping.questions,
                signal=signal,
                rpc_id=rpc_id_of(thread_id, pending.id, generation),
                approval=mapping.approval,
            )
        except UserQuestionError as error:
            ours = signal is not None and signal.aborted
            if error.code == ErrorCode.ASK_ABORTED and not ours and generation < MAX_GENERATIONS:
                continue  # withdrawn by an earlier forwarder that was stopped: ask anew
            return mapping.failed(error)
        return mapping.read(answer)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class _Thread:
    """Reads and resumes one thread, in a worker thread when its checkpointer is sync-only
    (`SqliteSaver` has no async methods)."""

    graph: Any
    config: Mapping[str, Any]
    sync: bool = False

    async def state(self) -> StateSnapshot:
        if not self.sync:
            try:
                snapshot: StateSnapshot = await self.graph.aget_state(self.config)
                return snapshot
            except NotImplementedError:
                self.sync = True
        result: StateSnapshot = await anyio.to_thread.run_sync(self.graph.get_state, self.config)
        return result

    async def resume(self, values: dict[str, Any]) -> None:
        command: Command[Any] = Command(resume=values)
        if self.sync:
            invoke = functools.partial(self.graph.invoke, command, self.config)
            await anyio.to_thread.run_sync(invoke)
        else:
            await self.graph.ainvoke(command, self.config)


def _thread_id(config: Mapping[str, Any]) -> str:
    thread_id = config.get("configurable", {}).get("thread_id")
    if thread_id is None:
        raise TypeError('the config needs {"configurable": {"thread_id": ...}}')
    return str(thread_id)


async def forward_interrupts(
    graph: Any, config: Mapping[str, Any], asker: Asker, *, question_timeout: float | None = None
) -> StateSnapshot:
    """Ask every pending interrupt of the thread `config` names, resume the thread with the
    answers, and repeat until no interrupt is pending; returns the thread's last state.

    Interrupts pending together are asked at once, one request each, and resumed together. An
    `ask_user` interrupt that is dismissed or times out is resumed with that outcome, which
    `ask_user` raises in the node; any other failure is raised here and the interrupt stays
    pending.

    Args:
        graph: A compiled graph with a checkpointer (async, or sync such as `SqliteSaver`).
        config: The thread's config, `{"configurable": {"thread_id": ...}}`.
        question_timeout: Seconds each question may wait; default no limit.

    Raises:
        UserQuestionError: a failed ask that cannot be carried into the graph (`ASK_CANCELLED`
            and `ASK_TIMED_OUT` of interrupts other than `ask_user`'s, `HOST_UNREACHABLE`,
            `UNAUTHORIZED`, ...), or `BAD_REQUEST` for an Agent Inbox interrupt that allows only
            edit. Anything the graph raises when resumed propagates.
    """
    thread_id = _thread_id(config)
    thread = _Thread(graph, config)
    while True:
        snapshot = await thread.state()
        pending = list({each.id: each for each in snapshot.interrupts}.values())
        if not pending:
            return snapshot
        values = await all_or_none(
            [
                functools.partial(_resume_value, asker, thread_id, each, question_timeout)
                for each in pending
            ]
        )
        await thread.resume({each.id: value for each, value in zip(pending, values, strict=True)})


class Follower:
    """Forwards the interrupts of many threads of one graph at once; made by `following()`."""

    def __init__(
        self, graph: Any, asker: Asker, group: TaskGroup, question_timeout: float | None
    ) -> None:
        self._graph, self._asker, self._group, self._timeout = graph, asker, group, question_timeout
        self._followed: set[str] = set()
        self.done: list[tuple[str, StateSnapshot | Exception]] = []
        """Each forward that ended: the thread id and its last state, or the error it raised."""

    @property
    def followed(self) -> frozenset[str]:
        """The threads being forwarded now."""
        return frozenset(self._followed)

    def follow(self, config: Mapping[str, Any]) -> None:
        """Forward the thread's interrupts until none is pending; nothing if it is followed."""
        thread_id = _thread_id(config)
        if thread_id not in self._followed:
            self._followed.add(thread_id)
            self._group.start_soon(self._forward, thread_id, config)

    async def recover(self) -> list[str]:
        """Follow every thread in the graph's checkpointer, as a restarted process does to pick
        up the questions it was waiting for; returns their ids. It reads every checkpoint."""
        thread_ids = await _thread_ids(self._graph)
        for thread_id in thread_ids:
            self.follow({"configurable": {"thread_id": thread_id}})
        return thread_ids

    async def _forward(self, thread_id: str, config: Mapping[str, Any]) -> None:
        try:
            snapshot = await forward_interrupts(
                self._graph, config, self._asker, question_timeout=self._timeout
            )
        except Exception as error:
            logger.error("forwarding the interrupts of thread %s failed", thread_id, exc_info=True)
            self.done.append((thread_id, error))
        else:
            self.done.append((thread_id, snapshot))
        finally:
            self._followed.discard(thread_id)


async def _thread_ids(graph: Any) -> list[str]:
    saver = graph.checkpointer
    seen: dict[str, None] = {}
    try:
        async for item in saver.alist(None):
            seen.setdefault(str(item.config["configurable"]["thread_id"]))
    except NotImplementedError:
        items = await anyio.to_thread.run_sync(lambda: list(saver.list(None)))
        for item in items:
            seen.setdefault(str(item.config["configurable"]["thread_id"]))
    return list(seen)


@asynccontextmanager
async def following(
    graph: Any, asker: Asker, *, question_timeout: float | None = None
) -> AsyncIterator[Follower]:
    """A `Follower` for a long-running process: `follow(config)` each thread that interrupts
    (or `recover()` them all at start-up); the block ends when every followed thread is done,
    or is cancelled with it. A thread whose forwarding fails is logged and recorded in
    `done`; the others go on."""
    async with anyio.create_task_group() as group:
        yield Follower(graph, asker, group, question_timeout)
