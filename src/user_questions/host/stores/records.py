"""The records a store keeps and the questions it answers: requests, settlements, tokens, history.

Plain frozen dataclasses, shared by the `Store` protocols (`stores/base.py`), both backends and
the hub; and `StoreStats`, the one mutable record, which a store keeps up to date for the host's
metrics.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from types import MappingProxyType
from typing import overload

from pydantic import TypeAdapter

from user_questions._lifecycle.disposer import Disposer
from user_questions._lifecycle.listeners import Listeners
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval, Origin
from user_questions.host.stores.audit_chain import canonical_json, card_digest
from user_questions.outcomes import Outcome, RequestState, Surface
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = [
    "AUDIT_PAGE",
    "FAULT_CODES",
    "NO_DETAILS",
    "QUESTIONS",
    "AuditRecord",
    "ChangeListener",
    "Checkpoint",
    "ChatMessage",
    "ChatPairing",
    "Decision",
    "Escalation",
    "HistoryPage",
    "HistoryQuery",
    "NewQuestion",
    "PushSubscription",
    "QuestionsText",
    "Settlement",
    "StoreStats",
    "StoredQuestion",
    "Tally",
    "Vote",
    "Rate",
    "Role",
    "Rule",
    "RuleRecord",
    "RulesListener",
    "RulesMoved",
    "Seal",
    "TokenChange",
    "TokenRecord",
    "TokensListener",
    "pending_record",
    "settled_record",
    "audit_time",
    "checkpoint_message",
    "stored_detail",
    "submitted_record",
]

logger = logging.getLogger("user_questions.host")

FAULT_CODES = frozenset({ErrorCode.STORE_UNAVAILABLE, ErrorCode.STORE_FULL, ErrorCode.STORE_BUSY})
"""The codes of a store that cannot do its work for now (its database, its disk): a refusal to
retry later, never a bug, and reported by the store once per fault."""

AUDIT_PAGE = 1000
"""Audit records read at a time (`AuditStore.audit_records`)."""
NO_DETAILS: Mapping[str, str] = MappingProxyType({})
"""The `rendered` details of a request without any (most): one shared empty mapping rather than
an empty dict for each pending request."""
QUESTIONS = TypeAdapter(list[AskUserQuestionItem])
"""The questions of a request as both backends store them: a JSON array."""


class QuestionsText(Sequence[AskUserQuestionItem]):
    """A stored request's questions, kept as their JSON text (`QUESTIONS`) and read into models
    each time they are used.

    A host holds every pending request; as models, a request's questions were about half of
    what it cost the host (a model's dict and field set for each question and option: 2 KB for
    one question of two options, against 0.2 KB of text). A pending request's questions are
    used when it is asked and answered, not while it waits, and reading them back takes about
    2 microseconds, so none is kept. The text is the record's `questions_json`, the same string.
    """

    __slots__ = ("json",)

    def __init__(self, json: str) -> None:
        self.json = json

    def _items(self) -> list[AskUserQuestionItem]:
        return QUESTIONS.validate_json(self.json)

    @overload
    def __getitem__(self, index: int) -> AskUserQuestionItem: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[AskUserQuestionItem]: ...
    def __getitem__(
        self, index: int | slice
    ) -> AskUserQuestionItem | Sequence[AskUserQuestionItem]:
        return self._items()[index]

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[AskUserQuestionItem]:
        return iter(self._items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to a list or tuple of the same models

    def __repr__(self) -> str:
        return f"QuestionsText({self.json!r})"


ChangeListener = Callable[[str | None], None]
"""Told that the request with this rpcId may have changed, or (`None`) that anything may have."""
TokensListener = Callable[[], None]
"""Told that the named tokens may have changed (one was added, changed or revoked)."""
RulesListener = Callable[[], None]
"""Told that the rules may have changed (one was added or revoked)."""


class RulesMoved(Exception):
    """`submit` wrote nothing: the rules moved past the version the request was decided under
    (`NewQuestion.rules_version`); decide it again from the rules as they are now."""


@dataclass(frozen=True, slots=True)
class Escalation:
    """One step of an asker token's `--escalate AFTER:TARGET`: a request it asked that is still
    pending `after` seconds after its asking is routed to `to` as well (a name or `@group`)."""

    after: int
    to: str


@dataclass(frozen=True, slots=True)
class Rate:
    """An asker token's `--rate PER_SECOND[:BURST]`: a token bucket that holds `burst` asks and
    fills at `per_second`; a new ask takes one, and is refused (`RATE_LIMITED`) when none is
    left. In a `TokenChange`, a `per_second` of 0 gives the token the host's default again."""

    per_second: float
    burst: int


