"""Plugin registering `exit_plan_mode(plan)`: the plan reviewed by a human as one question.

Applied while `ctx.tools` and `ctx.user_questions` exist. The plan is asked as a plan-review
question (approve label `Approve`, decline `Keep planning`); it is approved only when the one answer
item selects exactly `["Approve"]` with no custom text. Custom text is the user's feedback on the
plan. A dismissal (`ASK_CANCELLED`) reaches the model as an error: the user wants to talk rather
than decide.
"""

from __future__ import annotations

from typing import Any

from user_questions.context import Context
from user_questions.errors import ToolArgsError
from user_questions.service import AskUserQuestionRequest
from user_questions.tools import Tool, ToolCall
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    PlanReviewIntent,
)

__all__ = [
    "APPROVE",
    "DECLINE",
    "PLAN_QUESTION_ID",
    "TOOL_NAME",
    "apply",
    "inject",
    "name",
    "plan_question",
    "verdict",
    "verdict_text",
]

name = "tool-exit-plan-mode"
inject = ["tools", "user_questions"]

TOOL_NAME = "exit_plan_mode"
PLAN_QUESTION_ID = "plan-review"
APPROVE = "Approve"
DECLINE = "Keep planning"
DESCRIPTION = (
    "Present your plan to the user for approval before leaving plan mode and making changes. "
    "The user approves it, asks you to keep planning (often with feedback), or dismisses it to "
    "talk it over."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "plan": {
            "type": "string",
            "description": "The plan to review, in markdown: what you will change and how you "
            "will check it.",
        }
    },
    "required": ["plan"],
}


def plan_question(plan: str) -> AskUserQuestionItem:
    """The plan-review question `exit_plan_mode` asks."""
    return AskUserQuestionItem(
        id=PLAN_QUESTION_ID,
        header="Plan review",
        question="Approve this plan and leave plan mode?",
        detail=plan,
        options=[AskUserQuestionOption(label=APPROVE), AskUserQuestionOption(label=DECLINE)],
        intent=PlanReviewIntent(approve=APPROVE),
    )


def verdict(answer: AskUserQuestionAnswer) -> dict[str, Any]:
    """`{"approved": bool}` plus `"feedback"` when the user typed some, and `"note"` when they
    added one beside their choice."""
    items = [item for item in answer.answers if item.id == PLAN_QUESTION_ID]
    approved = len(items) == 1 and items[0].selected == [APPROVE] and items[0].custom is None
    result: dict[str, Any] = {"approved": approved}
    if len(items) == 1 and items[0].custom is not None:
        result["feedback"] = items[0].custom
    if len(items) == 1 and items[0].note is not None:
        result["note"] = items[0].note
    return result


def verdict_text(value: dict[str, Any]) -> str:
    """What the model reads for a `verdict`: approved, or declined with the user's feedback;
    and the user's note, when they added one."""
    noted = f"\nThe user noted: {value['note']}" if "note" in value else ""
    if value["approved"]:
        return f"The user approved the plan. Leave plan mode and carry it out.{noted}"
    if "feedback" in value:
        return (
            "The user did not approve the plan and said: "
            f"{value['feedback']}{noted}\nKeep planning, then present a revised plan."
        )
    return (
        f"The user did not approve the plan.{noted}\nKeep planning, then present a revised plan."
        if noted
        else "The user did not approve the plan. Keep planning, then present a revised plan."
    )


def apply(ctx: Context) -> None:
    """Register `exit_plan_mode` on `ctx.tools` for as long as this plugin is loaded."""

    async def run(args: dict[str, Any], call: ToolCall) -> dict[str, Any]:
        plan: str = args["plan"]
        if not plan.strip():
            raise ToolArgsError('property "plan" must not be blank')
        request = AskUserQuestionRequest(
            questions=[plan_question(plan)], agent=call.agent, signal=call.signal
        )
        return verdict(await ctx.user_questions.ask(request))

    ctx.tools.register(
        Tool(
            name=TOOL_NAME,
            description=DESCRIPTION,
            parameters=PARAMETERS,
            run=run,
            render=verdict_text,
        )
    )
