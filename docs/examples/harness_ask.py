"""A harness asks through `ctx.user_questions` for its live agent, with a deliberate timeout."""

import anyio

from user_questions import (
    AbortSignal,
    Agent,
    AgentRegistry,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    ScriptedProvider,
    UserQuestionError,
    UserQuestionService,
)


async def main() -> None:
    ctx = Context()
    ctx.plugin(AgentRegistry)
    ctx.plugin(UserQuestionService)
    ctx.user_questions.register_provider(ScriptedProvider({"deploy": "Deploy"}))
    agent = Agent(id="session-1")
    ctx.agents.enter(agent)  # a runtime root: it may ask a human

    question = AskUserQuestionItem(
        id="deploy",
        header="Confirm",
        question="Deploy to production?",
        options=[AskUserQuestionOption(label="Deploy"), AskUserQuestionOption(label="Not now")],
    )
    request = AskUserQuestionRequest([question], agent=agent, signal=AbortSignal.timeout(600))
    try:
        answer = await ctx.user_questions.ask(request)
    except UserQuestionError as error:  # ASK_CANCELLED, ASK_TIMED_OUT, NO_PROVIDER, ...
        print("not deploying:", error.code)
    else:
        print(answer.model_dump_json())  # {"answers":[{"id":"deploy","selected":["Deploy"]}]}


anyio.run(main)