@dataclass(frozen=True, slots=True)
class NewQuestion:
    """A request as an asker submits it."""

    rpc_id: str
    session_id: str
    questions: Sequence[AskUserQuestionItem]
    asked_at: datetime
    """When the request was first submitted (UTC); kept by the store on re-submission."""
    asked_by: str | None = None
    """The person whose token the asker presented, when it asked over the network."""
    shown_at: datetime | None = None
    """When it was handed to the pages, if some were connected as it was asked: recorded with
    the request, so that the common case costs no second write."""
    origin: Origin | None = None
    """Where the asker says the request comes from."""
    rendered: Mapping[str, str] = field(default_factory=dict)
    """Each question's `detail` as safe HTML, by question id (`host/markdown`): rendered once,
    before the request is stored, and kept with it."""
    audience: tuple[str, ...] = ()
    """Whose inbox it goes to, as its asker's token routed it: people by name, groups as
    `@group`; empty: every person and admin. Set when it is asked; only its escalation
    steps widen it later (`StoredQuestion.escalated`)."""
    approval: Approval | None = None
    """What it approves, when it is an approval card (a rule may settle it)."""
    deadline_at: datetime | None = None
    """When it ends as `timed-out` if still pending (its asker token's `--deadline`)."""
    settlement: Settlement | None = None
    """How it is settled as it is stored, when a rule decided it (`host/rules/`): never
    pending, so no host, page or notifier ever sees it as such."""
    escalate: tuple[Escalation, ...] = ()
    """Whom it is routed to as well while still pending, and when (its asker token's)."""
    remind: int | None = None
    """Seconds between the reminders its audience gets while it is pending (its asker token's)."""
    asker_rpc_id: str | None = None
    """The rpcId its asker knows it by, when the host keeps it under another (`rpc_id`): each
    asking token has rpcIds of its own, and another token had asked with that one first."""
    approvals: int = 1
    """An approval card's quorum: how many people must approve the same call before it is
    allowed (its asker token's, or the rule's that asked for it)."""
    rules_version: int | None = None
    """The rules' version (`RuleStore.rules_version`) the host decided its approval under: the
    store keeps it only if its rules are still at that version, in the same transaction, and
    otherwise writes nothing and raises `RulesMoved` (another process or node made or revoked
    a rule since); `None`: stored whatever the rules (a plain question, a host without rules)."""
    rules_used: tuple[int, ...] = ()
    """The ids of the rules that settled it (`settlement`): each one's `hits` and
    `last_used_at` are counted in the same transaction as the record."""
    questions_json: str = field(init=False, repr=False, compare=False)
    """`questions` as JSON text (`QUESTIONS`), made once here: the store writes it, and the
    pages' `question/requested` frame embeds it as it is."""
    digest: str = field(init=False, repr=False, compare=False)
    """The card's digest (`audit_chain.card_digest`), made once here: the store keeps it, the
    pages are shown it and send it back with their answer."""

    def __post_init__(self) -> None:
        text = QUESTIONS.dump_json(list(self.questions)).decode()
        object.__setattr__(self, "questions_json", text)
        approval = None if self.approval is None else self.approval.model_dump_json()
        object.__setattr__(self, "digest", card_digest(text, approval))


@dataclass(frozen=True, slots=True)
class Settlement:
    """How a pending request ends."""

    outcome: Outcome
    answer: AskUserQuestionAnswer | None = None
    """The checked answer, when the outcome is `answered`."""
    via: Surface | None = None
    """The surface that settled it."""
    by: str | None = None
    """The person who settled it: the name of the token presented (`owner` for the host's
    start-up token); `None` when no token was involved (an in-process asker, an answer link)."""
    channel: str | None = None
    """An answer link's only: the notification channel the link was sent through (`ntfy`,
    `mailto`, ...)."""
    note: str | None = None
    """A withdrawal's only: why its asker withdrew it, in the asker's words (`uq acp`: what the
    editor answered)."""
    seen: str | None = None
    """The card's digest the answer or dismissal carried back (what its person was shown),
    when it carried one; recorded in the audit log."""

    @property
    def detail(self) -> str | None:
        """What a store keeps in the request's `channel` column: the link's channel or the
        withdrawal's note. One column serves both, since a request settled through a link is
        answered or dismissed, never withdrawn (`stored_detail` reads it back)."""
        return self.channel if self.note is None else self.note


