"""An MCP tool asks its client's user; the client answers through one of our providers.

Both ends run in this process: `MCPServer` with a tool that asks through a `QuestionForm`
resolver (any protocol era), and the SDK's `Client` whose elicitation callback is
`elicitation_handler(provider)`. Prints: {"answers":[{"id":"env","selected":["staging"]}]}
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from mcp import Client
from mcp.server.mcpserver import ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel

from user_questions import AskUserQuestionItem, AskUserQuestionOption, ScriptedProvider
from user_questions.bridges.mcp import QuestionForm, elicitation_handler

DEPLOY = QuestionForm(
    [
        AskUserQuestionItem(
            id="env",
            question="Where should I deploy?",
            header="Deploy",
            options=[
                AskUserQuestionOption(label="staging", description="Safe to break."),
                AskUserQuestionOption(label="production"),
            ],
        )
    ]
)


def ask_where() -> Any:
    return DEPLOY.elicit()


async def deploy(where: Annotated[ElicitationResult[BaseModel], Resolve(ask_where)]) -> str:
    return DEPLOY.answer(where).model_dump_json()


async def main() -> None:
    server = MCPServer("deployer")
    server.add_tool(deploy)
    # The form's "Other" text field is a question of its own on this side: skipped here.
    human = ScriptedProvider({"env": "staging", "env.other": None})  # or a TerminalProvider, ...
    async with Client(server, elicitation_callback=elicitation_handler(human)) as client:
        result = await client.call_tool("deploy", {})
    print(result.content[0].text)  # type: ignore[union-attr]


if __name__ == "__main__":
    anyio.run(main)
