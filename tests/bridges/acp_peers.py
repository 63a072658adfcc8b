"""A test agent and a test editor on the official ACP SDK, and the ways to connect them.

`QuestionAgent` is an ACP agent (the SDK's `Agent` methods) whose prompt is a JSON scenario
`{"questions": [...], "toolCallId"?: str}`: it asks those questions through `AcpProvider` and
replies with one agent message, the answer's JSON or `{"error": CODE}`. `session/cancel` cancels
the ask (the prompt then ends with stop reason `cancelled`). Run as a module
(`python -m tests.bridges.acp_peers`) it serves one client over stdio, as an editor starts an
agent; with `ACP_AGENT_LOG=FILE` it appends every message it receives to FILE, one JSON a line.

`Editor` is an ACP client (the SDK's `Client` methods) that records what the agent asks and
answers through `respond`, a coroutine the test supplies (or `AcpClientHandlers`).

Field names follow the SDK's models (acp/schema.py, generated from the ACP schema v1.19.0):
`InitializeRequest.clientCapabilities.elicitation.form`, `session/prompt`'s text blocks,
`session/update`'s `agent_message_chunk`.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
from acp import PROTOCOL_VERSION, Agent, Client, run_agent, spawn_agent_process
from acp._transport import memory_transport_pair  # the SDK's own in-memory pair
from acp.agent.connection import AgentSideConnection
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.helpers import text_block, update_agent_message_text
from acp.schema import (
    AgentMessageChunk,
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationMode,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    TextContentBlock,
    ToolCallUpdate,
)
from pydantic import BaseModel

from user_questions import AskUserQuestionRequest, UserQuestionError
from user_questions.bridges.acp import AcpClientHandlers, AcpProvider
from user_questions.types import AskUserQuestionItem

ROOT = Path(__file__).resolve().parents[2]
FORM_CAPABLE = ClientCapabilities(
    elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
)
"""What an editor that shows forms advertises."""

Respond = Callable[[str, dict[str, Any]], Awaitable[BaseModel | dict[str, Any]]]
"""An editor's answer: given the method (`session/request_permission`, `elicitation/create`)
and its arguments, the response model (or raw JSON, to send something malformed)."""


class QuestionAgent:
    """An ACP agent asking the questions its prompt names (see the module docstring)."""

    def __init__(self) -> None:
        self._conn: Client | None = None
        self._capabilities: ClientCapabilities | None = None
        self._asking: dict[str, anyio.CancelScope] = {}
        self.sessions = 0

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self._capabilities = client_capabilities
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.sessions += 1
        return NewSessionResponse(session_id=f"session-{self.sessions}")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        assert self._conn is not None
        scenario = json.loads("".join(b.text for b in prompt if isinstance(b, TextContentBlock)))
        questions = [AskUserQuestionItem.model_validate(q) for q in scenario["questions"]]
        provider = AcpProvider(
            self._conn,
            session_id,
            capabilities=self._capabilities,
            tool_call_id=scenario.get("toolCallId"),
        )
        reply = None
        with anyio.CancelScope() as scope:
            self._asking[session_id] = scope
            try:
                answer = await provider.ask(AskUserQuestionRequest(questions))
                reply = answer.model_dump_json()
            except UserQuestionError as error:
                reply = json.dumps({"error": error.code})
            finally:
                del self._asking[session_id]
        if reply is None:
            return PromptResponse(stop_reason="cancelled")
        await self._conn.session_update(session_id, update_agent_message_text(reply))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        scope = self._asking.get(session_id)
        if scope is not None:
            scope.cancel()


@dataclass
class Editor:
    """An ACP client that records the agent's questions and answers them with `respond`."""

    respond: Respond | None = None
    handlers: AcpClientHandlers | None = None
    asked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    updates: list[BaseModel] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    """Every message written to the agent (recorded when `observe` is the connection's
    observer)."""
    arrived: anyio.Event = field(default_factory=anyio.Event)
    _wrote: anyio.Event = field(default_factory=anyio.Event)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> BaseModel | dict[str, Any]:
        arguments = {"session_id": session_id, "tool_call": tool_call, "options": options}
        self._note("session/request_permission", arguments)
        if self.handlers is not None:
            return await self.handlers.request_permission(session_id, tool_call, options)
        assert self.respond is not None
        return await self.respond("session/request_permission", arguments)

    async def create_elicitation(self, message: str, mode: ElicitationMode, **kwargs: Any) -> Any:
        arguments = {"message": message, "mode": mode}
        self._note("elicitation/create", arguments)
        if self.handlers is not None:
            return await self.handlers.create_elicitation(message, mode)
        assert self.respond is not None
        return await self.respond("elicitation/create", arguments)

    async def session_update(self, session_id: str, update: BaseModel, **kwargs: Any) -> None:
        self.updates.append(update)
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            self.messages.append(update.content.text)

    def _note(self, method: str, arguments: dict[str, Any]) -> None:
        self.asked.append((method, arguments))
        self.arrived.set()
        self.arrived = anyio.Event()

    async def wait_asked(self, count: int) -> None:
        """Wait until the agent has asked `count` questions."""
        while len(self.asked) < count:
            await self.arrived.wait()

    def observe(self, event: StreamEvent) -> None:
        """A connection observer: note what was written to the agent."""
        if event.direction is StreamDirection.OUTGOING:
            self.sent.append(event.message)
            self._wrote.set()
            self._wrote = anyio.Event()

    async def wait_sent(self, request_id: object) -> None:
        """Wait until the response to the agent's request `request_id` is written."""
        while not any(m.get("id") == request_id and "method" not in m for m in self.sent):
            await self._wrote.wait()


