"""History: settled requests as people and scripts read them, and the filters they give.

The same `HistoryEntry` JSON is what `GET /api/history` lists and what `uq history --json` prints,
one per line, whether `uq history` reads the store or a running host. Outcomes and surfaces are the
`outcomes` module's names, as everywhere else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import StrictStr

from user_questions._reading.text import text_problem
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval, JSONObject, Origin, RuleProposal, iso
from user_questions.host.rules import answered_decision, offered_rule, rule_fields
from user_questions.host.stores import HistoryQuery, StoredQuestion
from user_questions.outcomes import Outcome, Surface
from user_questions.types import WireModel

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "MAX_SEARCH_LENGTH",
    "MAX_SEARCH_TERMS",
    "HistoryEntry",
    "HistoryResponse",
    "entry_of",
    "history_query",
    "query_of",
]

DEFAULT_LIMIT = 50
"""Entries in one page of history unless `limit` says otherwise."""
MAX_LIMIT = 200
"""The most entries one page of history holds."""
MAX_SEARCH_LENGTH = 200
"""Characters in a history search."""
MAX_SEARCH_TERMS = 10
"""Words in a history search; every one must occur in a request."""


class HistoryEntry(WireModel):
    """One settled request: what was asked, by whom, and how it ended."""

    rpc_id: StrictStr
    session_id: StrictStr
    """The session that asked: the agent's id, or the asker's named session."""
    asked_at: StrictStr
    """When it was asked, ISO 8601 UTC."""
    asked_by: StrictStr | None = None
    """The person whose token the asker used, when it asked through the network."""
    shown_at: StrictStr | None = None
    """When a host first handed it to a page (or listed it for `uq pending`); absent if never."""
    settled_at: StrictStr
    outcome: Outcome
    """`answered`, `dismissed` (by a person), `withdrawn` (its asker gave up) or `timed-out`
    (its asker's timeout ran out)."""
    by: StrictStr | None = None
    """Who answered or dismissed it (a token's name; `owner` for the start-up token), or whose
    asker withdrew it; absent for an in-process asker."""
    via: Surface | None = None
    """The surface it was settled through (`web`, `terminal`, `editor`, `link`, `api`, `asker`,
    `host`, `rule`)."""
    channel: StrictStr | None = None
    """Settled through an answer link only: the notification channel that carried the link."""
    note: StrictStr | None = None
    """Withdrawn or timed out only: why, in its asker's words (the `withdraw` frame's `note`;
    `uq acp` says what the editor answered)."""
    origin: Origin | None = None
    """Where the asker said the request came from (the asking program, its folder)."""
    approval: Approval | None = None
    """What it approved, when it was an approval card: what a rule made from it would match."""
    remember: RuleProposal | None = None
    """Answered by a person, an approval only: the rule that would decide the same call as it
    was decided (allow or deny), which the history page offers to make (`POST /api/rules`);
    absent where no rule can name the call exactly."""
    questions: list[JSONObject]
    """The `AskUserQuestionItem`s, as wire JSON."""
    answer: JSONObject | None = None
    """The `AskUserQuestionAnswer`, when answered."""
    rendered: dict[str, str] | None = None
    """`GET /api/history` only: safe HTML of each question's detail, as on the inbox page."""


class HistoryResponse(WireModel):
    """The body of `GET /api/history`."""

    items: list[HistoryEntry]
    """Newest settled first."""
    next: StrictStr | None = None
    """The cursor to pass as `before` for the following page; absent on the last page."""


def entry_of(record: StoredQuestion, *, rendered: bool = False) -> HistoryEntry:
    """The history entry of a settled request (`rendered`: with its details as safe HTML, as
    they were rendered when the request was stored)."""
    assert record.outcome is not None, "history lists settled requests only"
    return HistoryEntry(
        rpc_id=record.rpc_id,
        session_id=record.session_id,
        asked_at=iso(record.asked_at),
        asked_by=record.asked_by,
        shown_at=None if record.shown_at is None else iso(record.shown_at),
        settled_at=iso(record.settled_at or record.asked_at),
        outcome=record.outcome,
        by=record.settled_by,
        via=record.settled_via,
        channel=record.channel,
        note=record.note,
        origin=record.origin,
        approval=record.approval,
        remember=_remember(record),
        questions=[question.model_dump(mode="json") for question in record.questions],
        answer=None if record.answer is None else record.answer.model_dump(mode="json"),
        rendered=dict(record.rendered) if rendered else None,
    )


def _remember(record: StoredQuestion) -> RuleProposal | None:
    """The rule that decides the call of an answered approval as a person decided it."""
    if record.outcome is not Outcome.ANSWERED or record.settled_via is Surface.RULE:
        return None
    decision = None if record.answer is None else answered_decision(record.questions, record.answer)
    if decision is None:
        return None
    rule = offered_rule(record.questions, record.approval, record.asked_by, decision)
    return None if rule is None else RuleProposal.model_validate(rule_fields(rule))


def history_query(
    *,
    session: str | None = None,
    outcome: str | None = None,
    search: str | None = None,
    by: str | None = None,
    before: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> HistoryQuery:
    """The store query for these filters; an empty string is no filter.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a filter holding a NUL or a lone surrogate (no
            request holds one, and no store could search for it), an unknown outcome, a search
            over `MAX_SEARCH_LENGTH` characters or `MAX_SEARCH_TERMS` words, or a limit outside
            1 to `MAX_LIMIT`.
    """
    filters = {"session": session, "outcome": outcome, "search": search, "by": by, "before": before}
    for name, value in filters.items():
        problem = None if value is None else text_problem(value)
        if problem is not None:
            raise UserQuestionError(f"the filter {name} {problem}", ErrorCode.BAD_REQUEST)
    ended = None
    if outcome:
        try:
            ended = Outcome(outcome)
        except ValueError:
            raise UserQuestionError(
                f"unknown outcome {json.dumps(outcome, ensure_ascii=False)}; use one of "
                + ", ".join(Outcome),
                ErrorCode.BAD_REQUEST,
            ) from None
    search = search or ""
    terms = tuple(dict.fromkeys(search.casefold().split()))
    if len(search) > MAX_SEARCH_LENGTH or len(terms) > MAX_SEARCH_TERMS:
        raise UserQuestionError(
            f"a search holds at most {MAX_SEARCH_LENGTH} characters and {MAX_SEARCH_TERMS} words",
            ErrorCode.BAD_REQUEST,
        )
    if not 1 <= limit <= MAX_LIMIT:
        raise UserQuestionError(
            f"limit must be 1 to {MAX_LIMIT}, got {limit}", ErrorCode.BAD_REQUEST
        )
    return HistoryQuery(
        session=session or None,
        outcome=ended,
        by=by or None,
        terms=terms,
        before=before or None,
        limit=limit,
    )


def query_of(parameters: Mapping[str, str]) -> HistoryQuery:
    """The store query for `GET /api/history`'s parameters: `session`, `outcome`, `q`, `by`,
    `before`, `limit` (others, such as `token`, are not filters and are ignored).

    Raises:
        UserQuestionError: `BAD_REQUEST`, as `history_query`, or for a limit that is not a
            whole number.
    """
    limit = parameters.get("limit") or str(DEFAULT_LIMIT)
    if not (limit.isascii() and limit.isdigit() and len(limit) <= 6):
        raise UserQuestionError(
            f"limit must be a whole number from 1 to {MAX_LIMIT}, "
            f"got {json.dumps(limit[:20], ensure_ascii=False)}",
            ErrorCode.BAD_REQUEST,
        )
    return history_query(
        session=parameters.get("session"),
        outcome=parameters.get("outcome"),
        search=parameters.get("q"),
        by=parameters.get("by"),
        before=parameters.get("before"),
        limit=int(limit),
    )
