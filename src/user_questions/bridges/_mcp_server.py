"""An MCP server exposing the tools of a `Context`: what `uq mcp` runs.

Extra `mcp`. Every tool registered on `ctx.tools` (with the `tool_ask_user` plugin,
`ask_user_question`) is listed with its own JSON Schema and called through `ctx.tools.execute`, so
an MCP client sees the same arguments check, the same result text and the same `Error: ...` failures
as any other harness; a failure is a result with `isError`, never a protocol error.

A question may wait for a long time. While a call runs, the server sends a progress notification
every `progress_interval` seconds when the client asked for progress (a `progressToken`), so a
client whose request timeout resets on progress keeps waiting. A client's cancellation
(`notifications/cancelled`, or its side of the call going away) cancels the call's task, which
withdraws the question from the provider (the host, the terminal).
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
from mcp.server import Server
from mcp.server.context import ServerRequestContext

from user_questions.context import Context
from user_questions.tools import ToolResult

__all__ = ["PROGRESS_INTERVAL", "create_server"]

PROGRESS_INTERVAL = 10.0
"""Seconds between progress notifications while a tool call waits."""
PROGRESS_MESSAGE = "waiting for the user's answer"


def create_server(
    ctx: Context,
    *,
    name: str = "user-questions",
    version: str = "",
    progress_interval: float = PROGRESS_INTERVAL,
) -> Server[Any]:
    """A low-level MCP server whose tools are those of `ctx.tools` at each request.

    Run it on any transport: `server.run(read, write, server.create_initialization_options())`
    on streams (stdio), or `server.streamable_http_app()` for streamable HTTP.
    """

    async def list_tools(
        rctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        tools = [mcp_types.Tool.model_validate(tool.to_mcp()) for tool in ctx.tools.list()]
        return mcp_types.ListToolsResult(tools=tools)

    def input_schema(tool_name: str) -> dict[str, Any] | None:
        tool = ctx.tools.get(tool_name)
        return None if tool is None else tool.parameters

    async def call_tool(
        rctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        result: ToolResult | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(_report_progress, rctx, progress_interval)
            result = await ctx.tools.execute(params.name, params.arguments or {})
            group.cancel_scope.cancel()
        assert result is not None
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(text=result.text)], is_error=result.is_error
        )

    return Server(
        name,
        version=version,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _report_progress(rctx: ServerRequestContext[Any], interval: float) -> None:
    """Tick until cancelled; `report_progress` sends nothing unless the client asked for it."""
    ticks = 0
    while True:
        await anyio.sleep(interval)
        ticks += 1
        await rctx.session.report_progress(ticks, message=PROGRESS_MESSAGE)
