"""Plugin registering the model-facing `ask_user_question` tool.

Applied while `ctx.tools` and `ctx.user_questions` exist. The tool copies only the fields it
documents from the model's arguments (`id`, `question`, `header`, `options`, `multi_select`);
`detail`, `intent` and unknown keys are dropped, so a model cannot declare a plan review of its own.
`multiSelect`, the spelling models trained on other harnesses send, is read as `multi_select` (the
published schema names only `multi_select`); both given with different values is an `INVALID_ARGS`
error rather than a silent pick. The answer reaches the model as compact JSON:
`{"answers":[{"id":"pkg","selected":["pnpm"]}]}`.
"""

from __future__ import annotations

from typing import Any

from user_questions._reading.json_schema import SchemaViolation, compile_schema
from user_questions.context import Context
from user_questions.errors import ToolArgsError
from user_questions.service import AskUserQuestionRequest
from user_questions.tools import Tool, ToolCall
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

__all__ = ["DESCRIPTION", "PARAMETERS", "TOOL_NAME", "apply", "inject", "name"]

name = "tool-ask-user"
inject = ["tools", "user_questions"]

TOOL_NAME = "ask_user_question"
DESCRIPTION = (
    "Ask the user a concise question when you need confirmation, a choice, or missing "
    "information before proceeding. Send one or more questions, each with a stable id that will "
    "be echoed in the answer."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "description": "Questions to ask the user before continuing.",
            "items": {
                "type": "object",
                "additionalProperties": True,
                "properties": {
                    "id": {
                        "type": "string",
                        "description": "Stable id for this question; echoed in the answer.",
                    },
                    "question": {
                        "type": "string",
                        "description": "The specific question to ask the user.",
                    },
                    "header": {
                        "type": "string",
                        "description": 'Optional short heading for the question, such as "Confirm" '
                        'or "Choose Mode".',
                    },
                    "options": {
                        "type": "array",
                        "description": "Optional choices to show the user. If you recommend one, "
                        'put it first and append "(Recommended)" to that label.',
                        "items": {
                            "type": "object",
                            "additionalProperties": True,
                            "properties": {
                                "label": {
                                    "type": "string",
                                    "description": "Short user-facing option label.",
                                },
                                "description": {
                                    "type": "string",
                                    "description": (
                                        "One sentence explaining the tradeoff or impact."
                                    ),
                                },
                            },
                            "required": ["label"],
                        },
                    },
                    "multi_select": {
                        "type": "boolean",
                        "description": "Whether the user may select more than one option. "
                        "Defaults to false.",
                    },
                },
                "required": ["id", "question"],
            },
        }
    },
    "required": ["questions"],
}


_BOOLEAN = compile_schema({"type": "boolean"})


def _multi_select(args: dict[str, Any], index: int) -> bool | None:
    """`multi_select`, or `multiSelect` when only that is given; a `null` counts as absent.

    Raises:
        ToolArgsError: `multiSelect` is not a boolean, or the two spellings disagree.
    """
    snake, camel = args.get("multi_select"), args.get("multiSelect")
    if camel is None:
        return snake
    try:
        _BOOLEAN(camel, ("questions", index, "multiSelect"))
    except SchemaViolation as violation:
        raise ToolArgsError(str(violation)) from None
    if snake is not None and snake != camel:
        raise ToolArgsError(
            f'"questions[{index}].multi_select" is {str(snake).lower()} but '
            f'"questions[{index}].multiSelect" is {str(camel).lower()}; send multi_select only'
        )
    return bool(camel)


def _question(args: dict[str, Any], index: int) -> AskUserQuestionItem:
    options = args.get("options")
    return AskUserQuestionItem(
        id=args["id"],
        question=args["question"],
        header=args.get("header"),
        options=None
        if options is None
        else [
            AskUserQuestionOption(label=o["label"], description=o.get("description"))
            for o in options
        ],
        multi_select=_multi_select(args, index),
    )


def apply(ctx: Context) -> None:
    """Register `ask_user_question` on `ctx.tools` for as long as this plugin is loaded."""

    async def run(args: dict[str, Any], call: ToolCall) -> dict[str, Any]:
        request = AskUserQuestionRequest(
            questions=[_question(q, i) for i, q in enumerate(args["questions"])],
            agent=call.agent,
            signal=call.signal,
        )
        answer = await ctx.user_questions.ask(request)
        return answer.model_dump(mode="json")

    ctx.tools.register(
        Tool(name=TOOL_NAME, description=DESCRIPTION, parameters=PARAMETERS, run=run)
    )
