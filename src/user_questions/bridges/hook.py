"""What an agent CLI's hook asks about one event, and what it answers the CLI for each outcome.

`bridges.claude_code` and `bridges.codex` turn a hook event into a `HookAsk`; `uq hook`
(`cli._hook`) asks its questions through a host and prints the output the outcome gives. Only an
answer and a dismissal have an output: any failure (no host, a timeout, a refused token) prints
nothing, so the CLI asks in its own terminal, and nothing is ever allowed on a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from user_questions._hooks.permission_call import PermissionCall, permission_decision
from user_questions.approvals import approval_of, decision_for
from user_questions.frames import Approval
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = ["HookAsk", "HookOutput", "approval_ask", "permission_decision"]

HookOutput = dict[str, Any]
"""The JSON object a hook prints on stdout; an empty one is printed as nothing (the CLI goes on as
it would without the hook)."""


@dataclass(frozen=True, slots=True)
class HookAsk:
    """The questions one hook event asks, and the hook's output for each way they end."""

    questions: list[AskUserQuestionItem]
    answered: Callable[[AskUserQuestionAnswer], HookOutput]
    """The output for the person's answer (already checked against `questions`)."""
    dismissed: Callable[[], HookOutput]
    """The output when the person dismissed the questions (`ASK_CANCELLED`)."""
    approval: Approval | None = None
    """What a permission prompt approves (its tool and input; `uq hook` adds the agent and the
    folder), sent beside the card; `None` for plain questions."""


def approval_ask(call: PermissionCall, *, dismissed: HookOutput) -> HookAsk:
    """A permission prompt about `call`, asked on its approval card (sent beside it as its
    `approval`, editable where the CLI takes a changed call): an allow gives the decision the call
    makes of it (with the changed call, if the person changed it), a denial denies with the
    person's reason and note for the model, a dismissal gives the `dismissed` output, and an
    answer the card does not offer is no decision (`BAD_ANSWER`: the CLI asks in its own
    terminal)."""
    card = AskUserQuestionItem.model_validate(call.card())

    def answered(answer: AskUserQuestionAnswer) -> HookOutput:
        return call.output(decision_for(card, answer))

    approval = approval_of(call.tool, call.arguments, editable=call.editable)
    return HookAsk([card], answered, lambda: dismissed, approval)
