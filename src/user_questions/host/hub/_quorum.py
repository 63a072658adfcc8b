"""A quorum as the hub counts it: which answers are approvals to count, and what the person who
gave one is told while the request waits for more (docs/rules.md).

A request that needs several approvals (`StoredQuestion.approvals`, its asker token's or its
rule's) settles allowed only once that many distinct people (token names) approved the same call
(`Store.approve`); a denial, a typed reason or a dismissal settles it at once, as for any
request, so they never come here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from user_questions._languages import format_number, gettext
from user_questions.approvals import decision_for
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Receipt
from user_questions.host.stores import Settlement, StoredQuestion, Tally, Vote
from user_questions.host.stores.audit_chain import canonical_json
from user_questions.outcomes import Outcome, Surface

__all__ = ["approved_by", "tally_receipt", "tally_text", "vote_of"]


def vote_of(
    record: StoredQuestion, settlement: Settlement, via: Surface, at: datetime
) -> Vote | None:
    """The approval `settlement` gives a request that needs a quorum, to be counted rather than
    settle it; `None` when it settles the request at once (no quorum, or not an approval).

    Raises:
        UserQuestionError: `BAD_ANSWER` for an approval that names nobody (an answer given
            without a person's token): a quorum counts people.
    """
    if record.approvals <= 1 or record.approval is None or settlement.answer is None:
        return None
    if settlement.outcome is not Outcome.ANSWERED or len(record.questions) != 1:
        return None
    decision = decision_for(record.questions[0], settlement.answer)
    if not decision.allowed:
        return None
    if settlement.by is None:
        raise UserQuestionError(
            f"this call needs {record.approvals} people's approvals: approve with your own "
            "token, so that you are counted",
            ErrorCode.BAD_ANSWER,
        )
    call = record.approval.input if decision.edited is None else decision.edited
    return Vote(record.rpc_id, settlement.by, canonical_json(call), via, at)


def approved_by(record: StoredQuestion, votes: Sequence[Vote]) -> tuple[str, ...]:
    """Who approved the call of `record` as asked, oldest first: what every card shows (an
    approval with changes counts for the changed call, apart)."""
    if record.approval is None:
        return ()
    call = canonical_json(record.approval.input)
    return tuple(vote.person for vote in votes if vote.call == call)


def tally_text(tally: Tally) -> str:
    """Where a quorum stands, as every surface shows it: `1 of 2 approved: alice`, in the
    current language (`speaking`)."""
    stands = gettext("{approved} of {needed} approved: {people}")
    people = ", ".join(tally.people)
    return stands.format(
        approved=format_number(len(tally.people)), needed=format_number(tally.needed), people=people
    )


def tally_receipt(tally: Tally) -> Receipt:
    """What the person whose approval did not complete the quorum is told: counted (or counted
    already, for a second approval of theirs), and where it stands; in the language the surface
    that asked speaks to them (the receipt answers that one person alone)."""
    said = tally_text(tally)
    if not tally.counted:
        said = gettext("your approval was counted already; {tally}").format(tally=said)
    return Receipt(accepted=True, message=said)
