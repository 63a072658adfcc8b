"""Asking through the MCP client's elicitation: in flight (legacy), or by resolver (both eras)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio
import mcp_types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context as MCPContext
from mcp.server.mcpserver import ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel

from user_questions import (
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserQuestionError,
)
from user_questions.bridges.mcp import ElicitationProvider, QuestionForm

pytestmark = pytest.mark.anyio

QUESTIONS = [
    AskUserQuestionItem(
        id="pkg",
        question="Which package manager?",
        header="Tooling",
        detail="We install **once**.",
        options=[
            AskUserQuestionOption(label="pnpm", description="Fast, strict installs."),
            AskUserQuestionOption(label="npm"),
        ],
    ),
    AskUserQuestionItem(
        id="features",
        question="Which features?",
        options=[AskUserQuestionOption(label="lint"), AskUserQuestionOption(label="test")],
        multi_select=True,
    ),
]
FORM = QuestionForm(QUESTIONS)


def as_text(error: UserQuestionError) -> str:
    """A `UserQuestionError` as the tool bodies below report it: `CODE: message`."""
    return f"{error.code}: {error}"


async def in_flight(ctx: MCPContext) -> str:
    try:
        answer = await ElicitationProvider(ctx).ask(AskUserQuestionRequest(questions=QUESTIONS))
    except UserQuestionError as error:
        return as_text(error)
    return answer.model_dump_json()


def ask_form() -> Any:
    return FORM.elicit()


async def by_resolver(outcome: Annotated[ElicitationResult[BaseModel], Resolve(ask_form)]) -> str:
    try:
        return FORM.answer(outcome).model_dump_json()
    except UserQuestionError as error:
        return as_text(error)


def make_server() -> MCPServer:
    server = MCPServer("asker")
    server.add_tool(in_flight)
    server.add_tool(by_resolver)
    return server


def replying(result: mcp_types.ElicitResult | mcp_types.ErrorData, seen: list[Any]) -> Any:
    async def callback(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        seen.append(params)
        return result

    return callback


ACCEPT = mcp_types.ElicitResult(
    action="accept", content={"pkg": "npm", "features": ["test", "lint"], "features.other": "ci"}
)
EXPECTED = (
    '{"answers":[{"id":"pkg","selected":["npm"]},'
    '{"id":"features","selected":["lint","test"],"custom":"ci"}]}'
)


async def call(server: MCPServer, tool: str, mode: str, callback: Any | None) -> str:
    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        result = await client.call_tool(tool, {})
    return result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("tool", "mode"),
    [("in_flight", "legacy"), ("by_resolver", "legacy"), ("by_resolver", "2026-07-28")],
)
async def test_the_client_sees_one_titled_form_and_its_answer_comes_back(
    tool: str, mode: str
) -> None:
    seen: list[Any] = []
    assert await call(make_server(), tool, mode, replying(ACCEPT, seen)) == EXPECTED
    (params,) = seen
    assert params.message == (
        "1. Tooling: Which package manager?\n\nWe install **once**.\n\n2. Which features?"
    )
    properties = params.requested_schema["properties"]
    assert properties["pkg"]["oneOf"] == [
        {"const": "pnpm", "title": "pnpm — Fast, strict installs."},
        {"const": "npm", "title": "npm"},
    ]
    assert properties["features"]["items"] == {
        "anyOf": [{"const": "lint", "title": "lint"}, {"const": "test", "title": "test"}]
    }
    assert properties["pkg.other"]["type"] == "string"
    assert "required" not in params.requested_schema


def test_the_resolver_form_renders_exactly_the_provider_form() -> None:
    from mcp.server.elicitation import render_elicitation_schema

    rendered = render_elicitation_schema(FORM.model)
    assert rendered["properties"] == FORM.schema["properties"]
    assert FORM.elicit().message == FORM.message


@pytest.mark.parametrize("action", ["decline", "cancel"])
@pytest.mark.parametrize(("tool", "mode"), [("in_flight", "legacy"), ("by_resolver", "2026-07-28")])
async def test_decline_and_cancel_are_dismissals(action: Any, tool: str, mode: str) -> None:
    result = mcp_types.ElicitResult(action=action)
    text = await call(make_server(), tool, mode, replying(result, []))
    assert text == "ASK_CANCELLED: the user cancelled ask_user_question"


async def test_a_client_without_elicitation_gets_a_clear_error_code() -> None:
    text = await call(make_server(), "in_flight", "legacy", None)
    assert text == (
        "ELICITATION_UNSUPPORTED: the MCP client did not declare form elicitation, so it cannot "
        "be asked questions"
    )


async def test_a_2026_connection_is_told_to_ask_through_a_resolver() -> None:
    text = await call(make_server(), "in_flight", "2026-07-28", replying(ACCEPT, []))
    assert text.startswith(
        "ELICITATION_UNSUPPORTED: this MCP connection (protocol 2026-07-28) carries no request"
    )
    assert "QuestionForm" in text


async def test_a_client_that_answers_with_an_error_is_reported_as_unsupported() -> None:
    refusal = mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message="no forms here")
    text = await call(make_server(), "in_flight", "legacy", replying(refusal, []))
    assert (
        text
        == "ELICITATION_UNSUPPORTED: the MCP client could not show the questions: no forms here"
    )


async def test_content_that_does_not_fit_the_form_is_a_bad_answer() -> None:
    wrong = mcp_types.ElicitResult(action="accept", content={"pkg": "yarn"})
    text = await call(make_server(), "in_flight", "legacy", replying(wrong, []))
    assert text == 'BAD_ANSWER: provider answer for question pkg: "yarn" is not one of its options'


async def test_withdrawing_the_question_cancels_the_clients_elicitation() -> None:
    shown, withdrawn = anyio.Event(), anyio.Event()

    async def slow_user(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        shown.set()
        try:
            await anyio.sleep_forever()
        finally:
            withdrawn.set()
        raise AssertionError("unreachable")

    server = MCPServer("asker")

    async def gives_up(ctx: MCPContext) -> str:
        async with anyio.create_task_group() as group:

            async def ask() -> None:
                await ElicitationProvider(ctx).ask(AskUserQuestionRequest(questions=QUESTIONS))

            group.start_soon(ask)
            await shown.wait()
            group.cancel_scope.cancel()
        return "withdrawn"

    server.add_tool(gives_up)
    with anyio.fail_after(10):
        assert await call(server, "gives_up", "legacy", slow_user) == "withdrawn"
        await withdrawn.wait()


DEPLOY = AskUserQuestionItem.model_validate(
    {
        "id": "deploy",
        "question": "How should it deploy?",
        "schema": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
                "canary": {"type": "boolean", "title": "Canary first", "default": True},
                "region": {
                    "type": "string",
                    "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "US"}],
                },
                "checks": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["lint", "test", "e2e"]},
                    "minItems": 1,
                },
            },
            "required": ["replicas", "region"],
        },
    }
)
DEPLOY_FORM = QuestionForm([DEPLOY])
TYPED = {"replicas": 3, "canary": False, "region": "eu", "checks": ["lint", "e2e"]}


async def deploy_in_flight(ctx: MCPContext) -> str:
    request = AskUserQuestionRequest(questions=[DEPLOY])
    try:
        return (await ElicitationProvider(ctx).ask(request)).model_dump_json()
    except UserQuestionError as error:
        return as_text(error)


def ask_deploy() -> Any:
    return DEPLOY_FORM.elicit()


async def deploy_by_resolver(
    outcome: Annotated[ElicitationResult[BaseModel], Resolve(ask_deploy)],
) -> str:
    return DEPLOY_FORM.answer(outcome).model_dump_json()


@pytest.mark.parametrize(
    ("tool", "mode"),
    [
        ("deploy_in_flight", "legacy"),
        ("deploy_by_resolver", "legacy"),
        ("deploy_by_resolver", "2026-07-28"),
    ],
)
async def test_a_form_is_the_clients_form_and_its_typed_content_the_value(
    tool: str, mode: str
) -> None:
    server = MCPServer("deployer")
    server.add_tool(deploy_in_flight)
    server.add_tool(deploy_by_resolver)
    seen: list[Any] = []
    accepted = mcp_types.ElicitResult(action="accept", content=TYPED)
    text = await call(server, tool, mode, replying(accepted, seen))
    assert json.loads(text) == {"answers": [{"id": "deploy", "selected": [], "value": TYPED}]}
    (params,) = seen
    assert params.message == "How should it deploy?"
    assert params.requested_schema["properties"] == DEPLOY_FORM.schema["properties"]
    assert params.requested_schema["required"] == ["replicas", "region"]
    assert params.requested_schema["properties"]["replicas"]["type"] == "integer"
    assert params.requested_schema["properties"]["region"]["title"] == "region"  # the key, as shown


async def test_a_forms_content_that_breaks_it_is_a_bad_answer_naming_the_field() -> None:
    server = MCPServer("deployer")
    server.add_tool(deploy_in_flight)
    wrong = mcp_types.ElicitResult(action="accept", content={**TYPED, "replicas": 11})
    text = await call(server, "deploy_in_flight", "legacy", replying(wrong, []))
    assert text == (
        "BAD_ANSWER: provider answer for question deploy: value.replicas: must be at most 10"
    )
