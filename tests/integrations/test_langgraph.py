"""LangGraph: `ask_user` inside a graph, and `forward_interrupts` answering through an asker.

The graphs are real LangGraph graphs with real checkpointers; the person is a `ScriptedProvider`
(the host itself is exercised in tests/e2e/frameworks/).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, Field

from tests.integrations.frameworks import (
    EVERYTHING,
    PKG,
    State,
    choose,
    graph_of,
    inbox_node,
    together,
)
from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    ErrorCode,
    ScriptedProvider,
    UserQuestionError,
    connect,
)
from user_questions.integrations.langgraph import (
    ASK_INTERRUPT,
    MAX_GENERATIONS,
    ask_user,
    following,
    forward_interrupts,
    rpc_id_of,
)
from user_questions.service import AskUserQuestionRequest

pytestmark = pytest.mark.anyio


def config(thread: str = "thread-1") -> Any:
    return {"configurable": {"thread_id": thread}}


async def test_ask_user_interrupts_with_our_request_and_returns_the_answer_on_resume() -> None:
    graph = graph_of(choose)
    paused = await graph.ainvoke({}, config())
    (pending,) = paused["__interrupt__"]
    assert pending.value == {"type": ASK_INTERRUPT, "questions": [PKG]}
    human = ScriptedProvider({"pkg": "uv"})
    async with connect(provider=human) as asker:
        with anyio.fail_after(10):
            snapshot = await forward_interrupts(graph, config(), asker)
    assert snapshot.values == {"pkg": "uv"}
    assert snapshot.interrupts == ()
    assert [question.id for question in human.seen[0].questions] == ["pkg"]


async def test_a_dismissal_is_raised_inside_the_node() -> None:
    graph = graph_of(choose)
    await graph.ainvoke({}, config())
    async with connect(provider=ScriptedProvider({})) as asker:
        snapshot = await forward_interrupts(graph, config(), asker)
    assert snapshot.values == {"error": "ASK_CANCELLED"}


async def test_a_timeout_reaches_the_node_as_ask_timed_out() -> None:
    graph = graph_of(choose)
    await graph.ainvoke({}, config())
    async with connect(provider=ScriptedProvider({"pkg": "uv"}, delay=30)) as asker:
        with anyio.fail_after(10):
            snapshot = await forward_interrupts(graph, config(), asker, question_timeout=0.05)
    assert snapshot.values == {"error": "ASK_TIMED_OUT"}


async def test_bad_questions_fail_in_the_node_where_the_mistake_is() -> None:
    def twice(state: State) -> State:
        ask_user([PKG, PKG])
        return {}

    with pytest.raises(UserQuestionError) as bad:
        await graph_of(twice).ainvoke({}, config())
    assert bad.value.code == ErrorCode.BAD_QUESTION


async def test_a_resume_value_that_does_not_answer_the_questions_is_bad_answer() -> None:
    def strict(state: State) -> State:
        ask_user([PKG])
        return {}

    from langgraph.types import Command

    graph = graph_of(strict)
    await graph.ainvoke({}, config())
    with pytest.raises(UserQuestionError) as bad:
        await graph.ainvoke(
            Command(resume={"answers": [{"id": "pkg", "selected": ["npm"]}]}), config()
        )
    assert bad.value.code == ErrorCode.BAD_ANSWER


@pytest.mark.parametrize(
    ("scripted", "response"),
    [
        ("Accept", {"type": "accept", "args": None}),
        ("Ignore", {"type": "ignore", "args": None}),
        ("Send it tomorrow", {"type": "response", "args": "Send it tomorrow"}),
        (None, {"type": "ignore", "args": None}),
    ],
    ids=["accept", "ignore", "respond", "skip-ignores"],
)
async def test_an_agent_inbox_graph_gets_its_human_response(
    scripted: str | None, response: dict[str, Any]
) -> None:
    graph = graph_of(inbox_node(EVERYTHING))
    await graph.ainvoke({}, config())
    human = ScriptedProvider({"action": scripted})
    async with connect(provider=human) as asker:
        snapshot = await forward_interrupts(graph, config(), asker)
    assert snapshot.values == {"response": response}
    (question,) = human.seen[0].questions
    assert question.header == "send_email"
    assert question.question == "How should the agent go on with send_email?"
    assert [option.label for option in question.options or ()] == ["Accept", "Ignore"]
    assert question.detail is not None
    assert "Send the **weekly report**?" in question.detail
    assert '"to": "ops@example.com"' in question.detail


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("but why?", "they typed an answer, and this step takes no written response"),
        (None, "they skipped it, and this step cannot be skipped"),
    ],
)
async def test_an_answer_an_accept_only_inbox_card_cannot_take_is_not_accepted_once(
    answer: str | None, said: str
) -> None:
    """As in Agent Inbox itself, a step that offers only Accept and is not accepted stays
    pending: the forward ends saying so, and the person is not asked again."""
    graph = graph_of(inbox_node({"allow_accept": True}))
    await graph.ainvoke({}, config())
    human = ScriptedProvider({"action": answer})
    async with connect(provider=human) as asker:
        with pytest.raises(UserQuestionError) as refused:
            await forward_interrupts(graph, config(), asker)
    assert refused.value.code == ErrorCode.ASK_CANCELLED
    assert refused.value.message == (
        f'the person did not accept "send_email": {said}; the interrupt stays pending'
    )
    assert len(human.seen) == 1
    assert len((await graph.aget_state(config())).interrupts) == 1


async def test_an_inbox_card_allowing_edit_is_an_editable_approval_resumed_with_the_edit() -> None:
    graph = graph_of(inbox_node({**EVERYTHING, "allow_edit": True}))
    await graph.ainvoke({}, config())
    changed = {"to": "ops@example.com", "cc": "lead@example.com"}
    human = ScriptedProvider(
        lambda request: AskUserQuestionAnswer(
            answers=[AskUserQuestionAnswerItem(id="action", selected=["Allow"], edited=changed)]
        )
    )
    async with connect(provider=human) as asker:
        snapshot = await forward_interrupts(graph, config(), asker)
    assert snapshot.values == {
        "response": {"type": "edit", "args": {"action": "send_email", "args": changed}}
    }
    approval = human.seen[0].approval
    assert approval is not None
    assert (approval.tool, approval.input, approval.editable) == (
        "send_email",
        {"to": "ops@example.com"},
        True,
    )
    (question,) = human.seen[0].questions  # the host's approval card, which it shows for a call
    assert question.question == "Allow the agent to run send_email?"
    assert [option.label for option in question.options or ()] == ["Allow", "Deny"]


@pytest.mark.parametrize(
    ("answer", "response"),
    [
        ({"selected": ["Allow"]}, {"type": "accept", "args": None}),
        ({"selected": ["Deny"]}, {"type": "ignore", "args": None}),
        (
            {"selected": [], "custom": "send it tomorrow"},
            {"type": "response", "args": "send it tomorrow"},
        ),
    ],
    ids=["allow-accepts", "deny-ignores", "text-responds"],
)
async def test_an_editable_inbox_card_reads_every_answer_as_agent_inbox_would(
    answer: dict[str, Any], response: dict[str, Any]
) -> None:
    graph = graph_of(inbox_node({**EVERYTHING, "allow_edit": True}))
    await graph.ainvoke({}, config())
    item = AskUserQuestionAnswerItem(id="action", **answer)
    human = ScriptedProvider(lambda request: AskUserQuestionAnswer(answers=[item]))
    async with connect(provider=human) as asker:
        snapshot = await forward_interrupts(graph, config(), asker)
    assert snapshot.values == {"response": response}


async def test_an_inbox_card_without_edit_is_not_editable_and_refuses_an_edit() -> None:
    graph = graph_of(inbox_node(EVERYTHING))
    await graph.ainvoke({}, config())
    edit = AskUserQuestionAnswerItem(id="action", selected=["Accept"], edited={"to": "x@y.z"})
    human = ScriptedProvider(lambda request: AskUserQuestionAnswer(answers=[edit]))
    async with connect(provider=human) as asker:
        with pytest.raises(UserQuestionError) as refused:
            await forward_interrupts(graph, config(), asker)
    assert refused.value.code == ErrorCode.BAD_ANSWER
    assert human.seen[0].approval is None
    assert len((await graph.aget_state(config())).interrupts) == 1


async def test_an_edit_only_inbox_interrupt_is_refused_and_stays_pending() -> None:
    graph = graph_of(inbox_node({"allow_edit": True}))
    await graph.ainvoke({}, config())
    async with connect(provider=ScriptedProvider({})) as asker:
        with pytest.raises(UserQuestionError) as refused:
            await forward_interrupts(graph, config(), asker)
    assert refused.value.code == ErrorCode.BAD_REQUEST
    assert "allows only edit" in str(refused.value)
    assert len((await graph.aget_state(config())).interrupts) == 1


async def test_a_plain_interrupt_is_a_free_text_question() -> None:
    def name(state: State) -> State:
        return {"response": interrupt("What should the project be called?")}

    graph = graph_of(name)
    await graph.ainvoke({}, config())
    human = ScriptedProvider({"input": "shop"})
    async with connect(provider=human) as asker:
        snapshot = await forward_interrupts(graph, config(), asker)
    assert snapshot.values == {"response": "shop"}
    assert human.seen[0].questions[0].question == "What should the project be called?"


async def test_a_dismissed_plain_interrupt_is_raised_and_stays_pending() -> None:
    def name(state: State) -> State:
        return {"response": interrupt({"want": "a name"})}

    graph = graph_of(name)
    await graph.ainvoke({}, config())
    human = ScriptedProvider({})
    async with connect(provider=human) as asker:
        with pytest.raises(UserQuestionError) as dismissed:
            await forward_interrupts(graph, config(), asker)
    assert dismissed.value.code == ErrorCode.ASK_CANCELLED
    assert '"want": "a name"' in (human.seen[0].questions[0].detail or "")
    assert len((await graph.aget_state(config())).interrupts) == 1


async def test_interrupts_pending_together_are_asked_at_once_and_resumed_together() -> None:
    def left(state: State) -> State:
        return {"pkg": ask_user([PKG]).answers[0].selected[0]}

    def right(state: State) -> State:
        answer = ask_user([{"id": "name", "question": "Name?"}])
        return {"response": answer.answers[0].custom}

    builder: Any = StateGraph(State)
    builder.add_node("left", left)
    builder.add_node("right", right)
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    graph = builder.compile(checkpointer=InMemorySaver())
    await graph.ainvoke({}, config())
    person, shown = together(2, lambda request: {"pkg": "pip", "name": "shop"})
    async with connect(provider=ScriptedProvider(person)) as asker:
        with anyio.fail_after(10):
            snapshot = await forward_interrupts(graph, config(), asker)
    assert snapshot.values == {"pkg": "pip", "response": "shop"}
    assert sorted(shown) == ["Name?", "Which package manager?"]


class Host:
    """A provider that keeps requests by rpcId as a host does: an rpcId withdrawn earlier fails
    with `ASK_ABORTED` when asked again, and every ask is recorded."""

    def __init__(self, withdrawn: set[str]) -> None:
        self.withdrawn = withdrawn
        self.asked: list[str] = []

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        raise AssertionError("asked without an rpcId")

    async def ask_with_id(
        self, rpc_id: str, request: AskUserQuestionRequest
    ) -> AskUserQuestionAnswer:
        self.asked.append(rpc_id)
        if rpc_id in self.withdrawn:
            raise UserQuestionError("withdrawn", ErrorCode.ASK_ABORTED)
        return AskUserQuestionAnswer.model_validate(
            {"answers": [{"id": "pkg", "selected": ["uv"]}]}
        )


async def test_each_interrupt_is_asked_under_an_rpc_id_of_its_thread_and_id() -> None:
    graph = graph_of(choose)
    await graph.ainvoke({}, config("t-42"))
    (pending,) = (await graph.aget_state(config("t-42"))).interrupts
    host = Host(withdrawn=set())
    async with connect(provider=host) as asker:
        await forward_interrupts(graph, config("t-42"), asker)
    assert host.asked == [rpc_id_of("t-42", pending.id)]
    assert rpc_id_of("t-42", pending.id) != rpc_id_of("t-43", pending.id)
    assert len(rpc_id_of("t" * 1000, pending.id)) < 64


async def test_a_question_withdrawn_by_an_earlier_forwarder_is_asked_anew() -> None:
    graph = graph_of(choose)
    await graph.ainvoke({}, config())
    (pending,) = (await graph.aget_state(config())).interrupts
    first = rpc_id_of("thread-1", pending.id)
    host = Host(withdrawn={first})
    async with connect(provider=host) as asker:
        snapshot = await forward_interrupts(graph, config(), asker)
    assert host.asked == [first, rpc_id_of("thread-1", pending.id, 1)]
    assert host.asked[1] == f"{first}.1"
    assert snapshot.values == {"pkg": "uv"}


async def test_a_host_that_withdraws_every_request_ends_the_forward_after_max_generations() -> None:
    graph = graph_of(inbox_node({"allow_accept": True}))
    await graph.ainvoke({}, config())
    (pending,) = (await graph.aget_state(config())).interrupts
    every = {rpc_id_of("thread-1", pending.id, generation) for generation in range(100)}
    host = Host(withdrawn=every)
    async with connect(provider=host) as asker:
        with pytest.raises(UserQuestionError) as withdrawn:
            await forward_interrupts(graph, config(), asker)
    assert withdrawn.value.code == ErrorCode.ASK_ABORTED
    assert len(host.asked) == MAX_GENERATIONS + 1
    assert len((await graph.aget_state(config())).interrupts) == 1


async def test_a_sync_sqlite_checkpointer_is_read_in_a_worker_thread(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "graph.db", check_same_thread=False)
    try:
        graph = graph_of(choose, checkpointer=SqliteSaver(connection))
        await anyio.to_thread.run_sync(graph.invoke, {}, config())
        async with connect(provider=ScriptedProvider({"pkg": "pip"})) as asker:
            snapshot = await forward_interrupts(graph, config(), asker)
    finally:
        connection.close()
    assert snapshot.values == {"pkg": "pip"}


async def test_a_follower_recovers_every_interrupted_thread_and_records_each_end() -> None:
    graph = graph_of(choose)
    for thread in ("a", "b"):
        await graph.ainvoke({}, config(thread))
    async with connect(provider=ScriptedProvider({"pkg": "uv"})) as asker:
        with anyio.fail_after(10):
            async with following(graph, asker) as follower:
                assert sorted(await follower.recover()) == ["a", "b"]
                follower.follow(config("a"))  # already followed: nothing more
                assert follower.followed == {"a", "b"}
    assert sorted(thread for thread, _ in follower.done) == ["a", "b"]
    assert all(getattr(end, "values", None) == {"pkg": "uv"} for _, end in follower.done)


async def test_a_follower_records_a_failed_thread_and_goes_on() -> None:
    def relay(state: State) -> State:
        return {"response": interrupt(state["response"])}

    graph = graph_of(relay)
    edit_only = {"action_request": {"action": "deploy"}, "config": {"allow_edit": True}}
    await graph.ainvoke({"response": [edit_only]}, config("edit-only"))
    await graph.ainvoke({"response": "Name?"}, config("fine"))
    human = ScriptedProvider({"input": "shop"})
    async with connect(provider=human) as asker, following(graph, asker) as follower:
        await follower.recover()
    ends = dict(follower.done)
    assert isinstance(ends["edit-only"], UserQuestionError)
    assert ends["edit-only"].code == ErrorCode.BAD_REQUEST
    assert getattr(ends["fine"], "values", None) == {"response": "shop"}


async def test_a_failure_of_the_host_is_raised_to_the_forwarder_and_the_question_waits() -> None:
    class Unreachable:
        async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            raise UserQuestionError("the host is gone", ErrorCode.HOST_UNREACHABLE)

    graph = graph_of(choose)
    await graph.ainvoke({}, config())
    async with connect(provider=Unreachable()) as asker:
        with pytest.raises(UserQuestionError) as gone:
            await forward_interrupts(graph, config(), asker)
    assert gone.value.code == ErrorCode.HOST_UNREACHABLE
    snapshot = await graph.aget_state(config())
    assert len(snapshot.interrupts) == 1
    assert snapshot.values == {}


async def test_an_interrupt_with_a_response_schema_is_asked_as_its_form_and_resumed_typed() -> None:
    class Deploy(BaseModel):
        replicas: int = Field(ge=1, le=10)
        canary: bool = False

    def deploy(state: State) -> State:
        value = interrupt("How should it deploy?", response_schema=Deploy)
        return {"response": value.model_dump()}  # LangGraph validated it as a Deploy

    graph = graph_of(deploy)
    await graph.ainvoke({}, config())
    typed = {"replicas": 3, "canary": True}
    item = AskUserQuestionAnswerItem(id="input", selected=[], value=typed)
    human = ScriptedProvider(lambda request: AskUserQuestionAnswer(answers=[item]))
    async with connect(provider=human) as asker:
        snapshot = await forward_interrupts(graph, config(), asker)
    assert snapshot.values == {"response": typed}
    (question,) = human.seen[0].questions
    assert question.question == "How should it deploy?"
    assert question.schema_ is not None
    assert question.schema_["properties"]["replicas"]["type"] == "integer"
    assert question.schema_["properties"]["canary"]["type"] == "boolean"
    assert question.schema_["required"] == ["replicas"]
