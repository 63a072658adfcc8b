"""A Python ACP client answers its agent's permission requests through one of our providers.

The editor delegates `request_permission` and `create_elicitation` to
`acp_client_handlers(provider)`: each request becomes a question for the provider (here a script;
`RemoteProvider` puts it in the inbox, `TerminalProvider` asks at the terminal), and the answer
goes back as the option's id. To run on its own, this file is both sides: it starts itself with
`--agent` as an agent that asks before editing a file. Prints:
{"optionId":"allow","outcome":"selected"}
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, cast

from acp import PROTOCOL_VERSION, Agent, Client, run_agent, spawn_agent_process, text_block
from acp.helpers import tool_diff_content, update_agent_message_text
from acp.schema import (
    AgentMessageChunk,
    ElicitationMode,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
)

from user_questions import ScriptedProvider
from user_questions.bridges.acp import acp_client_handlers

THIS_FILE = os.path.abspath(__file__)


class EditingAgent:
    """An agent that asks its client before it edits (the `acp.Agent` protocol)."""

    def __init__(self) -> None:
        self.editor: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self.editor = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="edit-1")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        assert self.editor is not None
        edit = ToolCallUpdate(
            tool_call_id="call-1",
            kind="edit",
            title="Rename main() to start()",
            content=[tool_diff_content("app.py", "def start():\n", "def main():\n")],
        )
        options = [
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ]
        response = await self.editor.request_permission(session_id, edit, options)
        said = response.outcome.model_dump_json(by_alias=True, exclude_none=True)
        await self.editor.session_update(session_id, update_agent_message_text(said))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        pass  # nothing runs between prompts here


class Editor:
    """An editor whose person is reached through a provider (the `acp.Client` protocol)."""

    def __init__(self) -> None:
        # The question's header is the tool kind ("Edit"), its detail the diff as markdown.
        self.questions = acp_client_handlers(ScriptedProvider({"permission": "Allow"}))

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        return await self.questions.request_permission(session_id, tool_call, options)

    async def create_elicitation(self, message: str, mode: ElicitationMode, **_: Any) -> Any:
        return await self.questions.create_elicitation(message, mode)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            print(update.content.text)


async def main() -> None:
    editor = Editor()
    agent = (sys.executable, THIS_FILE, "--agent")
    async with spawn_agent_process(cast(Client, editor), *agent, use_unstable_protocol=True) as (
        conn,
        _process,
    ):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=editor.questions.capabilities
        )
        session = await conn.new_session(cwd=os.getcwd())
        await conn.prompt(session_id=session.session_id, prompt=[text_block("Rename it.")])
        # On the editor's "stop": send session/cancel, and withdraw what waits for the person.
        await conn.cancel(session_id=session.session_id)
        editor.questions.cancel(session.session_id)


if __name__ == "__main__":
    if sys.argv[1:] == ["--agent"]:
        asyncio.run(run_agent(cast(Agent, EditingAgent())))
    else:
        asyncio.run(main())
