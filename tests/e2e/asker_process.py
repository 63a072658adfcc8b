"""An agent in its own process asking through `RemoteProvider` and the real service.

    python -m tests.e2e.asker_process URL[,URL...] SESSION [--timeout SECONDS] NAME...

Asks one request per NAME, concurrently, each holding one question whose id is NAME, with
options `yes` and `no`. Prints one JSON line per request when it ends: `{"name", "answer"}` or
`{"name", "error"}` (the error code). `--timeout` gives each ask an `AbortSignal.timeout`.
Several comma-separated URLs are several nodes on one database, tried in turn.
"""

from __future__ import annotations

import json
import sys

import anyio

from user_questions import (
    AbortSignal,
    AgentRegistry,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    UserQuestionError,
    UserQuestionService,
)
from user_questions.providers.remote import RemoteProvider


async def main(url: str, session: str, seconds: float | None, names: list[str]) -> None:
    ctx = Context()
    ctx.plugin(AgentRegistry)
    ctx.plugin(UserQuestionService)
    async with RemoteProvider(url.split(","), session=session) as provider:
        ctx.user_questions.register_provider(provider)
        async with anyio.create_task_group() as task_group:
            for name in names:
                task_group.start_soon(ask, ctx, name, seconds)


async def ask(ctx: Context, name: str, seconds: float | None) -> None:
    question = AskUserQuestionItem(
        id=name,
        question=f"Go ahead with {name}?",
        options=[AskUserQuestionOption(label="yes"), AskUserQuestionOption(label="no")],
    )
    signal = None if seconds is None else AbortSignal.timeout(seconds)
    try:
        answer = await ctx.user_questions.ask(
            AskUserQuestionRequest(questions=[question], signal=signal)
        )
        line = {"name": name, "answer": answer.model_dump(mode="json")}
    except UserQuestionError as error:
        line = {"name": name, "error": str(error.code)}
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    url, session, timeout = arguments.pop(0), arguments.pop(0), None
    if arguments[0] == "--timeout":
        arguments.pop(0)
        timeout = float(arguments.pop(0))
    anyio.run(main, url, session, timeout, arguments)
