"""`ctx.tools`: registration, argument validation before dispatch, abort before dispatch,
results for every failure, and the exported definitions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from user_questions import AbortController, Context, HarnessError, Tool, ToolCall, UserQuestionError

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "mode": {"type": "string", "enum": ["read", "write"]},
        "lines": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
        "flags": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"force": {"type": "boolean"}},
        },
    },
    "required": ["path"],
}


def echo_tool(calls: list[tuple[dict[str, Any], ToolCall]] | None = None) -> Tool:
    async def run(args: dict[str, Any], call: ToolCall) -> dict[str, Any]:
        if calls is not None:
            calls.append((args, call))
        return {"echo": args, "ünïcode": "✓"}

    return Tool(name="echo", description="Echo the arguments.", parameters=SCHEMA, run=run)


async def test_a_registered_tool_runs_and_its_value_is_compact_json(ctx: Context) -> None:
    calls: list[tuple[dict[str, Any], ToolCall]] = []
    ctx.tools.register(echo_tool(calls))
    result = await ctx.tools.execute("echo", {"path": "a.txt"})
    assert not result.is_error
    assert result.value == {"echo": {"path": "a.txt"}, "ünïcode": "✓"}
    assert result.content == [{"type": "text", "text": '{"echo":{"path":"a.txt"},"ünïcode":"✓"}'}]
    assert result.error is None
    assert calls[0][1] == ToolCall(agent=None, signal=None)


async def test_json_text_arguments_are_accepted(ctx: Context) -> None:
    ctx.tools.register(echo_tool())
    result = await ctx.tools.execute("echo", '{"path": "b"}')
    assert result.value["echo"] == {"path": "b"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, 'invalid arguments: missing required property "path"'),
        ([], "invalid arguments: arguments must be an object, got array"),
        ({"path": 3}, 'invalid arguments: property "path" must be a string, got integer'),
        (
            {"path": "a", "mode": "delete"},
            'invalid arguments: property "mode" must be one of "read", "write"',
        ),
        (
            {"path": "a", "lines": [1, "2"]},
            'invalid arguments: property "lines[1]" must be an integer, got string',
        ),
        (
            {"path": "a", "lines": []},
            'invalid arguments: property "lines" must have at least 1 items, got 0',
        ),
        (
            {"path": "a", "flags": {"force": True, "quiet": True}},
            'invalid arguments: unexpected property "flags.quiet"',
        ),
        ("{not json", "invalid arguments: not valid JSON (Expecting property name"),
        ("[" * 1100 + "]" * 1100, "invalid arguments: nested deeper than 64 levels"),
        (
            '{"path": "\\ud800"}',
            'invalid arguments: property "path" holds a lone surrogate (U+D800), which is not text',
        ),
    ],
)
async def test_invalid_arguments_are_refused_before_dispatch(
    ctx: Context, args: object, message: str
) -> None:
    calls: list[tuple[dict[str, Any], ToolCall]] = []
    ctx.tools.register(echo_tool(calls))
    result = await ctx.tools.execute("echo", args)
    assert result.is_error
    assert result.text.startswith(f"Error: {message}")
    assert result.error is not None
    assert result.error["info"] == {"name": "ToolArgsError", "code": "INVALID_ARGS"}
    assert calls == []


async def test_null_for_an_optional_property_reads_as_absent(ctx: Context) -> None:
    calls: list[tuple[dict[str, Any], ToolCall]] = []
    ctx.tools.register(echo_tool(calls))
    result = await ctx.tools.execute("echo", {"path": "a", "mode": None, "lines": None})
    assert not result.is_error
    assert calls[0][0] == {"path": "a"}


async def test_an_aborted_signal_never_calls_the_tool(ctx: Context) -> None:
    calls: list[tuple[dict[str, Any], ToolCall]] = []
    ctx.tools.register(echo_tool(calls))
    controller = AbortController()
    controller.abort()
    result = await ctx.tools.execute("echo", {"path": "a"}, signal=controller.signal)
    assert result.is_error
    assert result.text == "Error: tool call aborted before dispatch"
    assert result.error == {
        "message": "tool call aborted before dispatch",
        "info": {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"},
    }
    assert calls == []


async def test_an_unknown_tool_is_an_error_result(ctx: Context) -> None:
    result = await ctx.tools.execute("nope", {})
    assert result.text == 'Error: unknown tool "nope"'
    assert result.error is not None
    assert result.error["info"]["code"] == "UNKNOWN_TOOL"


async def test_a_harness_error_keeps_its_name_and_code(ctx: Context) -> None:
    async def run(args: dict[str, Any], call: ToolCall) -> None:
        raise UserQuestionError("no user-questions provider is registered", "NO_PROVIDER")

    ctx.tools.register(Tool(name="t", description="d", parameters={"type": "object"}, run=run))
    result = await ctx.tools.execute("t", {})
    assert result.text == "Error: no user-questions provider is registered"
    assert result.error == {
        "message": "no user-questions provider is registered",
        "info": {"name": "UserQuestionError", "code": "NO_PROVIDER"},
    }


async def test_any_other_tool_error_is_a_result_without_info(
    ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    async def run(args: dict[str, Any], call: ToolCall) -> None:
        raise KeyError("missing")

    ctx.tools.register(Tool(name="t", description="d", parameters={"type": "object"}, run=run))
    result = await ctx.tools.execute("t", {})
    assert result.is_error
    assert result.error == {"message": "'missing'"}
    assert "tool t raised" in caplog.text


async def test_registering_a_second_tool_of_a_name_is_refused(ctx: Context) -> None:
    ctx.tools.register(echo_tool())
    with pytest.raises(HarnessError) as caught:
        ctx.tools.register(echo_tool())
    assert caught.value.code == "DUPLICATE_TOOL"


async def test_the_tool_disposer_unregisters_it_once(ctx: Context) -> None:
    tool = echo_tool()
    dispose = ctx.tools.register(tool)
    assert ctx.tools.get("echo") is tool
    assert ctx.tools.list() == [tool]
    dispose()
    dispose()
    assert ctx.tools.get("echo") is None


def walk(schema: Any) -> list[dict[str, Any]]:
    found = [schema] if isinstance(schema, dict) else []
    children = (
        schema.values() if isinstance(schema, dict) else schema if isinstance(schema, list) else []
    )
    for child in children:
        found += walk(child)
    return found


def test_openai_export_is_strict_mode_compatible() -> None:
    exported = echo_tool().to_openai()
    assert exported["type"] == "function"
    function = exported["function"]
    assert function["name"] == "echo"
    assert function["strict"] is True
    for node in walk(function["parameters"]):
        assert "oneOf" not in node
        assert "minItems" not in node
        if node.get("type") == "object" and "properties" in node:
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])
    properties = function["parameters"]["properties"]
    assert properties["path"]["type"] == "string"
    assert properties["mode"]["type"] == ["string", "null"]
    json.dumps(exported)


def test_responses_export_is_the_flat_function_shape_with_the_same_strict_schema() -> None:
    tool = echo_tool()
    exported = tool.to_responses()
    assert exported == {
        "type": "function",
        "name": "echo",
        "description": "Echo the arguments.",
        "parameters": tool.to_openai()["function"]["parameters"],
        "strict": True,
    }
    assert "function" not in exported  # the Responses API has no nested "function" object
    exported["parameters"]["properties"].clear()
    assert tool.to_responses()["parameters"]["properties"]  # a copy each time
    json.dumps(exported)


def test_anthropic_and_mcp_exports_carry_the_schema_as_it_is() -> None:
    tool = echo_tool()
    assert tool.to_anthropic() == {
        "name": "echo",
        "description": "Echo the arguments.",
        "input_schema": SCHEMA,
    }
    assert tool.to_mcp() == {
        "name": "echo",
        "description": "Echo the arguments.",
        "inputSchema": SCHEMA,
    }
    assert tool.to_mcp()["inputSchema"] is not SCHEMA
