"""A Python ACP agent asks the person at its editor through `AcpProvider`.

The agent registers `AcpProvider(connection, session_id, capabilities=...)` as its service's
provider, so its `ask()` goes to the editor: one form when the editor advertises form
elicitation, as here, else one permission request per question. To run on its own, this file is
both sides: it starts itself with `--agent` as the agent process, and plays the editor, whose
person fills in the form. Prints: {"answers":[{"id":"env","selected":["staging"]}]}
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, cast

from acp import PROTOCOL_VERSION, Agent, Client, run_agent, spawn_agent_process, text_block
from acp.helpers import update_agent_message_text
from acp.schema import (
    AcceptElicitationResponse,
    AgentMessageChunk,
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationMode,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    TextContentBlock,
)

from user_questions import (
    AgentRegistry,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    UserQuestionService,
)
from user_questions.bridges.acp import AcpProvider

QUESTION = AskUserQuestionItem(
    id="env",
    question="Where should I deploy?",
    options=[
        AskUserQuestionOption(label="staging", description="Safe to break."),
        AskUserQuestionOption(label="production"),
    ],
)

THIS_FILE = os.path.abspath(__file__)


class DeployAgent:
    """The agent: the SDK calls these methods (the `acp.Agent` protocol)."""

    def __init__(self) -> None:
        self.editor: Client | None = None
        self.capabilities: ClientCapabilities | None = None

    def on_connect(self, conn: Client) -> None:
        self.editor = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        self.capabilities = client_capabilities  # whether the editor shows forms
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="deploy-1")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        assert self.editor is not None
        ctx = Context()
        ctx.plugin(AgentRegistry)
        ctx.plugin(UserQuestionService)
        provider = AcpProvider(self.editor, session_id, capabilities=self.capabilities)
        ctx.user_questions.register_provider(provider)
        answer = await ctx.user_questions.ask(AskUserQuestionRequest([QUESTION]))
        reply = update_agent_message_text(answer.model_dump_json())
        await self.editor.session_update(session_id, reply)
        return PromptResponse(stop_reason="end_turn")


class Editor:
    """The editor: it shows forms, and its person picks staging."""

    async def create_elicitation(
        self, message: str, mode: ElicitationMode, **kwargs: Any
    ) -> AcceptElicitationResponse:
        return AcceptElicitationResponse(action="accept", content={"env": "staging"})

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            print(update.content.text)


async def main() -> None:
    agent = (sys.executable, THIS_FILE, "--agent")
    async with spawn_agent_process(
        cast(Client, Editor()),
        *agent,
        use_unstable_protocol=True,  # elicitation is unstable
    ) as (conn, _process):
        forms = ElicitationCapabilities(form=ElicitationFormCapabilities())
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(elicitation=forms),
        )
        session = await conn.new_session(cwd=os.getcwd())
        await conn.prompt(session_id=session.session_id, prompt=[text_block("Deploy it.")])


if __name__ == "__main__":
    if sys.argv[1:] == ["--agent"]:
        asyncio.run(run_agent(cast(Agent, DeployAgent())))
    else:
        asyncio.run(main())
