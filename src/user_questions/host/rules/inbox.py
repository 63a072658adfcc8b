"""`InboxRules`: the rules as the inbox (`Hub`) applies them to its requests.

A new approval request a rule decides is settled by it before anyone sees it (`verdict`, then
`settlement`), and the store counts each deciding rule's use with the settled record
(`NewQuestion.rules_used`); a pending card offers the rule "Allow and don't ask again" would make
(`offer`); an answer that asks for that rule makes it once the answer has won, if the person who
answered may (`to_remember`, then `remember`).
A failure never allows: rules that cannot be read decide nothing, and a person is asked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from user_questions._checks import check_answer, quoted
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval, ClientResponse, ErrorResult
from user_questions.host.rules.cache import Rules
from user_questions.host.rules.making import rule_text
from user_questions.host.rules.matching import Match, Verdict
from user_questions.host.rules.offers import answered_decision, offered_rule, rule_answer
from user_questions.host.stores import (
    Decision,
    NewQuestion,
    Rule,
    Settlement,
    StoredQuestion,
)
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem

__all__ = ["RULE_PREFIX", "InboxRules", "Refusal"]

logger = logging.getLogger("user_questions.host")

RULE_PREFIX = "rule:"
"""`by` of a request a rule settled is `rule:<id>`."""

Refusal = Callable[[str, Rule], str | None]
"""Why the token of that name may not make the rule (`roles.maker_refusal`), `None` if it may."""


class InboxRules:
    """The rules a hub applies (`None`: none on this host, so nothing is decided or offered),
    and who may make the rules its answers ask for (`refusal`; `None`: whoever answers)."""

    def __init__(self, rules: Rules | None, refusal: Refusal | None = None) -> None:
        self.rules = rules
        self._refusal = refusal

    async def verdict(
        self, approval: Approval | None, asked_by: str | None, *, fresh: bool = False
    ) -> Verdict | None:
        """What the rules make of `approval` now (`Rules.decide`; `fresh` after `RulesMoved`);
        `None` for a plain question, with no rules on this host, or when they cannot be read
        (a person decides: never an allow on a doubt)."""
        if self.rules is None or approval is None:
            return None
        return await self.rules.decide(approval, asked_by, fresh=fresh)

    def settlement(
        self, verdict: Verdict, questions: tuple[AskUserQuestionItem, ...]
    ) -> tuple[Match, Settlement] | None:
        """The settlement of the rule that decides a new approval request; `None` when a
        person must decide (no rule matches, or the card has no option for the rule to
        choose: never an allow on a doubt)."""
        found = verdict.match
        if found is None or len(questions) != 1:
            return None
        card = questions[0]
        labels = [option.label for option in card.options or ()]
        try:
            answer = check_answer(questions, rule_answer(found, card.id, labels))
        except UserQuestionError as error:
            logger.warning("rule %d cannot answer this card, asking: %s", found.rule.id, error)
            return None
        by = f"{RULE_PREFIX}{found.rule.id}"
        return found, Settlement(Outcome.ANSWERED, answer, Surface.RULE, by)

    def offer(self, record: StoredQuestion | NewQuestion) -> Rule | None:
        """The rule "Allow and don't ask again" makes from a request, `None` when it offers
        none: a plain question, a card without an `Allow` for the rule to choose later, no
        rules on this host, or a call no rule names exactly (`rules.proposed_rule`)."""
        if self.rules is None or record.approval is None:  # a plain question: its questions
            return None  # are not even read (a pending request keeps them as text)
        return offered_rule(record.questions, record.approval, record.asked_by)

    def to_remember(
        self, record: StoredQuestion, response: ClientResponse, by: str | None
    ) -> Rule | None:
        """The rule an answer asks the host to make if it wins (`remember: true`), recomputed
        here from the stored request, never taken from the answer; made by person `by`.

        Raises:
            UserQuestionError: `BAD_ANSWER` for `remember` without a person answering, on a
                request that offers no rule, with an answer that does not allow, or by a
                person who may not make the rule.
        """
        result = response.result
        if isinstance(result, ErrorResult) or not result.value.remember:
            return None
        if by is None:
            raise UserQuestionError("only a person's answer can make a rule", ErrorCode.BAD_ANSWER)
        offer = self.offer(record)
        if offer is None:
            raise UserQuestionError(
                f"question {quoted(record.rpc_id)} offers no rule to remember",
                ErrorCode.BAD_ANSWER,
            )
        if answered_decision(record.questions, result.value.answer) is not Decision.ALLOW:
            raise UserQuestionError(
                "remember goes with an answer that allows the call", ErrorCode.BAD_ANSWER
            )
        if any(item.edited is not None for item in result.value.answer.answers):
            raise UserQuestionError(
                "remember goes with the call as asked: no rule is made from an edited call",
                ErrorCode.BAD_ANSWER,
            )
        rule = replace(offer, created_by=by, approvals=record.approvals)  # the same quorum
        refusal = None if self._refusal is None else self._refusal(by, rule)
        if refusal is not None:
            raise UserQuestionError(f"{by} may not make this rule: {refusal}", ErrorCode.BAD_ANSWER)
        return rule

    async def remember(self, rpc_id: str, rule: Rule, via: Surface) -> None:
        """Make the rule a winning answer asked for, and apply it here at once (the other hosts
        hear of it through the store). A failure is logged: the answer stands."""
        assert self.rules is not None  # it offered one
        try:
            made = await self.rules.store.add_rule(rule)
            await self.rules.reload()
        except Exception as error:  # the store: the answer has won already, and stands
            logger.warning("could not make the rule question %s asked for: %s", rpc_id, error)
            return
        logger.info(
            "question %s: %s made rule %d through %s: %s",
            rpc_id,
            rule.created_by,
            made.id,
            via,
            rule_text(rule),
        )
