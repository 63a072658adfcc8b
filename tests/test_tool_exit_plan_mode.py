"""`exit_plan_mode(plan)`: one plan-review question; approval only for exactly ["Approve"]."""

from __future__ import annotations

from typing import Any

import pytest

from user_questions import Context, ScriptedProvider, tool_exit_plan_mode
from user_questions.presentation import plan_review_of

pytestmark = pytest.mark.anyio

PLAN = "1. Add the migration\n2. Backfill\n3. Switch reads"


@pytest.fixture
def plan_ctx(ctx: Context) -> Context:
    ctx.plugin(tool_exit_plan_mode)
    return ctx


async def review(ctx: Context, scripted: Any) -> Any:
    provider = ScriptedProvider({"plan-review": scripted} if scripted is not ... else {})
    ctx.user_questions.register_provider(provider)
    result = await ctx.tools.execute("exit_plan_mode", {"plan": PLAN})
    return result, provider


async def test_it_asks_one_plan_review_question_about_the_plan(plan_ctx: Context) -> None:
    _, provider = await review(plan_ctx, "Approve")
    (question,) = provider.seen[0].questions
    assert question.model_dump(mode="json") == {
        "id": "plan-review",
        "question": "Approve this plan and leave plan mode?",
        "detail": PLAN,
        "header": "Plan review",
        "options": [{"label": "Approve"}, {"label": "Keep planning"}],
        "intent": {"kind": "plan-review", "approve": "Approve"},
    }
    assert plan_review_of(provider.seen[0].questions) == {
        "id": "plan-review",
        "question": "Approve this plan and leave plan mode?",
        "plan": PLAN,
        "approve": "Approve",
        "decline": "Keep planning",
    }


async def test_selecting_approve_approves(plan_ctx: Context) -> None:
    result, _ = await review(plan_ctx, "Approve")
    assert result.value == {"approved": True}
    assert result.text == "The user approved the plan. Leave plan mode and carry it out."


async def test_keep_planning_declines(plan_ctx: Context) -> None:
    result, _ = await review(plan_ctx, "Keep planning")
    assert result.value == {"approved": False}
    assert result.text == (
        "The user did not approve the plan. Keep planning, then present a revised plan."
    )


async def test_custom_text_is_feedback_and_never_approval(plan_ctx: Context) -> None:
    result, _ = await review(plan_ctx, "Approve, but skip step 2")
    assert result.value == {"approved": False, "feedback": "Approve, but skip step 2"}
    assert "said: Approve, but skip step 2" in result.text


async def test_skipping_does_not_approve(plan_ctx: Context) -> None:
    result, _ = await review(plan_ctx, None)
    assert result.value == {"approved": False}


async def test_dismissal_means_the_user_wants_to_talk(plan_ctx: Context) -> None:
    result, _ = await review(plan_ctx, ...)
    assert result.is_error
    assert result.text == "Error: the user cancelled ask_user_question"
    assert result.error is not None
    assert result.error["info"] == {"name": "UserQuestionError", "code": "ASK_CANCELLED"}


async def test_a_blank_plan_is_refused(plan_ctx: Context) -> None:
    plan_ctx.user_questions.register_provider(ScriptedProvider({"plan-review": "Approve"}))
    result = await plan_ctx.tools.execute("exit_plan_mode", {"plan": "  \n"})
    assert result.text == 'Error: invalid arguments: property "plan" must not be blank'
    assert result.error is not None
    assert result.error["info"]["code"] == "INVALID_ARGS"
