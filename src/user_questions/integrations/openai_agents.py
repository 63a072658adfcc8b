"""OpenAI Agents SDK: the `ask_user_question` function tool, and tool-approval interruptions.

Needs the `openai-agents` extra.

- `ask_user_tool(asker)` is a `FunctionTool` built from `Tool.to_responses()` (the strict schema
  and our description); a call runs our tool through the asker, so the model reads our result
  text: the compact JSON answer, or `Error: <message>`.
- `resolve_interruptions(result, asker)` answers the run's tool-approval interruptions (tools
  declared with `needs_approval`): each becomes an approval card, and the person's decisions are
  applied to the run's `RunState` (`approve`, or `reject` with the message the model reads),
  which is returned ready for `Runner.run(agent, state)`. A note beside a denial is in the
  rejection message; the SDK's `approve` takes no text, so a note beside an allowed call is
  logged (warning, `user_questions.integrations.openai_agents`) for the application to pass on.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

try:
    from agents import (
        FunctionTool,
        RunContextWrapper,
        RunResult,
        RunResultStreaming,
        RunState,
        ToolApprovalItem,
    )
except ImportError as error:  # pragma: no cover - exercised by hand without the extra
    raise ImportError(
        "user_questions.integrations.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'user-questions[openai-agents]'"
    ) from error

from user_questions._reading.json_reader import JSONRefused, load_json
from user_questions.approvals import allowed_note, denial_message
from user_questions.asker import Asker
from user_questions.integrations._asking import all_or_none, decide, timeout_signal

__all__ = ["ask_user_tool", "resolve_interruptions"]

logger = logging.getLogger("user_questions.integrations.openai_agents")


def ask_user_tool(asker: Asker, *, question_timeout: float | None = None) -> FunctionTool:
    """The `ask_user_question` function tool, asking through `asker`.

    Args:
        question_timeout: Seconds each call may wait for the person; then the model reads
            `Error: ask_user_question timed out before the user answered`. Default no limit.
    """
    definition = asker.tool.to_responses()

    async def invoke(context: RunContextWrapper[Any], arguments: str) -> str:
        result = await asker.execute(arguments, signal=timeout_signal(question_timeout))
        return result.text

    return FunctionTool(
        name=definition["name"],
        description=definition["description"],
        params_json_schema=definition["parameters"],
        on_invoke_tool=invoke,
        strict_json_schema=True,
    )


async def resolve_interruptions(
    result: RunResult | RunResultStreaming, asker: Asker, *, question_timeout: float | None = None
) -> RunState[Any]:
    """Ask a person about each tool-approval interruption of `result`, all at once, one card
    each, and return the run's state with every decision applied.

    `Allow` approves the call; `Allow and don't ask again` approves it and every later call of
    that tool by that agent in this run (`always_approve`); a skip or a typed reason rejects it,
    and the model reads `denial_message` (with the reason).

    Args:
        question_timeout: Seconds each card may wait for the person; default
            `approvals.DECISION_TIMEOUT` (half an hour), the bound of every approval card.

    Raises:
        UserQuestionError: `ASK_CANCELLED` when a card is dismissed, `ASK_TIMED_OUT`, or another
            failure of the asker. The other cards are withdrawn and no decision is applied.
    """
    items = list(result.interruptions)
    decisions = await all_or_none(
        [
            functools.partial(
                decide,
                asker,
                _tool_name(item),
                _arguments(item),
                agent=item.agent.name,
                always=f"Run every later {_tool_name(item)} call of {item.agent.name} in this "
                "run without asking.",
                question_timeout=question_timeout,
            )
            for item in items
        ]
    )
    state: RunState[Any] = result.to_state()
    for item, decision in zip(items, decisions, strict=True):
        if decision.allowed:
            state.approve(item, always_approve=decision.always)
            if decision.note is not None:  # approve() has no field for it: never dropped silently
                logger.warning("%s", allowed_note(decision, _tool_name(item)))
        else:
            state.reject(item, rejection_message=denial_message(decision, _tool_name(item)))
    return state


def _tool_name(item: ToolApprovalItem) -> str:
    return item.qualified_name or item.name or "a tool"


def _arguments(item: ToolApprovalItem) -> dict[str, Any]:
    """The call's arguments as an object; text that is not a JSON object is shown as it is."""
    raw = item.arguments
    if raw is None:
        return {}
    try:
        parsed = load_json(raw)
    except JSONRefused:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}
