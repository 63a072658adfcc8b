"""Plugin registering `approve`: Claude Code's permission prompt tool, answered by a person.

`claude -p --permission-prompt-tool mcp__<server>__approve` (with `uq mcp --permission-tool` as that
MCP server) makes Claude Code call this tool instead of showing a permission prompt. Claude Code 2.1
calls it with `{"tool_name", "input", "tool_use_id"}` and reads one text block holding `{"behavior":
"allow", "updatedInput": {...}}` or `{"behavior": "deny", "message": "..."}` (the shapes its own
error message names). The call is decided as `bridges.claude.decide` decides an Agent SDK permission
request: `AskUserQuestion` is asked and allowed with the answers in `updatedInput`, `ExitPlanMode`
gets the plan-review card, any other tool the approval card. Every failure (no provider, a host that
went away, a malformed call) is a deny, never an allow; so is no decision within the plugin's
`decision_timeout` (`Options`; default `approvals.DECISION_TIMEOUT`, half an hour; `uq mcp
--permission-timeout`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from user_questions.approvals import DECISION_TIMEOUT
from user_questions.bridges.claude import Permission, decide
from user_questions.context import Context
from user_questions.tools import Tool, ToolCall

__all__ = ["DESCRIPTION", "PARAMETERS", "TOOL_NAME", "Options", "apply", "inject", "name"]

name = "claude-permission-prompt"
inject = ["tools", "user_questions"]

TOOL_NAME = "approve"
DESCRIPTION = (
    "Claude Code's permission prompt: asks a person whether a tool call may run. For "
    "`claude --permission-prompt-tool`; not a tool for the model to call."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_name": {"type": "string", "description": "The tool Claude wants to call."},
        "input": {
            "type": "object",
            "description": "The arguments of the call.",
            "additionalProperties": True,
        },
        "tool_use_id": {"type": "string", "description": "The id of the tool call."},
    },
    "required": ["tool_name", "input"],
    "additionalProperties": True,
}


@dataclass(frozen=True, slots=True)
class Options:
    """The plugin's configuration (`ctx.plugin(claude_permission, Options(...))`)."""

    decision_timeout: float | None = DECISION_TIMEOUT
    """Seconds each call may wait for a person; then it is denied, saying so. `None`: no bound."""


def apply(ctx: Context, config: Options | None = None) -> None:
    """Register `approve` on `ctx.tools` for as long as this plugin is loaded."""
    timeout = (config or Options()).decision_timeout

    async def run(args: dict[str, Any], call: ToolCall) -> Permission:
        tool, input = args["tool_name"], args["input"]
        return await decide(ctx.user_questions, tool, input, decision_timeout=timeout)

    ctx.tools.register(
        Tool(
            name=TOOL_NAME,
            description=DESCRIPTION,
            parameters=PARAMETERS,
            run=run,
            render=lambda permission: json.dumps(permission.to_dict(), ensure_ascii=False),
        )
    )
