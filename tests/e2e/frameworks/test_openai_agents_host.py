"""OpenAI Agents SDK through a real host: the function tool's question and a tool-approval
interruption reach `uq serve`, and the run goes on with what the person decided."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agents import Agent, Runner, function_tool
from agents.testing import ModelStep, ScriptedModel, function_call

from tests.e2e.frameworks.conftest import Person
from tests.e2e.host_process import HostProcess
from tests.integrations.frameworks import no_tracing, reports  # noqa: F401
from user_questions import connect
from user_questions.integrations.openai_agents import ask_user_tool, resolve_interruptions

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_tracing")]


async def test_the_agents_question_is_answered_on_the_host(
    host: HostProcess, person: Person
) -> None:
    arguments = {
        "questions": [
            {
                "id": "name",
                "question": "Project name?",
                "header": None,
                "options": None,
                "multi_select": None,
            }
        ]
    }
    model = ScriptedModel(
        [[function_call("ask_user_question", arguments, call_id="c1")], ModelStep.respond(reports)]
    )
    outputs: list[Any] = []

    async def agent() -> None:
        async with connect(host.url, session=person.session) as asker:
            run = await Runner.run(Agent(name="A", model=model, tools=[ask_user_tool(asker)]), "go")
        outputs.append(run.final_output)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(agent)
            (frame,) = await person.pending()
            assert frame["payload"]["questions"] == [{"id": "name", "question": "Project name?"}]
            await person.answer(frame, {"id": "name", "selected": [], "custom": "shop"})
    assert outputs == ['tool said: {"answers":[{"id":"name","selected":[],"custom":"shop"}]}']


async def test_an_approval_denied_on_the_host_is_rejected_with_the_reason(
    host: HostProcess, person: Person
) -> None:
    ran: list[str] = []

    @function_tool(needs_approval=True)
    def drop_table(name: str) -> str:
        """Drop a table."""
        ran.append(name)
        return f"dropped {name}"

    model = ScriptedModel(
        [[function_call("drop_table", {"name": "users"}, call_id="d1")], ModelStep.respond(reports)]
    )
    agent = Agent(name="DBA", model=model, tools=[drop_table])
    paused = await Runner.run(agent, "tidy the database")
    states: list[Any] = []

    async def resolve() -> None:
        async with connect(host.url, session=person.session) as asker:
            states.append(await resolve_interruptions(paused, asker))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(resolve)
            (frame,) = await person.pending()
            (card,) = frame["payload"]["questions"]
            assert card["question"] == "Allow DBA to run drop_table?"
            await person.answer(frame, {"id": "approval", "selected": [], "custom": "we need it"})
    resumed = await Runner.run(agent, states[0])
    assert (
        resumed.final_output
        == "tool said: The user denied this drop_table call and said: we need it"
    )
    assert ran == []
