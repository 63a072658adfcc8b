"""The MCP server over `ctx.tools`: same schema and texts, progress while waiting, cancellation."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    Context,
    ScriptedProvider,
    tool_ask_user,
)
from user_questions.bridges.mcp import create_server

pytestmark = pytest.mark.anyio
MODES = ["legacy", "2026-07-28"]
ARGS = {"questions": [{"id": "pkg", "question": "Which?", "options": [{"label": "pnpm"}]}]}


@pytest.fixture
def tools_ctx(ctx: Context) -> Context:
    ctx.plugin(tool_ask_user)
    return ctx


@pytest.mark.parametrize("mode", MODES)
async def test_the_tool_is_listed_with_the_spec_description_and_schema(
    tools_ctx: Context, mode: str
) -> None:
    async with Client(create_server(tools_ctx), mode=mode) as client:
        listed = (await client.list_tools()).tools
    assert [(tool.name, tool.description) for tool in listed] == [
        ("ask_user_question", tool_ask_user.DESCRIPTION)
    ]
    assert listed[0].input_schema == tool_ask_user.PARAMETERS


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("script", "args"),
    [
        ({"pkg": "pnpm"}, ARGS),
        ({"pkg": "something else"}, ARGS),
        ({}, ARGS),
        ({}, {"questions": []}),
        ({}, {"questions": [{"question": "no id"}]}),
    ],
)
async def test_results_and_errors_read_exactly_as_the_tool_runtime_writes_them(
    tools_ctx: Context, mode: str, script: dict[str, Any], args: dict[str, Any]
) -> None:
    tools_ctx.user_questions.register_provider(ScriptedProvider(script))
    expected = await tools_ctx.tools.execute("ask_user_question", args)
    async with Client(create_server(tools_ctx), mode=mode) as client:
        result = await client.call_tool("ask_user_question", args)
    assert [block.model_dump(exclude_none=True) for block in result.content] == expected.content
    assert result.is_error == expected.is_error


async def test_a_success_reads_as_compact_json_and_a_dismissal_as_an_error(
    tools_ctx: Context,
) -> None:
    tools_ctx.user_questions.register_provider(ScriptedProvider({"pkg": "pnpm"}))
    async with Client(create_server(tools_ctx), mode="legacy") as client:
        ok = await client.call_tool("ask_user_question", ARGS)
        failed = await client.call_tool(
            "ask_user_question", {"questions": [{"id": "x", "question": "?"}]}
        )
    assert ok.content[0].text == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'  # type: ignore[union-attr]
    assert not ok.is_error
    assert failed.content[0].text == "Error: the user cancelled ask_user_question"  # type: ignore[union-attr]
    assert failed.is_error


@pytest.mark.parametrize("mode", MODES)
async def test_progress_is_reported_while_the_question_waits(tools_ctx: Context, mode: str) -> None:
    progressed = anyio.Event()
    ticks: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        ticks.append((progress, message))
        if len(ticks) == 2:
            progressed.set()

    async def answer_after_progress(request: AskUserQuestionRequest) -> dict[str, Any]:
        await progressed.wait()
        return {"pkg": "pnpm"}

    tools_ctx.user_questions.register_provider(ScriptedProvider(answer_after_progress))
    server = create_server(tools_ctx, progress_interval=0.01)
    with anyio.fail_after(10):
        async with Client(server, mode=mode) as client:
            result = await client.call_tool(
                "ask_user_question", ARGS, progress_callback=on_progress
            )
    assert not result.is_error
    assert ticks[:2] == [(1, "waiting for the user's answer"), (2, "waiting for the user's answer")]


class Waiting:
    """A provider that waits until cancelled, and records the withdrawal."""

    def __init__(self) -> None:
        self.asked = anyio.Event()
        self.withdrawn = anyio.Event()

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        self.asked.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.withdrawn.set()
        raise AssertionError("unreachable")


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_cancellation_withdraws_the_question(tools_ctx: Context, mode: str) -> None:
    provider = Waiting()
    tools_ctx.user_questions.register_provider(provider)
    with anyio.fail_after(10):
        async with Client(create_server(tools_ctx), mode=mode) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "ask_user_question", ARGS)
                await provider.asked.wait()
                group.cancel_scope.cancel()
            await provider.withdrawn.wait()
            # The connection stays usable after the withdrawal.
            assert [tool.name for tool in (await client.list_tools()).tools] == [
                "ask_user_question"
            ]


async def test_tools_registered_later_are_listed_and_unloaded_ones_disappear(ctx: Context) -> None:
    server = create_server(ctx)
    async with Client(server, mode="legacy") as client:
        assert (await client.list_tools(cache_mode="bypass")).tools == []
        fiber = ctx.plugin(tool_ask_user)
        assert len((await client.list_tools(cache_mode="bypass")).tools) == 1
        fiber.dispose()
        result = await client.call_tool("ask_user_question", ARGS)
    assert result.is_error
    assert result.content[0].text == 'Error: unknown tool "ask_user_question"'  # type: ignore[union-attr]