@dataclass(frozen=True, slots=True)
class Vote:
    """One person's approval of a call, in a pending request that needs a quorum."""

    rpc_id: str
    person: str
    """The approver's token name: one person however many pages and chats they approve from."""
    call: str
    """The call approved, as canonical JSON (`audit_chain.canonical_json`): the request's own,
    or the one a person changed it to; votes for different calls are counted apart."""
    via: Surface
    at: datetime

    @property
    def digest(self) -> str:
        """The call's SHA-256, which the store counts votes by."""
        return hashlib.sha256(self.call.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Tally:
    """Where a quorum stands after a vote: who approved the voted call so far, oldest first,
    of how many needed; whether the vote was new (a person's second approval is not); and the
    request, settled allowed, when this vote completed the quorum."""

    people: tuple[str, ...]
    needed: int
    counted: bool
    settled: StoredQuestion | None = None


@dataclass(frozen=True, slots=True)
class StoredQuestion:
    """A request as the store holds it."""

    rpc_id: str
    session_id: str
    questions: Sequence[AskUserQuestionItem]
    """As a store makes it, a `QuestionsText` over `questions_json`."""
    asked_at: datetime
    state: RequestState
    answer: AskUserQuestionAnswer | None = None
    settled_at: datetime | None = None
    settled_via: Surface | None = None
    asked_by: str | None = None
    shown_at: datetime | None = None
    """When a host first handed it to a page (or listed it through `GET /api/pending`)."""
    settled_by: str | None = None
    origin: Origin | None = None
    channel: str | None = None
    """Settled through an answer link only: the notification channel that carried the link."""
    note: str | None = None
    """Withdrawn or timed out only: why, in its asker's words (`Settlement.note`)."""
    rendered: Mapping[str, str] = field(default_factory=dict)
    """Each question's `detail` as safe HTML, by question id, as rendered when it was stored."""
    audience: tuple[str, ...] = ()
    """Whose inbox it goes to (`NewQuestion.audience`); empty: every person and admin."""
    approval: Approval | None = None
    """What it approves, when it is an approval card (`NewQuestion.approval`)."""
    deadline_at: datetime | None = None
    """When it times out if still pending (`NewQuestion.deadline_at`)."""
    escalate: tuple[Escalation, ...] = ()
    """Its escalation steps (`NewQuestion.escalate`), of which the first `escalated` fired."""
    escalated: int = 0
    """How many of `escalate` have fired: their targets are in `audience` now."""
    remind: int | None = None
    """Seconds between its reminders (`NewQuestion.remind`)."""
    reminded_at: datetime | None = None
    """When its audience was last reminded of it; `None`: never yet."""
    asker_rpc_id: str | None = None
    """The rpcId its asker knows it by, when not `rpc_id` (`NewQuestion.asker_rpc_id`)."""
    approvals: int = 1
    """Its quorum (`NewQuestion.approvals`)."""
    questions_json: str | None = field(default=None, repr=False, compare=False)
    """`questions` as JSON text, as the store holds them, when the record was read from the
    store or just written to it; the pages' frame embeds it rather than serialise the questions
    again (with many pending requests, that is most of a host's start)."""
    digest: str | None = field(default=None, compare=False)
    """The card's digest as the store keeps it (`NewQuestion.digest`); `None` for a record made
    outside a store (`card`)."""

    @property
    def card(self) -> str:
        """The card's digest: as kept, else computed from the questions and the approval."""
        if self.digest is not None:
            return self.digest
        questions = self.questions_json or QUESTIONS.dump_json(list(self.questions)).decode()
        approval = None if self.approval is None else self.approval.model_dump_json()
        return card_digest(questions, approval)

    @property
    def own_rpc_id(self) -> str:
        """The rpcId its asker knows it by (what the asker's replies carry)."""
        return self.asker_rpc_id or self.rpc_id

    @property
    def pending(self) -> bool:
        """Whether nobody has answered, dismissed or withdrawn it yet."""
        return self.state == RequestState.PENDING

    @property
    def outcome(self) -> Outcome | None:
        """How it ended; `None` while pending."""
        return _OUTCOMES[self.state]  # read several times per request: a lookup, not an enum call


_OUTCOMES = {state: state.outcome for state in RequestState}
_WITHDRAWALS = frozenset({RequestState.WITHDRAWN, RequestState.TIMED_OUT})


def stored_detail(state: RequestState, detail: str | None) -> tuple[str | None, str | None]:
    """A request's `channel` column as written (`Settlement.detail`), read back as its channel
    and its note: a withdrawal's is its note, any other request's its link's channel."""
    return (None, detail) if state in _WITHDRAWALS else (detail, None)


def pending_record(question: NewQuestion) -> StoredQuestion:
    """The record of `question` as a store keeps it once submitted: pending."""
    return StoredQuestion(
        question.rpc_id,
        question.session_id,
        QuestionsText(question.questions_json),
        question.asked_at,
        RequestState.PENDING,
        asked_by=question.asked_by,
        shown_at=question.shown_at,
        origin=question.origin,
        rendered=question.rendered or NO_DETAILS,
        audience=question.audience,
        approval=question.approval,
        deadline_at=question.deadline_at,
        escalate=question.escalate,
        remind=question.remind,
        asker_rpc_id=question.asker_rpc_id,
        approvals=question.approvals,
        questions_json=question.questions_json,
        digest=question.digest,
    )


def submitted_record(question: NewQuestion) -> StoredQuestion:
    """The record of `question` as a store keeps it once submitted: pending, or settled as it
    was stored (`NewQuestion.settlement`, at its asked time)."""
    record = pending_record(question)
    if question.settlement is None:
        return record
    return settled_record(record, question.settlement, question.asked_at, None)


def settled_record(
    pending: StoredQuestion,
    settlement: Settlement,
    settled_at: datetime,
    shown_at: datetime | None,
) -> StoredQuestion:
    """The record of the request `pending` once `settlement` settled it at `settled_at` (and
    its first-shown time as the store has it): what a store returns from `settle` when the
    caller holds the pending record, instead of reading back and parsing the whole row again.
    A request's questions, session, asked time, asker, origin and details never change once
    stored, so they are taken from `pending`."""
    # Made field by field rather than with `dataclasses.replace`, which costs several times as
    # much on every answer; the store contract tests compare it with the record read back.
    return StoredQuestion(
        rpc_id=pending.rpc_id,
        session_id=pending.session_id,
        questions=pending.questions,
        asked_at=pending.asked_at,
        state=RequestState(settlement.outcome),
        answer=settlement.answer,
        settled_at=settled_at,
        settled_via=settlement.via,
        asked_by=pending.asked_by,
        shown_at=shown_at,
        settled_by=settlement.by,
        origin=pending.origin,
        channel=settlement.channel,
        note=settlement.note,
        rendered=pending.rendered,
        audience=pending.audience,
        approval=pending.approval,
        deadline_at=pending.deadline_at,
        escalate=pending.escalate,
        escalated=pending.escalated,
        remind=pending.remind,
        reminded_at=pending.reminded_at,
        asker_rpc_id=pending.asker_rpc_id,
        approvals=pending.approvals,
        questions_json=pending.questions_json,
        digest=pending.digest,
    )


class Role(StrEnum):
    """What a token may do, decided by the host from the token alone (`host/gate/roles.py`)."""

    ASKER = "asker"
    """An agent or a program: asks, re-attaches, withdraws and reads its own requests."""
    PERSON = "person"
    """Answers what is routed to them, and reads the history of it; may ask too."""
    ADMIN = "admin"
    """Everything: sees and answers every request, manages tokens and routes."""


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """A named token, as the store keeps it: the token itself is never stored."""

    name: str
    token_hash: str
    """The SHA-256 of the token, in hexadecimal."""
    created_at: datetime
    last_used_at: datetime | None = None
    """Approximate: a host records a use at most once a minute per token."""
    revoked_at: datetime | None = None
    role: Role = Role.PERSON
    """What the token may do; tokens made before roles existed are people."""
    groups: tuple[str, ...] = ()
    """A person's or an admin's groups (`uq token add --group`), which routes name as `@group`."""
    routes: tuple[str, ...] = ()
    """An asker's: whose inbox its questions go to (names, `@group`s); empty: everyone's."""
    notify: tuple[str, ...] = ()
    """A person's own notification URLs (apprise), beside the host-wide `--notify`."""
    deadline: int | None = None
    """An asker's: seconds after which a request it asked, still pending, ends as `timed-out`."""
    escalate: tuple[Escalation, ...] = ()
    """An asker's: whom a request it asked, still pending, is routed to as well, and when."""
    remind: int | None = None
    """An asker's: seconds between reminders of a request it asked, while it is pending."""
    max_pending: int | None = None
    """An asker's: how many of its requests may be pending at once; `None`: the default."""
    rate: Rate | None = None
    """An asker's: how fast it may ask; `None`: the default."""
    lang: str | None = None
    """A person's own language (a catalog's code: `ko`, `zh_Hans`, `ja`, `en`) for their chats
    and notifications; `None`: the host's."""
    approvals: int = 1
    """An asker's: how many people must approve each call it asks about (a quorum)."""

    @property
    def active(self) -> bool:
        """Whether the token still opens the host."""
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class TokenChange:
    """What a token may do, as `uq token add|change`, `POST|PATCH /api/tokens` and `uq hook
    install` give it: a field left `None` keeps what a token has (a new token: role `person`,
    nothing else). `deadline` and `remind` are seconds, 0 taking them away; `max_pending` 0 and
    a `rate` of 0 per second give back the host's default; `lang` "" gives back the host's
    language; `escalate` and the lists replace the ones a token has."""

    role: Role | None = None
    groups: Sequence[str] | None = None
    routes: Sequence[str] | None = None
    notify: Sequence[str] | None = None
    deadline: int | None = None
    escalate: Sequence[Escalation] | None = None
    remind: int | None = None
    max_pending: int | None = None
    rate: Rate | None = None
    lang: str | None = None
    approvals: int | None = None


@dataclass(frozen=True, slots=True)
class ChatPairing:
    """A chat user who answers as a person (`uq chat pair`): authority comes from this row,
    never from what a message says."""

    service: str
    """`telegram` or `slack`."""
    user: str
    """The user's id in the service: whose taps and replies count."""
    chat: str
    """The chat the person's questions are sent to (Telegram: the private chat's id)."""
    person: str
    """The token name the user answers as."""
    paired_at: datetime


@dataclass(frozen=True, slots=True)
class PushSubscription:
    """A browser that gets a person's questions by Web Push (`host/notify/web_push.py`): what
    its `PushSubscription.toJSON()` said, and the hash of the secret its service worker answers
    with. The endpoint is unique: a browser that subscribes again replaces its row."""

    id: str
    """A random id: how the person lists and removes it, and how its worker names it."""
    person: str
    """The token name it was registered with: whose requests it gets, who its taps answer as."""
    endpoint: str
    """The push service's URL for this browser (https, or http on a loopback address)."""
    p256dh: str
    """The browser's P-256 public key, URL-safe base64 (RFC 8291)."""
    auth: str
    """The browser's 16-byte authentication secret, URL-safe base64 (RFC 8291)."""
    secret_hash: str
    """The SHA-256 (hex) of the secret its service worker presents to answer (never the
    secret itself)."""
    device: str
    """What the browser said it is (its User-Agent, cut short), so a person can tell theirs
    apart."""
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message sent for a request into one chat, as its buttons refer to it."""

    ref: str
    """A random reference, unique among all messages: the buttons carry it, so a button of
    another request (or another chat) can never be taken for one of this message."""
    rpc_id: str
    service: str
    chat: str
    message: str
    """The service's id of the message, to edit it when the request settles."""
    draft: str = "{}"
    """JSON: the answer built so far (which question is shown, the options toggled)."""
    digest: str | None = None
    """The digest of the card the message shows (`StoredQuestion.card`), sent back with each
    press: an answer to a card that is not the stored one is refused."""


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """Which settled requests to list, newest settled first; every filter given must match.

    With `pending`, the requests still pending are listed too, and every request is ordered
    and paged by when it last changed (settled, else asked): A2A's `ListTasks`.
    """

    session: str | None = None
    """Only this session's requests."""
    session_prefix: str | None = None
    """Only requests whose session begins with this (`a2a:`: the tasks asked over A2A)."""
    outcome: Outcome | RequestState | None = None
    """Only requests that ended this way (`RequestState.PENDING`, with `pending`: only the
    requests still pending)."""
    asked_by: str | None = None
    """Only requests asked with this token (its name)."""
    pending: bool = False
    """List pending requests too, newest change first (see the class)."""
    changed_after: datetime | None = None
    """Only requests that last changed (settled, or with `pending` else asked) at or after this
    instant."""
    count: bool = False
    """Count every request the filters match, on all pages (`HistoryPage.total`)."""
    by: str | None = None
    """Only requests settled by this person."""
    terms: tuple[str, ...] = ()
    """Casefolded words that must all occur in a request's text: its questions' headers, texts,
    details, option labels and descriptions, its forms' titles, and what its answer says (custom
    text, notes, a form's value, a changed call)."""
    edited: bool = False
    """Only approvals a person allowed with changes (an answer's `edited`)."""
    before: str | None = None
    """A cursor (`HistoryPage.next`): only requests settled before the last one of that page."""
    limit: int = 50
    seen_by: tuple[str, ...] | None = None
    """Only requests routed to one of these (a person's name and `@group` for each of their
    groups) or to everyone (an empty audience); `None`: every request (an admin's view)."""


@dataclass(slots=True)
class StoreStats:
    """What befell a store since it was opened, and what is wrong with it now.

    The host's `uq_store_errors_total` and `uq_store_reconnects_total`, and its fault: a store
    calls `failed(fault)` for each operation that fails, `lost(fault)` when it learns its
    database is out of reach (a connection it keeps drops, a file it holds is gone), and
    `back()` whenever it works again. The start and the end of a fault are logged once each
    (never a line per refused request), and told to the `on_fault` listeners: the host says
    why it is not ready (`GET /readyz`) and lets its askers fail over.
    """

    errors: int = 0
    """Operations that failed because the database could not be reached or refused them."""
    reconnects: int = 0
    """Times the store got its database back after losing it: once per outage, whichever
    connection comes back first (SQLite: once per fault of its file or its disk)."""
    down: bool = False
    """Whether the database has been lost and not come back yet."""
    fault: UserQuestionError | None = field(default=None, compare=False)
    """Why it is down (`STORE_UNAVAILABLE`, `STORE_FULL`, `STORE_BUSY`), while it is."""
    url: str = field(default="", compare=False)
    """The store, as the log lines name it."""
    open: bool = field(default=False, compare=False)
    """Set once the store is open: a fault met while opening is the opener's to report (`uq
    serve` exits with one line), not logged here."""
    shared: bool = field(default=False, compare=False)
    """Whether other hosts share the database (PostgreSQL), so that while this one cannot
    reach it, its askers may go to another (the host tells them so)."""
    _since: float = field(default=0.0, compare=False)
    _listeners: Listeners[[UserQuestionError | None]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._listeners = Listeners(
            logger, lambda _: f"a fault listener of {self.url or 'the store'} raised"
        )

    def failed(self, fault: UserQuestionError | None = None) -> None:
        self.errors += 1
        self.lost(fault)

    def lost(self, fault: UserQuestionError | None = None) -> None:
        """The store is out of service: log `fault` unless it is the one already reported."""
        self.down = True
        if fault is None or (self.fault is not None and self.fault.code == fault.code):
            return
        if self.fault is None:
            self._since = time.monotonic()
        self.fault = fault
        if not self.open:
            return
        logger.warning("store fault, refusing with %s until it clears: %s", fault.code, fault)
        self._listeners.tell(fault)

    def check(self) -> None:
        """Raise the fault while there is one (a new exception each time)."""
        if self.fault is not None:
            raise UserQuestionError(self.fault.message, self.fault.code)

    def back(self, how: str = "") -> None:
        """The store works again (`how`: what the store did to make it so, for the log)."""
        if not self.down:
            return
        self.down = False
        self.reconnects += 1
        fault, self.fault = self.fault, None
        if fault is not None and self.open:
            seconds = time.monotonic() - self._since
            logger.warning(
                "store fault cleared after %.1f s: %s works again (was %s)%s",
                seconds,
                self.url or "the store",
                fault.code,
                f"; {how}" if how else "",
            )
            self._listeners.tell(None)

    def on_fault(self, listener: Callable[[UserQuestionError | None], None]) -> Disposer:
        """Call `listener` with each new fault, and with `None` when it clears."""
        return self._listeners.add(listener)


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of history."""

    records: list[StoredQuestion]
    next: str | None
    """The cursor of the following page; `None` when this is the last one. A cursor stays
    valid: requests settled later never shift the pages after it (with `pending`, a request
    that settles moves to the top, above the cursor)."""
    total: int | None = None
    """How many requests the filters match on all pages, when the query asked (`count`)."""


class Decision(StrEnum):
    """What a rule decides about the approvals it matches."""

    ALLOW = "allow"
    DENY = "deny"


@dataclass(frozen=True, slots=True)
class Rule:
    """A remembered decision, as a person or an admin makes it (`host/rules/` matches it).

    At most one of `command`, `path` and `domain` is set; none: every call of the tool.
    """

    tool: str
    """The tool's name as agents call it (`Bash`, `Read`, `mcp__github__create_pr`); `*` (deny
    only): every tool."""
    decision: Decision
    created_at: datetime
    command: str | None = None
    """Shell tools: a prefix of whole words of the command (`git status`)."""
    path: str | None = None
    """File tools: an absolute glob the call's resolved path must match (`/home/dev/shop/**`)."""
    domain: str | None = None
    """Web tools: the URL's host (`example.com`; `*.example.com` for its subdomains too)."""
    asker: str | None = None
    """Only requests asked with this token (its name)."""
    cwd: str | None = None
    """Only calls in this folder or one below it."""
    created_by: str | None = None
    """The person (a token's name) who made it."""
    expires_at: datetime | None = None
    """When it stops matching, if it does."""
    approvals: int = 1
    """An allow rule's: how many people must approve a matching call; above 1 the rule does
    not allow it outright, it asks for that quorum."""


@dataclass(frozen=True, slots=True)
class RuleRecord:
    """A rule as the store keeps it: its id, how often it decided, whether it was revoked."""

    id: int
    rule: Rule
    hits: int = 0
    """How many requests it settled."""
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None

    def active(self, now: datetime) -> bool:
        """Whether it matches at `now`: neither revoked nor expired."""
        expires = self.rule.expires_at
        return self.revoked_at is None and (expires is None or now < expires)


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One record of the audit log (`audit_chain`): the `seq`-th event, its canonical `body`, the
    hash of the record before it and its own."""

    seq: int
    prev: str
    hash: str
    body: str

    def line(self) -> str:
        """The record as one line of an export: its body's fields with `seq`, `prev`, `hash`."""
        fields = json.loads(self.body)
        return canonical_json({**fields, "seq": self.seq, "prev": self.prev, "hash": self.hash})


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The host's signature over the chain as it stood: record `seq` had hash `hash` at `at`.
    `pruned`: the records up to `seq` were deleted (`--retain-days`) and the chain goes on from
    this hash. `key` is the signer's public key, `signature` Ed25519's over `message`, both
    base64."""

    seq: int
    hash: str
    at: datetime
    pruned: bool
    key: str
    signature: str

    @property
    def message(self) -> str:
        """What is signed: canonical JSON of `at`, `hash`, `pruned` and `seq`."""
        return checkpoint_message(self.seq, self.hash, self.at, self.pruned)


def checkpoint_message(seq: int, hash: str, at: datetime, pruned: bool) -> str:
    """The text a checkpoint signs (its UTF-8): `{"at":...,"hash":...,"pruned":...,"seq":...}`."""
    return canonical_json({"at": audit_time(at), "hash": hash, "pruned": pruned, "seq": seq})


def audit_time(moment: datetime) -> str:
    """A UTC instant as the audit log writes it: ISO 8601 with microseconds and `+00:00`."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


Seal = Callable[[int, str], Checkpoint]
"""Signs a pruning checkpoint at record `seq` of hash `hash` (`HistoryStore.purge`)."""
