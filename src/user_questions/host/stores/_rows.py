"""The rows both store backends write and read, the same way: a record's fields as column values
(lists of names and origins as JSON, the rendered details, the search text), a row read back into a
record, the history filter and cursor over those rows, and telling the listeners of tokens and
rules.

The search text of a request is kept in a column of its own, casefolded, so that a history search is
a plain `LIKE` on both backends and never matches the JSON around the words (a search for "label"
must not find every request).
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval, Origin
from user_questions.host.markdown import RENDER_BUDGET, rendered_details
from user_questions.host.stores.audit_chain import (
    GENESIS,
    canonical_json,
    chain_hash,
    record_body,
)
from user_questions.host.stores.collector import collector_paused
from user_questions.host.stores.records import (
    NO_DETAILS,
    QUESTIONS,
    Decision,
    Escalation,
    HistoryQuery,
    QuestionsText,
    Rate,
    Role,
    Rule,
    RuleRecord,
    Settlement,
    StoredQuestion,
    TokenChange,
    TokenRecord,
    Vote,
    audit_time,
    stored_detail,
)
from user_questions.outcomes import RequestState, Surface
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = [
    "COLUMNS",
    "ChainRow",
    "ImportedRow",
    "audit_body",
    "chain_head",
    "imported_records",
    "RULE_COLUMNS",
    "TOKEN_COLUMNS",
    "answer_edited",
    "answer_text",
    "decode_cursor",
    "encode_cursor",
    "history_filter",
    "history_moment",
    "instant_text",
    "like_pattern",
    "names",
    "names_json",
    "origin_json",
    "question_text",
    "render_stored",
    "rule_record",
    "rendered_json",
    "search_text",
    "settled_fields",
    "settlement_text",
    "escalations",
    "escalations_json",
    "stored_question",
    "stored_questions",
    "token_change_fields",
    "token_fields",
    "token_limits",
    "token_record",
    "vote_body",
    "vote_record",
]


COLUMNS = (
    "rpc_id",
    "session_id",
    "questions",
    "asked_at",
    "state",
    "answer",
    "settled_at",
    "settled_via",
    "asked_by",
    "shown_at",
    "settled_by",
    "origin",
    "channel",
    "rendered",
    "audience",
    "approval",
    "deadline_at",
    "escalate",
    "escalated",
    "remind",
    "reminded_at",
    "asker_rpc_id",
    "digest",
    "approvals",
)
"""The columns of a `questions` row that make a `StoredQuestion`, in `stored_question`'s order
(a backend may cast them, as PostgreSQL casts its JSON to text)."""
RULE_COLUMNS = (
    "id",
    "tool",
    "decision",
    "created_at",
    "command",
    "path",
    "domain",
    "asker",
    "cwd",
    "created_by",
    "expires_at",
    "hits",
    "last_used_at",
    "revoked_at",
    "approvals",
)
"""The columns of a `rules` row that make a `RuleRecord`, in `rule_record`'s order."""
TOKEN_COLUMNS = (
    "name",
    "token_hash",
    "created_at",
    "last_used_at",
    "revoked_at",
    "role",
    "groups",
    "routes",
    "notify",
    "deadline",
    "escalate",
    "remind",
    "max_pending",
    "rate",
    "burst",
    "approvals",
    "lang",
)
"""The columns of a `tokens` row that make a `TokenRecord`, in `token_record`'s order (cast as
`COLUMNS` may be)."""


def origin_json(origin: Origin | Approval | None) -> str | None:
    """An origin or an approval as both backends store it: a JSON object, or NULL."""
    return None if origin is None else origin.model_dump_json()


def rendered_json(rendered: Mapping[str, str]) -> str:
    """A request's rendered details as both backends store them: a JSON object by question id."""
    if not rendered:
        return "{}"  # most requests have no detail
    return json.dumps(dict(rendered), ensure_ascii=False)


def settled_fields(
    settlement: Settlement | None,
) -> tuple[str, str | None, str | None, str | None]:
    """The state, answer (JSON), surface and person a request is stored with: `pending` and
    nothing, unless a rule settled it as it was stored (`NewQuestion.settlement`)."""
    if settlement is None:
        return ("pending", None, None, None)
    answer = None if settlement.answer is None else settlement.answer.model_dump_json()
    via = None if settlement.via is None else str(settlement.via)
    return (str(settlement.outcome), answer, via, settlement.by)


