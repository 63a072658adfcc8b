"""Pydantic AI through a real host: the toolset's question and a deferred approval reach
`uq serve`, and the agent goes on with what the person decided; a timeout withdraws the card."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.e2e.frameworks.conftest import Person
from tests.e2e.host_process import HostProcess
from user_questions import connect
from user_questions.integrations.pydantic_ai import approve_deferred, ask_user_toolset

pytestmark = pytest.mark.anyio

QUESTION = {
    "id": "env",
    "question": "Deploy where?",
    "options": [{"label": "staging"}, {"label": "prod"}],
}


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last: Any = messages[-1].parts[-1]
    if last.part_kind == "user-prompt":
        return ModelResponse(parts=[ToolCallPart("ask_user_question", {"questions": [QUESTION]})])
    return ModelResponse(parts=[TextPart(f"tool said: {last.content}")])


async def test_the_agents_question_is_answered_on_the_host(
    host: HostProcess, person: Person
) -> None:
    outputs: list[str] = []

    async def agent() -> None:
        async with connect(host.url, session=person.session) as asker:
            result = await Agent(FunctionModel(model), toolsets=[ask_user_toolset(asker)]).run("go")
        outputs.append(result.output)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(agent)
            (frame,) = await person.pending()
            await person.answer(frame, {"id": "env", "selected": ["staging"]})
    assert outputs == ['tool said: {"answers":[{"id":"env","selected":["staging"]}]}']


async def test_a_timeout_reads_as_our_error_and_takes_the_card_off_the_host(
    host: HostProcess, person: Person
) -> None:
    async with connect(host.url, session=person.session) as asker:
        toolset = ask_user_toolset(asker, question_timeout=1.0)
        with anyio.fail_after(30):
            result = await Agent(FunctionModel(model), toolsets=[toolset]).run("go")
    assert result.output == "tool said: Error: ask_user_question timed out before the user answered"
    assert [entry["outcome"] for entry in await person.history()] == ["timed-out"]
    pending = await anyio.to_thread.run_sync(host.pending)
    assert [frame for frame in pending if frame["payload"]["sessionId"] == person.session] == []


def deletes(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last: Any = messages[-1].parts[-1]
    if last.part_kind == "user-prompt":
        return ModelResponse(parts=[ToolCallPart("delete_file", {"path": "notes.txt"}, "call-1")])
    return ModelResponse(parts=[TextPart(f"tool said: {last.content}")])


async def test_a_deferred_approval_is_decided_on_the_host(
    host: HostProcess, person: Person
) -> None:
    agent: Agent[None, Any] = Agent(FunctionModel(deletes), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        return f"deleted {path}"

    paused = await agent.run("clean up")
    assert isinstance(paused.output, DeferredToolRequests)
    decided: list[Any] = []

    async def approve() -> None:
        async with connect(host.url, session=person.session) as asker:
            decided.append(await approve_deferred(paused.output, asker))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(approve)
            (frame,) = await person.pending()
            (card,) = frame["payload"]["questions"]
            assert card["question"] == "Allow the agent to run delete_file: notes.txt?"
            await person.answer(frame, {"id": "approval", "selected": ["Allow"]})
    resumed = await agent.run(
        message_history=paused.all_messages(), deferred_tool_results=decided[0]
    )
    assert resumed.output == "tool said: deleted notes.txt"
