"""An OpenAI Agents SDK agent that asks a person, and whose risky tool needs their approval.

    uq serve                                    # prints the page's URL, then the agents' line:
    export UQ_URL='http://127.0.0.1:8765/?token=…'     # run it: an asker's token, never answers
    python docs/examples/openai_agents_ask.py

The model here is the SDK's `ScriptedModel` playing a model's part (use your own model
instead). Type "shop" as the name, then allow the repository; it prints: created shop
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from user_questions import connect
from user_questions.integrations.openai_agents import ask_user_tool, resolve_interruptions

NAME = {"id": "name", "question": "What should the repository be called?"}


def create_named(call: ModelCall) -> Any:
    """Calls create_repository with the name the person gave."""
    answer = next(
        item for item in reversed(call.input) if item.get("type") == "function_call_output"
    )
    name = json.loads(answer["output"])["answers"][0]["custom"]
    return [function_call("create_repository", {"name": name}, call_id="call-2")]


def report(call: ModelCall) -> Any:
    return [assistant_message(call.input[-1]["output"])]


@function_tool(needs_approval=True)
def create_repository(name: str) -> str:
    """Create a repository."""
    return f"created {name}"


async def main() -> None:
    set_tracing_disabled(True)  # this example sends nothing to OpenAI
    model = ScriptedModel(
        [
            [function_call("ask_user_question", {"questions": [NAME]}, call_id="call-1")],
            ModelStep.respond(create_named),
            ModelStep.respond(report),
        ]
    )
    async with connect(client="openai-agents") as asker:  # the host at $UQ_URL
        agent = Agent(
            name="Bootstrapper", model=model, tools=[ask_user_tool(asker), create_repository]
        )
        result = await Runner.run(agent, "Set up a repository.")
        while result.interruptions:
            result = await Runner.run(agent, await resolve_interruptions(result, asker))
    print(result.final_output)


if __name__ == "__main__":
    anyio.run(main)