def audit_body(
    rpc_id: str,
    digest: str | None,
    settlement: Settlement,
    answer: str | None,
    at: datetime,
    event: str = "settled",
) -> str:
    """The audit record of `settlement` of request `rpc_id` at `at` (`audit_chain`): its card's
    `digest` as stored and the one its answer carried back (`seen`), the outcome, the answer as
    stored (`answer`, its JSON text, every field it has), who, through which surface and link
    channel, the withdrawal's note, and the time, which is the request's `settled_at`."""
    return record_body(
        event,
        rpc_id,
        {
            "digest": digest,
            "seen": settlement.seen,
            "outcome": str(settlement.outcome),
            "answer": None if answer is None else json.loads(answer),
            "by": settlement.by,
            "via": None if settlement.via is None else str(settlement.via),
            "channel": settlement.channel,
            "note": settlement.note,
            "at": audit_time(at),
        },
    )


def vote_body(vote: Vote, digest: str | None) -> str:
    """The audit record of `vote`, one approval of a quorum on the request whose card has
    `digest`: the call approved (its SHA-256), who, through which surface, and when."""
    fields = {
        "digest": digest,
        "call": vote.digest,
        "by": vote.person,
        "via": str(vote.via),
        "at": audit_time(vote.at),
    }
    return record_body("approved", vote.rpc_id, fields)


def vote_record(row: Sequence[Any], moment: Callable[[Any], datetime | None]) -> Vote:
    """A row of `approvals` (rpc_id, person, call, via, at) as a `Vote`."""
    rpc_id, person, call, via, at = row
    when = moment(at)
    assert when is not None  # at is NOT NULL in both schemas
    text = call if isinstance(call, str) else canonical_json(call)
    return Vote(rpc_id, person, text, Surface(via), when)


ImportedRow = tuple[str, str, str, str | None, str | None, str | None, str | None, datetime]
"""A request settled before the audit log existed: its rpcId, digest, state, answer (JSON),
surface, person, `channel` column and settled time."""
ChainRow = tuple[int, str, datetime, str, str, str]
"""An audit record as the migration writes it: seq, rpcId, time, body, prev, hash."""


def imported_records(settled: Sequence[ImportedRow]) -> list[ChainRow]:
    """The audit records of the requests settled before the audit log existed (in the order
    given: the order they settled), chained from `GENESIS` as `imported` events."""
    records: list[ChainRow] = []
    prev = GENESIS
    for number, (rpc_id, digest, state, answer, via, by, detail, at) in enumerate(settled, 1):
        outcome = RequestState(state).outcome
        assert outcome is not None
        channel, note = stored_detail(RequestState(state), detail)
        settlement = Settlement(
            outcome,
            None if answer is None else AskUserQuestionAnswer.model_validate_json(answer),
            None if via is None else Surface(via),
            by,
            channel,
            note,
        )
        body = audit_body(rpc_id, digest, settlement, answer, at, "imported")
        own = chain_hash(prev, body)
        records.append((number, rpc_id, at, body, prev, own))
        prev = own
    return records


def chain_head(records: Sequence[ChainRow]) -> tuple[int, str, str]:
    """The `audit_head` row after `records`: the last one's number, its prev and its hash."""
    if not records:
        return (0, GENESIS, GENESIS)
    seq, _, _, _, prev, own = records[-1]
    return (seq, prev, own)


def names_json(items: Sequence[str]) -> str:
    """A list of names (a request's audience, a token's groups, routes or notification URLs) as
    both backends store it: a JSON array."""
    if not items:
        return "[]"  # most requests are routed to everyone: no encoding on the hot path
    return json.dumps(list(items), ensure_ascii=False)


def escalations_json(steps: Sequence[Escalation]) -> str:
    """Escalation steps as both backends store them: a JSON array of `[after, to]`."""
    if not steps:
        return "[]"
    return json.dumps([[step.after, step.to] for step in steps], ensure_ascii=False)


