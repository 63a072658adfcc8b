"""Pydantic AI: the `ask_user_question` toolset and `approve_deferred`, with Pydantic AI's own
test models (`FunctionModel`, `TestModel`) and a `ScriptedProvider` as the person."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent, DeferredToolRequests, ToolApproved, ToolDenied
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import RunContext

from tests.integrations.frameworks import tool_failures
from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    ErrorCode,
    ScriptedProvider,
    UserQuestionError,
    connect,
)
from user_questions.approvals import ALLOW, DENY
from user_questions.integrations.pydantic_ai import approve_deferred, ask_user_toolset
from user_questions.tool_ask_user import DESCRIPTION, PARAMETERS

pytestmark = pytest.mark.anyio

QUESTIONS = {
    "questions": [
        {
            "id": "pkg",
            "question": "Which package manager?",
            "options": [{"label": "uv"}, {"label": "pip"}],
        }
    ]
}


def last_part(messages: list[ModelMessage]) -> Any:
    """The part the model answers: the user's prompt, or the last tool's return."""
    return messages[-1].parts[-1]


def asks_then_reports(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A model that calls ask_user_question, then says what the tool returned."""
    last = last_part(messages)
    if last.part_kind == "user-prompt":
        return ModelResponse(parts=[ToolCallPart("ask_user_question", QUESTIONS)])
    return ModelResponse(parts=[TextPart(f"tool said: {last.content}")])


async def test_the_model_sees_our_schema_and_reads_our_answer_text() -> None:
    seen: list[AgentInfo] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return asks_then_reports(messages, info)

    async with connect(provider=ScriptedProvider({"pkg": "uv"})) as asker:
        agent = Agent(FunctionModel(model), toolsets=[ask_user_toolset(asker)])
        result = await agent.run("set up the project")
    assert result.output == 'tool said: {"answers":[{"id":"pkg","selected":["uv"]}]}'
    (tool,) = seen[0].function_tools
    assert (tool.name, tool.description, tool.parameters_json_schema) == (
        "ask_user_question",
        DESCRIPTION,
        PARAMETERS,
    )


@pytest.mark.parametrize(("provider", "seconds", "text"), tool_failures("pkg"))
async def test_a_dismissal_or_a_timeout_is_our_error_text_for_the_model(
    provider: ScriptedProvider, seconds: float | None, text: str
) -> None:
    async with connect(provider=provider) as asker:
        toolset = ask_user_toolset(asker, question_timeout=seconds)
        with anyio.fail_after(10):
            result = await Agent(FunctionModel(asks_then_reports), toolsets=[toolset]).run("go")
    assert result.output == f"tool said: {text}"


async def test_test_model_calls_the_tool_with_arguments_from_our_schema() -> None:
    human = ScriptedProvider(lambda request: {q.id: None for q in request.questions})
    async with connect(provider=human) as asker:
        result = await Agent(TestModel(), toolsets=[ask_user_toolset(asker)]).run("go")
    assert len(human.seen) == 1
    assert json.loads(result.output)["ask_user_question"].startswith('{"answers":[')


def deletes_a_file(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = last_part(messages)
    if last.part_kind == "user-prompt":
        return ModelResponse(parts=[ToolCallPart("delete_file", {"path": "notes.txt"}, "call-1")])
    return ModelResponse(parts=[TextPart(f"tool said: {last.content}")])


def file_agent(**options: Any) -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(
        FunctionModel(deletes_a_file), output_type=[str, DeferredToolRequests], **options
    )

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        return f"deleted {path}"

    return agent


@pytest.mark.parametrize(
    ("scripted", "decision", "output"),
    [
        (ALLOW, ToolApproved(), "tool said: deleted notes.txt"),
        (DENY, ToolDenied("The user denied this delete_file call."), None),
        (
            "it holds my notes",
            ToolDenied("The user denied this delete_file call and said: it holds my notes"),
            None,
        ),
        (None, ToolDenied("The user denied this delete_file call."), None),
    ],
    ids=["allow", "deny", "reason", "skip"],
)
async def test_a_deferred_approval_becomes_a_card_and_the_decision_its_result(
    scripted: str | None, decision: ToolApproved | ToolDenied, output: str | None
) -> None:
    agent = file_agent()
    paused = await agent.run("clean up")
    assert isinstance(paused.output, DeferredToolRequests)
    human = ScriptedProvider({"approval": scripted})
    async with connect(provider=human) as asker:
        results = await approve_deferred(paused.output, asker)
    assert results.approvals == {"call-1": decision}
    (card,) = human.seen[0].questions
    assert card.question == "Allow the agent to run delete_file: notes.txt?"
    resumed = await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
    expected = output or f"tool said: {decision.message}"  # type: ignore[union-attr]
    assert resumed.output == expected


async def test_a_dismissed_approval_card_approves_nothing() -> None:
    paused = await file_agent().run("clean up")
    assert isinstance(paused.output, DeferredToolRequests)
    async with connect(provider=ScriptedProvider({})) as asker:
        with pytest.raises(UserQuestionError) as dismissed:
            await approve_deferred(paused.output, asker)
    assert dismissed.value.code == ErrorCode.ASK_CANCELLED


async def test_approve_deferred_decides_within_the_run_as_a_deferred_tool_handler() -> None:
    async with connect(provider=ScriptedProvider({"approval": ALLOW})) as asker:

        async def handler(ctx: RunContext[None], requests: DeferredToolRequests) -> Any:
            return await approve_deferred(requests, asker)

        agent = file_agent(capabilities=[HandleDeferredToolCalls(handler=handler)])
        result = await agent.run("clean up")
    assert result.output == "tool said: deleted notes.txt"


async def test_a_call_allowed_with_changes_runs_with_its_new_arguments() -> None:
    agent = file_agent()
    paused = await agent.run("clean up")
    assert isinstance(paused.output, DeferredToolRequests)
    item = AskUserQuestionAnswerItem(id="approval", selected=[ALLOW], edited={"path": "old.txt"})
    human = ScriptedProvider(lambda request: AskUserQuestionAnswer(answers=[item]))
    async with connect(provider=human) as asker:
        results = await approve_deferred(paused.output, asker)
    assert results.approvals == {"call-1": ToolApproved(override_args={"path": "old.txt"})}
    approval = human.seen[0].approval
    assert approval is not None
    assert approval.editable is True
    resumed = await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
    assert resumed.output == "tool said: deleted old.txt"


async def test_a_note_beside_an_allowed_call_reaches_the_tool_as_its_call_metadata() -> None:
    agent: Agent[None, Any] = Agent(
        FunctionModel(deletes_a_file), output_type=[str, DeferredToolRequests]
    )

    @agent.tool(requires_approval=True)
    def delete_file(ctx: RunContext[None], path: str) -> str:
        note = (ctx.tool_call_metadata or {}).get("user-questions", {}).get("note")
        return f"deleted {path} ({note})"

    paused = await agent.run("clean up")
    assert isinstance(paused.output, DeferredToolRequests)
    item = AskUserQuestionAnswerItem(id="approval", selected=[ALLOW], note="keep a backup")
    human = ScriptedProvider(lambda request: AskUserQuestionAnswer(answers=[item]))
    async with connect(provider=human) as asker:
        results = await approve_deferred(paused.output, asker)
    assert results.metadata == {"call-1": {"user-questions": {"note": "keep a backup"}}}
    resumed = await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
    assert resumed.output == "tool said: deleted notes.txt (keep a backup)"
