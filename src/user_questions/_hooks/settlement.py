"""The reading of a host's settlement of an approval card: the one place a permission gate learns
whether what came back allows its call.

Standard library only, so that `uq hook`'s quick path (`cli._hook_rule`) reads the reply of
`POST /api/decide` with it before pydantic is loaded, and every full path (the hooks, the Claude
bridge, `uq mcp --permission-tool`, the framework adapters, through `approvals.decision_for`)
reads the answer it was given with the very same checks. A gate allows only what both would:

- `settled_decision`: the reply must be the settlement of *this* request (its rpcId), of type
  `ask/settled`, with the outcome `answered`; then its answer is read as `answer_decision` reads it.
- `answer_decision`: exactly the card's one question answered (its id, once); a chosen label that
  is one of the card's own options (`Allow`, `Deny`, and `Allow and don't ask again` only where
  the card offers it), alone; or typed text alone (a reason for a denial); or nothing (a skip,
  which denies). Beside it, a note the host would keep (text, within `MAX_ANSWER_NOTE_LENGTH`),
  and with `Allow` alone the call as the person changed it (`edited`, a JSON object).

Anything else is `None`: no decision, never an allow and never a denial the person did not give.
"""

from __future__ import annotations

from collections.abc import Mapping

from user_questions._hooks.approval_card import ALLOW, ApprovalDecision, decision_of
from user_questions._reading.text import text_problem
from user_questions.limits import MAX_ANSWER_NOTE_LENGTH, MAX_CUSTOM_LENGTH

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["answer_decision", "settled_decision"]


def settled_decision(
    reply: object, rpc_id: str, card: Mapping[str, Any]
) -> ApprovalDecision | None:
    """The decision a host's reply (`{"rpcId", "payload": {...}}`, parsed JSON) gives the
    approval card `card` (the question's JSON object) asked under `rpc_id`; `None` for any reply
    that is not the answered settlement of that very request."""
    if not isinstance(reply, Mapping) or reply.get("rpcId") != rpc_id:
        return None
    payload = reply.get("payload")
    if not isinstance(payload, Mapping) or payload.get("type") != "ask/settled":
        return None
    if payload.get("outcome") != "answered":
        return None
    return answer_decision(card, payload.get("answer"))


def answer_decision(card: Mapping[str, Any], answer: object) -> ApprovalDecision | None:
    """The decision `answer` (`{"answers": [...]}`, as JSON data) gives the approval card `card`;
    `None` when it does not answer exactly that card with one of its own options, typed text or
    a skip."""
    items = answer.get("answers") if isinstance(answer, Mapping) else None
    if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], Mapping):
        return None
    item = items[0]
    selected, custom = item.get("selected"), item.get("custom")
    note, edited = item.get("note"), item.get("edited")
    if item.get("id") != card.get("id") or not isinstance(selected, list):
        return None
    if note is not None and not _typed(note, MAX_ANSWER_NOTE_LENGTH):
        return None
    if edited is not None and (not isinstance(edited, dict) or selected != [ALLOW] or custom):
        return None
    if custom is not None:
        if selected or not _typed(custom, MAX_CUSTOM_LENGTH):
            return None
        return decision_of([], custom, note)
    labels = [
        option.get("label") for option in card.get("options") or () if isinstance(option, Mapping)
    ]
    if selected and (len(selected) != 1 or selected[0] not in labels):
        return None
    return decision_of(selected, None, note, edited)


def _typed(text: object, limit: int) -> bool:
    """Whether `text` is text a person could have typed (a reason, a note), as the host keeps
    it."""
    return (
        isinstance(text, str)
        and bool(text.strip())
        and len(text) <= limit
        and text_problem(text) is None
    )