def escalations(text: str) -> tuple[Escalation, ...]:
    """Stored escalation steps (`escalations_json`) as records."""
    if text == "[]":
        return ()
    return tuple(Escalation(int(after), str(to)) for after, to in json.loads(text))


def names(text: str) -> tuple[str, ...]:
    """A stored JSON array of names (`names_json`) as a tuple."""
    return () if text == "[]" else tuple(json.loads(text))


def render_stored(questions: str) -> str:
    """The rendered details of a stored request, from its questions' JSON, within the budget a
    new request gets: what migrating a store to schema version 4 writes for each row."""
    deadline = time.monotonic() + RENDER_BUDGET
    return rendered_json(rendered_details(QUESTIONS.validate_json(questions), deadline=deadline))


def question_text(questions: Iterable[AskUserQuestionItem]) -> str:
    """The searchable text of a request: headers, questions, details, labels, descriptions,
    and the texts of a form (its fields' titles and descriptions, its choices' titles)."""
    parts: list[str] = []
    for question in questions:
        parts += [question.header or "", question.question, question.detail or ""]
        for option in question.options or ():
            parts += [option.label, option.description or ""]
        if question.schema_ is not None:
            parts += _leaves(
                [
                    {name: field.get(name) for name in ("title", "description", "oneOf")}
                    for field in (question.schema_.get("properties") or {}).values()
                    if isinstance(field, Mapping)
                ]
            )
    return _joined(parts)


def answer_text(answer: AskUserQuestionAnswer | None) -> str:
    """The searchable text an answer adds: what a person typed (custom text, a note), a form's
    value and the call as they changed it."""
    if answer is None:
        return ""
    parts: list[str] = []
    for item in answer.answers:
        parts += [item.custom or "", item.note or "", *_leaves([item.value, item.edited])]
    return _joined(parts)


def answer_edited(answer: str | AskUserQuestionAnswer | None) -> bool:
    """Whether an answer (or its JSON) allowed a call with changes (an item's `edited`)."""
    if isinstance(answer, str):
        answer = AskUserQuestionAnswer.model_validate_json(answer)
    return answer is not None and any(item.edited is not None for item in answer.answers)


def _leaves(value: object) -> list[str]:
    """Every text and number inside a JSON value, as text (a form's value, a changed call)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [str(value)]
    inner = value.values() if isinstance(value, Mapping) else value
    if isinstance(inner, Iterable):
        return [text for one in inner for text in _leaves(one)]
    return []


def settlement_text(settlement: Settlement | None) -> str:
    """The searchable text a settlement adds: its answer's typed text, and the note its asker
    gave with a withdrawal (what `uq acp` says the editor answered, say)."""
    if settlement is None:
        return ""
    return answer_text(settlement.answer) + _joined([settlement.note or ""])


def search_text(questions: str, answer: str | None) -> str:
    """The searchable text of a stored request, from its questions' and its answer's JSON."""
    parsed = None if answer is None else AskUserQuestionAnswer.model_validate_json(answer)
    return question_text(QUESTIONS.validate_json(questions)) + answer_text(parsed)


def _joined(parts: Iterable[str]) -> str:
    # Words never span two parts: a search term holds no whitespace, and parts end in a newline.
    return "".join(f"{part}\n" for part in parts if part).casefold()


def like_pattern(term: str, *, anywhere: bool = True) -> str:
    """A `LIKE ... ESCAPE '\\'` pattern matching `term` anywhere (or, not `anywhere`, at the
    start), wildcards taken literally."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%" if anywhere else f"{escaped}%"