async def start_session(
    conn: ClientSideConnection, capabilities: ClientCapabilities | None = None
) -> str:
    """`initialize` (advertising `capabilities`) and `session/new`; the session's id."""
    await conn.initialize(
        protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities or ClientCapabilities()
    )
    session = await conn.new_session(cwd=str(ROOT))
    return session.session_id


async def ask(
    conn: ClientSideConnection, session_id: str, questions: list[dict[str, Any]], **extra: Any
) -> PromptResponse:
    """Prompt the agent to ask `questions`."""
    scenario = json.dumps({"questions": questions, **extra})
    return await conn.prompt(session_id=session_id, prompt=[text_block(scenario)])


@asynccontextmanager
async def in_memory(
    agent: QuestionAgent, editor: Editor
) -> AsyncIterator[tuple[ClientSideConnection, AgentSideConnection]]:
    """The editor's connection to the agent and the agent's to the editor, in this process."""
    agent_end, editor_end = memory_transport_pair()
    agent_conn = AgentSideConnection(cast(Agent, agent), agent_end)
    editor_conn = ClientSideConnection(cast(Client, editor), editor_end, use_unstable_protocol=True)
    try:
        yield editor_conn, agent_conn
    finally:
        await editor_conn.close()
        await agent_conn.close()


def python_path() -> str:
    """The repository (for `tests`), then the `PYTHONPATH` the tests run with (a checkout's `src`
    when the package is installed from elsewhere): the agent process imports what they do."""
    return os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


@asynccontextmanager
async def over_stdio(
    editor: Editor, *command: str, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSideConnection]:
    """The editor's connection to an agent process (default: `QuestionAgent`) on its stdio."""
    argv = command or (sys.executable, "-m", "tests.bridges.acp_peers")
    async with spawn_agent_process(
        cast(Client, editor),
        *argv,
        cwd=ROOT,
        env={"PYTHONPATH": python_path(), **(env or {})},
        transport_kwargs={"stderr": None},
        use_unstable_protocol=True,
        observers=[editor.observe],
    ) as (conn, _process):
        yield conn


def _log_to(path: str) -> Callable[[StreamEvent], None]:
    def log(event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            with open(path, "a", encoding="utf-8") as file:
                file.write(json.dumps(event.message) + "\n")

    return log


if __name__ == "__main__":
    log = os.environ.get("ACP_AGENT_LOG")
    observers = [_log_to(log)] if log else []
    asyncio.run(run_agent(cast(Agent, QuestionAgent()), observers=observers))
