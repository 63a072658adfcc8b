"""A Pydantic AI agent that asks a person, and whose risky tool needs their approval.

    uq serve                                    # prints the page's URL, then the agents' line:
    export UQ_URL='http://127.0.0.1:8765/?token=…'     # run it: an asker's token, never answers
    python docs/examples/pydantic_ai_ask.py

The model here is Pydantic AI's `FunctionModel` playing a model's part (use your own model
instead). Choose "staging", then allow the deploy; it prints: deployed to staging
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import RunContext

from user_questions import connect
from user_questions.integrations.pydantic_ai import approve_deferred, ask_user_toolset

WHERE = {
    "id": "env",
    "question": "Where should I deploy?",
    "options": [{"label": "staging"}, {"label": "production"}],
}


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks where, deploys there, then reports what the deploy tool said."""
    last: Any = messages[-1].parts[-1]
    if last.part_kind == "user-prompt":
        return ModelResponse(parts=[ToolCallPart("ask_user_question", {"questions": [WHERE]})])
    if last.tool_name == "ask_user_question":
        env = json.loads(last.content)["answers"][0]["selected"][0]
        return ModelResponse(parts=[ToolCallPart("deploy", {"env": env})])
    return ModelResponse(parts=[TextPart(last.content)])


async def main() -> None:
    async with connect(client="pydantic-ai") as asker:  # the host at $UQ_URL

        async def approve(ctx: RunContext[None], requests: DeferredToolRequests) -> Any:
            return await approve_deferred(requests, asker)

        agent = Agent(
            FunctionModel(model),
            toolsets=[ask_user_toolset(asker)],
            capabilities=[HandleDeferredToolCalls(handler=approve)],
        )

        @agent.tool_plain(requires_approval=True)
        def deploy(env: str) -> str:
            return f"deployed to {env}"

        result = await agent.run("Ship the release.")
    print(result.output)


if __name__ == "__main__":
    anyio.run(main)
