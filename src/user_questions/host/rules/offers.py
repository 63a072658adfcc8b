"""What rules make of a card: the answer a rule gives it, and the rule a person is offered.

"Allow and don't ask again" on a pending card, and "Make a rule" in the history, offer the
narrowest rule that decides the same call again (`proposed_rule`), computed by the host from
the request's `approval` and the name of the token that asked, never from what a page sends.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from user_questions._hooks.approval_card import decision_of
from user_questions.approvals import ALLOW
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval
from user_questions.host.rules.calls import FOLDER_KEYS, Kind, read_call
from user_questions.host.rules.making import check_rule
from user_questions.host.rules.matching import Match, match
from user_questions.host.stores import Decision, Rule, RuleRecord
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
)

__all__ = ["answered_decision", "offered_rule", "proposed_rule", "rule_answer"]


def rule_answer(found: Match, question_id: str, labels: Sequence[str]) -> AskUserQuestionAnswer:
    """The answer `found` gives the approval card `question_id` with options `labels`: its
    approving option, or (a deny) the reason the agent reads.

    Raises:
        UserQuestionError: `BAD_ANSWER` when the card has no approving option to choose.
    """
    if not found.allowed:
        reason = f"denied by rule {found.rule.id}: {found.matched}"
        item = AskUserQuestionAnswerItem(id=question_id, selected=[], custom=reason)
        return AskUserQuestionAnswer(answers=[item])
    if ALLOW not in labels:
        raise UserQuestionError(
            f"the card has no {ALLOW!r} option for rule {found.rule.id} to choose",
            ErrorCode.BAD_ANSWER,
        )
    return AskUserQuestionAnswer(
        answers=[AskUserQuestionAnswerItem(id=question_id, selected=[ALLOW])]
    )


def proposed_rule(
    approval: Approval, asked_by: str | None, decision: Decision = Decision.ALLOW
) -> Rule | None:
    """The narrowest rule that decides this call, and the same call again, as `decision`: for
    the asker that made it (`asked_by`, the token's name), in its folder (its own working
    folder when it names one); a shell command exactly (its words), a file by its path as read,
    a web call by its URL's host, any other tool by its name. What a card's "Allow and don't
    ask again" and the history's "Make a rule" create. `None` when no rule can be that narrow,
    so none is offered: a command that is not one plain simple command, a patch of several
    files (a move names two), a path holding a glob character, a URL whose host cannot be
    read, a folder that cannot be read.
    """
    call = read_call(approval)
    named = any(key in approval.input for key in FOLDER_KEYS)
    if call.folder is None and (named or approval.cwd is not None):
        return None
    rule = Rule(approval.tool, decision, datetime.now(UTC), asker=asked_by, cwd=call.folder)
    if call.kind is Kind.SHELL:
        if call.shell is None or call.problem is not None or len(call.shell.commands) != 1:
            return None
        rule = replace(rule, command=shlex.join(call.shell.commands[0]))
    elif call.kind is Kind.FILE:
        if call.problem is not None or len(set(call.paths)) != 1:
            return None
        if any(glob in call.paths[0] for glob in "*?"):
            return None
        rule = replace(rule, path=call.paths[0])
    elif call.kind is Kind.WEB:
        if call.host is None:
            return None
        rule = replace(rule, domain=call.host)
    try:
        rule = check_rule(rule)
    except UserQuestionError:
        return None
    # It must decide the very call it is made from, or it is not offered.
    return rule if match([RuleRecord(0, rule)], approval, asked_by) is not None else None


def answered_decision(
    questions: Sequence[AskUserQuestionItem], answer: AskUserQuestionAnswer
) -> Decision | None:
    """What a person's `answer` to an approval card decided (only a chosen `Allow` allows:
    `approvals.approval_decision`); `None` when it does not answer a one-question card."""
    if len(questions) != 1:
        return None
    items = [item for item in answer.answers if item.id == questions[0].id]
    if not items:
        return None
    allowed = decision_of(items[0].selected, items[0].custom).allowed
    return Decision.ALLOW if allowed else Decision.DENY


def offered_rule(
    questions: Sequence[AskUserQuestionItem],
    approval: Approval | None,
    asked_by: str | None,
    decision: Decision = Decision.ALLOW,
) -> Rule | None:
    """The rule a person is offered for a request (`proposed_rule`), `None` when it offers
    none: a plain question (no `approval`), more than one question, an allow on a card without
    the `Allow` a rule chooses (it could never settle the next one)."""
    if approval is None or len(questions) != 1:
        return None
    labels = [option.label for option in questions[0].options or ()]
    if decision is Decision.ALLOW and ALLOW not in labels:
        return None
    return proposed_rule(approval, asked_by, decision)
