"""Approval cards: one tool call shown to a person, who allows it, denies it, or says why not.

Every surface that asks a person to approve an agent's tool call (the agent-CLI hooks, the Claude
bridge, the MCP permission tool, the framework adapters) builds the question with
`approval_question` and reads the answer with `decision_for`, so an approval looks and behaves
the same wherever it is asked and answered.

The card shows what will run as the person needs to judge it: a shell command in a code block
(saying so when it asks to run outside the sandbox), a file edit as a unified diff, a patch (Codex's
`apply_patch`) as the patch, a file write as its content, a URL as text (never a live link), an
MCP tool's arguments as JSON. Its options are `Allow`, `Deny` and, when the caller can remember the
choice, `Allow and don't ask again`; text typed as "Other" denies the call and is the reason the
agent reads. Anything but an explicit allow is a denial: a skipped card never runs the tool. The
text itself is built in plain data (`_hooks.approval_card`), which `uq hook` sends without this
module, and the answer is read in plain data too (`_hooks.settlement`), which `uq hook`'s quick path
shares: every gate allows exactly the same answers.

`DECISION_TIMEOUT` is how long a gate that asks on a card waits for the person when its caller
gives no deadline (`bridges.claude.decide`, `uq mcp --permission-tool`, `Asker.ask` of a card).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from user_questions._hooks.approval_card import (
    ALLOW,
    ALLOW_ALWAYS,
    APPROVAL_ID,
    DENY,
    MAX_SHOWN_CHARACTERS,
    ApprovalDecision,
    card_fields,
    decision_of,
    denial_message,
    fenced,
)
from user_questions._hooks.settlement import answer_decision
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
)

__all__ = [
    "ALLOW",
    "ALLOW_ALWAYS",
    "APPROVAL_ID",
    "DECISION_TIMEOUT",
    "DENY",
    "MAX_SHOWN_CHARACTERS",
    "ApprovalDecision",
    "approval_decision",
    "approval_of",
    "approval_question",
    "decision_for",
    "denial_message",
    "fenced",
]

DECISION_TIMEOUT = 1800.0
"""Seconds a gate waits for a person to decide a card when its caller set no deadline: half an
hour, as long as `uq hook install` lets the hooks wait. Past it the card is withdrawn and the
call denied, saying so."""


def approval_question(
    tool_name: str,
    arguments: Mapping[str, Any],
    *,
    id: str = APPROVAL_ID,
    agent: str | None = None,
    always: str | None = None,
    reason: str | None = None,
) -> AskUserQuestionItem:
    """The card asking a person to approve one call of `tool_name` with `arguments`.

    Args:
        id: The question's id.
        agent: Who asks, for the question's text (`"Claude"`, `"Codex"`); default "the agent".
        always: Offer `Allow and don't ask again`, with this text saying what will be remembered
            (a permission rule, say); `None` offers only `Allow` and `Deny`.
        reason: Why the agent wants to make the call, when it said so; shown above the call.
    """
    fields = card_fields(tool_name, arguments, id=id, agent=agent, always=always, reason=reason)
    return AskUserQuestionItem.model_validate(fields)


def approval_of(
    tool_name: str,
    arguments: Mapping[str, Any],
    *,
    agent: str | None = None,
    cwd: str | None = None,
) -> Approval:
    """What an approval card for this call approves, machine-readable: sent beside the card
    so that a host may decide it by a rule. `agent` names the agent program (`claude-code`),
    `cwd` the folder the call runs in."""
    return Approval(tool=tool_name, input=dict(arguments), agent=agent, cwd=cwd)


def decision_for(card: AskUserQuestionItem, answer: AskUserQuestionAnswer) -> ApprovalDecision:
    """The decision `answer` gives the approval card `card`, read as every gate reads it
    (`_hooks.settlement.answer_decision`, shared with `uq hook`'s quick path): only the card's own
    `Allow` (or `Allow and don't ask again`, where the card offers it) allows; typed text denies
    with that text as the reason; a skip or `Deny` denies.

    Raises:
        UserQuestionError: `BAD_ANSWER` for an answer that is not one of those (another
            question, two labels, a label the card does not offer): no decision at all.
    """
    decision = answer_decision(
        card.model_dump(mode="json", exclude_none=True),
        answer.model_dump(mode="json", exclude_none=True),
    )
    if decision is None:
        raise UserQuestionError(
            f"the answer to the approval card {card.id!r} is not one it offers; nothing was "
            "decided",
            ErrorCode.BAD_ANSWER,
        )
    return decision


def approval_decision(answer: AskUserQuestionAnswerItem) -> ApprovalDecision:
    """The decision an answer to `approval_question` gives: only a chosen `Allow` (or
    `Allow and don't ask again`) allows; typed text denies with that text as the reason; a
    skip denies."""
    return decision_of(answer.selected, answer.custom)
