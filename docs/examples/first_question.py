"""Ask your first question: a harness, its tool, and a scripted human (swap in a real surface)."""

import anyio

from user_questions import (
    AgentRegistry,
    Context,
    ScriptedProvider,
    ToolRegistry,
    UserQuestionService,
    tool_ask_user,
)


async def main() -> None:
    ctx = Context()
    for plugin in (AgentRegistry, UserQuestionService, ToolRegistry, tool_ask_user):
        ctx.plugin(plugin)
    # The surface: TerminalProvider(), the host's web page, RemoteProvider(url, token=...), ...
    ctx.user_questions.register_provider(ScriptedProvider({"pkg": "pnpm (Recommended)"}))

    # What the model's tool call turns into:
    result = await ctx.tools.execute(
        "ask_user_question",
        {
            "questions": [
                {
                    "id": "pkg",
                    "question": "Which package manager?",
                    "options": [{"label": "pnpm (Recommended)"}, {"label": "npm"}],
                }
            ]
        },
    )
    print(result.text)  # {"answers":[{"id":"pkg","selected":["pnpm (Recommended)"]}]}


anyio.run(main)
