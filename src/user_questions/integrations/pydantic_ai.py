"""Pydantic AI: the `ask_user_question` tool as a toolset, and approvals of deferred tool calls.

Needs the `pydantic-ai` extra (the slim package).

- `ask_user_toolset(asker)` is a `FunctionToolset` holding `ask_user_question` with our schema and
  description; a call runs our tool through the asker, so the model reads our result text: the
  compact JSON answer, or `Error: <message>` for a dismissal, a timeout or bad arguments.
- `approve_deferred(requests, asker)` answers Pydantic AI's human-in-the-loop approvals: each call
  in `DeferredToolRequests.approvals` (tools declared with `requires_approval=True`, or raising
  `ApprovalRequired`) becomes an approval card, and the person's decisions come back as the
  `DeferredToolResults` to run the agent again with (`ToolApproved`, or `ToolDenied` with the
  message the model reads). A note beside an allowed call goes in the results' `metadata` for
  that call (`{"user-questions": {"note": ...}}`), which the tool reads as
  `ctx.tool_call_metadata` (Pydantic AI has no field the model reads beside an approval); beside
  a denial it is in the message. It also fits `HandleDeferredToolCalls` to decide within one run.
"""

from __future__ import annotations

import functools
from typing import Any

try:
    from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
    from pydantic_ai.tools import Tool
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as error:  # pragma: no cover - exercised by hand without the extra
    raise ImportError(
        "user_questions.integrations.pydantic_ai needs Pydantic AI: "
        "pip install 'user-questions[pydantic-ai]'"
    ) from error

from user_questions.approvals import denial_message
from user_questions.asker import Asker
from user_questions.integrations._asking import all_or_none, decide, timeout_signal
from user_questions.tool_ask_user import DESCRIPTION, PARAMETERS, TOOL_NAME

__all__ = ["METADATA_KEY", "approve_deferred", "ask_user_toolset"]

METADATA_KEY = "user-questions"
"""Our key in a call's `DeferredToolResults.metadata`: `{"note": ...}` beside an allowed call."""


def ask_user_toolset(
    asker: Asker, *, question_timeout: float | None = None
) -> FunctionToolset[Any]:
    """A toolset giving an agent `ask_user_question`, asking through `asker`.

    Args:
        question_timeout: Seconds each call may wait for the person; then the model reads
            `Error: ask_user_question timed out before the user answered`. Default no limit.
    """

    async def ask_user_question(**arguments: Any) -> str:
        result = await asker.execute(arguments, signal=timeout_signal(question_timeout))
        return result.text

    tool: Tool[Any] = Tool.from_schema(
        ask_user_question, name=TOOL_NAME, description=DESCRIPTION, json_schema=PARAMETERS
    )
    return FunctionToolset([tool])


async def approve_deferred(
    requests: DeferredToolRequests, asker: Asker, *, question_timeout: float | None = None
) -> DeferredToolResults:
    """Ask a person to approve each call in `requests.approvals`, all at once, one card each.

    Only an explicit `Allow` approves, with the call's new arguments (`override_args`) when the
    person changed it ("Edit and allow"); a skip or a typed reason denies, and the model reads
    `denial_message` (with the reason and any note). Calls waiting for external results
    (`requests.calls`) are left out of the results.

    Args:
        question_timeout: Seconds each card may wait for the person; default
            `approvals.DECISION_TIMEOUT` (half an hour), the bound of every approval card.

    Raises:
        UserQuestionError: `ASK_CANCELLED` when a card is dismissed, `ASK_TIMED_OUT`, or another
            failure of the asker. The other cards are withdrawn and nothing is approved.
    """
    calls = requests.approvals
    decisions = await all_or_none(
        [
            functools.partial(
                decide,
                asker,
                call.tool_name,
                call.args_as_dict(),
                question_timeout=question_timeout,
                editable=True,
            )
            for call in calls
        ]
    )
    approvals: dict[str, bool | ToolApproved | ToolDenied] = {
        call.tool_call_id: ToolApproved(override_args=decision.edited)
        if decision.allowed
        else ToolDenied(denial_message(decision, call.tool_name))
        for call, decision in zip(calls, decisions, strict=True)
    }
    metadata = {
        call.tool_call_id: {METADATA_KEY: {"note": decision.note}}
        for call, decision in zip(calls, decisions, strict=True)
        if decision.allowed and decision.note is not None
    }
    return DeferredToolResults(approvals=approvals, metadata=metadata)