def instant_text(moment: datetime) -> str:
    """A UTC instant as text that sorts in time order: how SQLite keeps it, and a cursor."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def history_moment(query: HistoryQuery) -> str:
    """The column a history page is ordered and paged by: when each request settled, or (with
    `pending`) when it last changed, settled or else asked."""
    return "COALESCE(settled_at, asked_at)" if query.pending else "settled_at"


def history_filter(
    query: HistoryQuery, mark: str, moment: Callable[[str], object], shares: str
) -> tuple[str, list[object]]:
    """The `WHERE` condition of a history page, and its parameters (the limit is the caller's).

    `mark` is the driver's placeholder (`?` or `%s`); `moment` turns an ISO instant (the
    cursor's, `changed_after`) into the value the database compares with its timestamps;
    `shares` is the backend's condition that the `audience` column shares a name with a JSON
    array of names, its one placeholder (`query.seen_by`, as `names_json`).
    """
    where = [] if query.pending else ["state <> 'pending'"]
    parameters: list[object] = []
    for column, value in (
        ("session_id", query.session),
        ("state", query.outcome),
        ("settled_by", query.by),
        ("asked_by", query.asked_by),
    ):
        if value is not None:
            where.append(f"{column} = {mark}")
            parameters.append(str(value))
    if query.session_prefix is not None:
        where.append(f"session_id LIKE {mark} ESCAPE '\\'")
        parameters.append(like_pattern(query.session_prefix, anywhere=False))
    if query.edited:
        where.append(f"edited = {mark}")
        parameters.append(True)
    for term in query.terms:
        where.append(f"search LIKE {mark} ESCAPE '\\'")
        parameters.append(like_pattern(term))
    if query.seen_by is not None:
        where.append(f"(audience = '[]' OR {shares})")
        parameters.append(names_json(query.seen_by))
    ordered_by = history_moment(query)
    if query.changed_after is not None:
        where.append(f"{ordered_by} >= {mark}")
        parameters.append(moment(instant_text(query.changed_after)))
    if query.before is not None:
        at, seq = decode_cursor(query.before)
        # Settled only: a range on the index, not a filter.
        where.append(f"({ordered_by}, seq) < ({mark}, {mark})")
        parameters += [moment(at), seq]
    return " AND ".join(where) or "TRUE", parameters


def encode_cursor(settled_at: str, seq: int) -> str:
    """The opaque cursor after a row: its settled time (as the store compares it) and its seq."""
    return base64.urlsafe_b64encode(f"{settled_at}|{seq}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, int]:
    """The settled time and seq inside a cursor made by `encode_cursor`.

    Raises:
        UserQuestionError: `BAD_REQUEST` for anything else.
    """
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        settled_at, _, seq = text.rpartition("|")
        datetime.fromisoformat(settled_at)
        return settled_at, int(seq)
    except (ValueError, binascii.Error):
        raise UserQuestionError(
            f"invalid history cursor {cursor[:80]!r}; pass the `next` of a previous page",
            ErrorCode.BAD_REQUEST,
        ) from None


def stored_questions(
    rows: Iterable[Sequence[Any]], moment: Callable[[Any], datetime | None]
) -> list[StoredQuestion]:
    """`rows` as records (`stored_question`), with the garbage collector paused: a host reads
    all its pending requests at once (`host/stores/collector.py`)."""
    with collector_paused():
        return [stored_question(row, moment) for row in rows]


def stored_question(row: Sequence[Any], moment: Callable[[Any], datetime | None]) -> StoredQuestion:
    """A row of `COLUMNS` as a record; `moment` reads the backend's timestamps (a datetime on
    PostgreSQL, ISO text on SQLite) as UTC datetimes."""
    rpc_id, session_id, questions, asked_at, state, answer, settled_at, settled_via = row[:8]
    asked_by, shown_at, settled_by, origin, channel, rendered, audience, approval = row[8:16]
    deadline_at, escalate, escalated, remind, reminded_at, asker_rpc_id, digest = row[16:23]
    approvals = row[23]
    asked = moment(asked_at)
    assert asked is not None  # asked_at is NOT NULL in both schemas
    # Most requests have no detail: their '{}' is not worth a parse (a host start reads them all).
    html: dict[str, str] = {} if rendered == "{}" else json.loads(rendered)
    items = QuestionsText(questions)
    settled = RequestState(state)
    link_channel, note = stored_detail(settled, channel)
    return StoredQuestion(
        rpc_id=rpc_id,
        session_id=sys.intern(session_id),  # one string for an agent's many requests
        questions=items,
        asked_at=asked,
        state=settled,
        answer=None if answer is None else AskUserQuestionAnswer.model_validate_json(answer),
        settled_at=moment(settled_at),
        settled_via=Surface(settled_via) if settled_via else None,
        asked_by=asked_by,
        shown_at=moment(shown_at),
        settled_by=settled_by,
        origin=None if origin is None else Origin.model_validate_json(origin),
        channel=link_channel,
        note=note,
        # In question order, whatever order the database keeps a JSON object's keys in.
        rendered={item.id: html[item.id] for item in items if item.id in html}
        if html
        else NO_DETAILS,
        audience=names(audience),
        approval=None if approval is None else Approval.model_validate_json(approval),
        deadline_at=moment(deadline_at),
        escalate=escalations(escalate),
        escalated=int(escalated),
        remind=None if remind is None else int(remind),
        reminded_at=moment(reminded_at),
        asker_rpc_id=asker_rpc_id,
        approvals=int(approvals),
        questions_json=questions,
        digest=digest,
    )


def token_fields(
    role: Role | None,
    groups: Sequence[str] | None,
    routes: Sequence[str] | None,
    notify: Sequence[str] | None,
) -> tuple[str | None, str | None, str | None, str | None]:
    """A token's role, groups, routes and notification URLs as both backends write them; `None`
    stays `None` (`change_token`: keep the stored value)."""
    return (None if role is None else str(role), _listed(groups), _listed(routes), _listed(notify))


def token_change_fields(change: TokenChange) -> tuple[object, ...]:
    """A `TokenChange` as both backends' `change_token` writes it: role, groups, routes,
    notification URLs, deadline, escalation steps, reminder period, pending cap, rate, burst,
    language and approvals; `None` keeps the stored value (0, or "" for the language, sets it
    back to none, or to the default)."""
    steps = None if change.escalate is None else escalations_json(change.escalate)
    lists = token_fields(change.role, change.groups, change.routes, change.notify)
    rate = change.rate
    rated = (None, None) if rate is None else (rate.per_second, rate.burst)
    share = (change.max_pending, *rated, change.approvals, change.lang)
    return (*lists, change.deadline, steps, change.remind, *share)


def token_limits(token: TokenRecord) -> tuple[int | None, float | None, int | None, int]:
    """A token's pending cap, rate and burst as both backends store them (NULL: the default),
    and the approvals its calls need."""
    rate = token.rate
    rated = (None, None) if rate is None else (rate.per_second, rate.burst)
    return (token.max_pending, *rated, token.approvals)


def _listed(items: Sequence[str] | None) -> str | None:
    return None if items is None else names_json(items)


def token_record(row: Sequence[Any], moment: Callable[[Any], datetime | None]) -> TokenRecord:
    """A row of `TOKEN_COLUMNS` as a record; `moment` as for `stored_question`."""
    name, token_hash, created_at, last_used_at, revoked_at, role, groups, routes, notify = row[:9]
    deadline, escalate, remind, max_pending, rate, burst, approvals, lang = row[9:17]
    created = moment(created_at)
    assert created is not None  # created_at is NOT NULL in both schemas
    return TokenRecord(
        name=name,
        token_hash=token_hash,
        created_at=created,
        last_used_at=moment(last_used_at),
        revoked_at=moment(revoked_at),
        role=Role(role),
        groups=names(groups),
        routes=names(routes),
        notify=names(notify),
        deadline=None if deadline is None else int(deadline),
        escalate=escalations(escalate),
        remind=None if remind is None else int(remind),
        max_pending=None if max_pending is None else int(max_pending),
        rate=None if rate is None or burst is None else Rate(float(rate), int(burst)),
        lang=lang,
        approvals=int(approvals),
    )


def rule_record(row: Sequence[Any], moment: Callable[[Any], datetime | None]) -> RuleRecord:
    """A row of `RULE_COLUMNS` as a record; `moment` as for `stored_question`."""
    rule_id, tool, decision, created_at, command, path, domain, asker, cwd = row[:9]
    created_by, expires_at, hits, last_used_at, revoked_at, approvals = row[9:15]
    created = moment(created_at)
    assert created is not None  # created_at is NOT NULL in both schemas
    rule = Rule(
        tool=tool,
        decision=Decision(decision),
        created_at=created,
        command=command,
        path=path,
        domain=domain,
        asker=asker,
        cwd=cwd,
        created_by=created_by,
        expires_at=moment(expires_at),
        approvals=int(approvals),
    )
    return RuleRecord(int(rule_id), rule, int(hits), moment(last_used_at), moment(revoked_at))
