"""ScriptedProvider answers from a script and fails closed."""

from __future__ import annotations

import anyio
import pytest

from user_questions import (
    AbortSignal,
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    ScriptedProvider,
    UserQuestionError,
)

pytestmark = pytest.mark.anyio

QUESTIONS = [
    AskUserQuestionItem(
        id="pkg",
        question="?",
        options=[AskUserQuestionOption(label="pnpm"), AskUserQuestionOption(label="npm")],
    ),
    AskUserQuestionItem(
        id="extras",
        question="?",
        multi_select=True,
        options=[AskUserQuestionOption(label="a"), AskUserQuestionOption(label="b")],
    ),
    AskUserQuestionItem(id="notes", question="?"),
]


async def test_scripted_values_of_every_shape(ctx: Context) -> None:
    provider = ScriptedProvider(
        {
            "pkg": "pnpm",
            "extras": ["b", "a"],
            "notes": {"custom": "hello"},
            "unused": "ignored",
        }
    )
    ctx.user_questions.register_provider(provider)
    answer = await ctx.user_questions.ask(AskUserQuestionRequest(QUESTIONS))
    assert answer.model_dump(mode="json") == {
        "answers": [
            {"id": "pkg", "selected": ["pnpm"]},
            {"id": "extras", "selected": ["a", "b"]},
            {"id": "notes", "selected": [], "custom": "hello"},
        ]
    }


async def test_a_string_that_is_no_label_is_custom_text_and_none_skips(ctx: Context) -> None:
    ctx.user_questions.register_provider(
        ScriptedProvider({"pkg": "yarn please", "extras": None, "notes": None})
    )
    answer = await ctx.user_questions.ask(AskUserQuestionRequest(QUESTIONS))
    assert answer.model_dump(mode="json")["answers"][0] == {
        "id": "pkg",
        "selected": [],
        "custom": "yarn please",
    }
    assert answer.answers[1].selected == []


async def test_a_question_without_a_scripted_answer_fails_closed(ctx: Context) -> None:
    ctx.user_questions.register_provider(ScriptedProvider({"pkg": "pnpm"}))
    with pytest.raises(UserQuestionError) as caught:
        await ctx.user_questions.ask(AskUserQuestionRequest(QUESTIONS))
    assert caught.value.code == "ASK_CANCELLED"
    assert str(caught.value) == "the user cancelled ask_user_question"


async def test_a_function_script_may_be_async_and_return_a_whole_answer(ctx: Context) -> None:
    async def script(request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        return AskUserQuestionAnswer(
            answers=[AskUserQuestionAnswerItem(id=q.id, selected=[]) for q in request.questions]
        )

    ctx.user_questions.register_provider(ScriptedProvider(script))
    answer = await ctx.user_questions.ask(AskUserQuestionRequest(QUESTIONS))
    assert [item.id for item in answer.answers] == ["pkg", "extras", "notes"]


async def test_a_delayed_answer_honours_a_timeout(ctx: Context) -> None:
    ctx.user_questions.register_provider(ScriptedProvider({"notes": "late"}, delay=30))
    request = AskUserQuestionRequest([QUESTIONS[2]], signal=AbortSignal.timeout(0.05))
    with anyio.fail_after(5), pytest.raises(UserQuestionError) as caught:
        await ctx.user_questions.ask(request)
    assert caught.value.code == "ASK_TIMED_OUT"


async def test_seen_keeps_every_request() -> None:
    provider = ScriptedProvider({"notes": "x"})
    request = AskUserQuestionRequest([QUESTIONS[2]])
    await provider.ask(request)
    assert provider.seen == [request]
