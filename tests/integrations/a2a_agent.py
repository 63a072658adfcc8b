"""An A2A agent built on the official SDK's server, for the tests of `uq a2a watch`.

`ScriptedAgent` is an `AgentExecutor` that plays a list of steps, one per `execute` (the first
message, then each reply on the same task): pause in `input-required` or `auth-required` with a
status message of given parts, or complete with an artifact saying what it heard. It is served by
the SDK's own pieces, as an agent author would serve it (`DefaultRequestHandler`, an in-memory
task store, `create_agent_card_routes`, `create_jsonrpc_routes`), on loopback by uvicorn.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import anyio
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette

from tests.host.a2a.conftest import serving

__all__ = ["Pause", "RunningAgent", "ScriptedAgent", "serving_agent"]

AGENT_NAME = "Repo bootstrapper"


@dataclass(frozen=True)
class Pause:
    """One step: wait for the client in `state`, saying `parts`."""

    parts: Sequence[Part]
    state: TaskState = TaskState.TASK_STATE_INPUT_REQUIRED


@dataclass
class ScriptedAgent(AgentExecutor):
    """Pauses at each of `pauses` in turn, then completes with what it heard."""

    pauses: Sequence[Pause]
    heard: list[Message] = field(default_factory=list)
    """Every message the client sent, in order."""
    heard_one: anyio.Event = field(default_factory=anyio.Event)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        assert context.task_id is not None
        assert context.context_id is not None
        self.heard.append(context.message)
        self.heard_one.set()
        self.heard_one = anyio.Event()
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context.context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message],
                )
            )
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        turn = len(self.heard) - 1
        if turn < len(self.pauses):
            pause = self.pauses[turn]
            await updater.update_status(
                pause.state, message=updater.new_agent_message(parts=list(pause.parts))
            )
            return
        said = [context_text(message) for message in self.heard[1:]]
        await updater.add_artifact([Part(text=" | ".join(said))], name="result")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None
        assert context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def context_text(message: Message) -> str:
    """The text parts of `message`, joined."""
    return " ".join(part.text for part in message.parts if part.WhichOneof("content") == "text")


@dataclass
class RunningAgent:
    base: str
    agent: ScriptedAgent
    handler: DefaultRequestHandler

    def first_message(self, text: str = "Set up a repository.") -> Message:
        return Message(role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)])


@contextlib.asynccontextmanager
async def serving_agent(
    agent: ScriptedAgent, *, streaming: bool = True
) -> AsyncIterator[RunningAgent]:
    """`agent` served on a free loopback port, its card at `/.well-known/agent-card.json`."""
    handlers: list[DefaultRequestHandler] = []

    def app_at(base: str) -> Starlette:
        card = AgentCard(
            name=AGENT_NAME,
            description="Sets up repositories, asking what it needs.",
            version="1.0.0",
            supported_interfaces=[
                AgentInterface(
                    url=f"{base}/a2a", protocol_binding="JSONRPC", protocol_version="1.0"
                )
            ],
            capabilities=AgentCapabilities(streaming=streaming),
            default_input_modes=["text/plain", "application/json"],
            default_output_modes=["text/plain"],
            skills=[
                AgentSkill(id="repo", name="Set up a repository", description="...", tags=["git"])
            ],
        )
        handler = DefaultRequestHandler(
            agent_executor=agent, task_store=InMemoryTaskStore(), agent_card=card
        )
        handlers.append(handler)
        return Starlette(
            routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/a2a")]
        )

    async with serving(app_at) as base:
        yield RunningAgent(base, agent, handlers[0])
