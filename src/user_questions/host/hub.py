"""The hub: pending requests, fan-out to pages, first answer wins.

The store is the source of truth; the hub keeps a cache of the pending requests (each with its
`question/requested` frame serialised once) so that a page that connects gets them replayed at
once. Every change goes through the store first and reaches the cache through `_apply`, the one
place that updates it, announces it to the pages and releases the askers waiting on it:

- `submit` checks a request with the service's request checks, renders its details once (off
  the event loop, within a budget: `markdown.render_details`), stores it (idempotently: the same
  rpcId re-attaches), then shows it;
- `respond` checks a page's answer with the service's answer checks (and the request's session,
  when the response names one), then settles it with the store's conditional update: of two
  answers at once exactly one wins;
- `withdraw` settles a request for an asker that gave up (abort, timeout, cancellation).

Each settlement records the surface (`via`) and the person (`by`, a token's name). Handing the
pending requests to a page (`subscribe`) records them as shown; so does `record_shown()`, which
whoever lists `pending_frames()` to a person calls. The shown times are written in the
background (`shown.ShownRecorder`), never delaying a page.

When the store reports that another host changed something (`Store.on_change`), the hub re-reads
what changed and applies it the same way, so pages and askers on every host see every request.

`on_event` listeners (notifications) hear of the changes this host wrote itself: a request it
stored as new, a settlement it won. Each write has exactly one writer among the hosts sharing a
store, so every event is reported by exactly one host. The hub's `metrics` (`HostMetrics`) is
one such listener, and reads the number of pending requests from the hub.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import logging
import math
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from user_questions._approval_card import host_card_fields
from user_questions._checks import check_answer, check_request, quoted, usable_id
from user_questions._disposer import Disposer, nothing
from user_questions._lifetime import AsyncLifetime
from user_questions._text import text_problem
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import (
    MAX_FRAME_BYTES,
    MAX_ID_LENGTH,
    Approval,
    ClientResponse,
    ErrorResult,
    Origin,
    Receipt,
    WithdrawReason,
)
from user_questions.host._collector import collector_paused
from user_questions.host._frame_text import requested_frame, resolved_frame
from user_questions.host.gate.people import People
from user_questions.host.gate.roles import rule_refusal
from user_questions.host.markdown import render_details
from user_questions.host.rules import (
    RULE_PREFIX,
    Match,
    Rules,
    Verdict,
    answered_decision,
    offered_rule,
    rule_answer,
    rule_text,
)
from user_questions.host.shown import ShownRecorder
from user_questions.host.stores import (
    Decision,
    Escalation,
    NewQuestion,
    QuestionStore,
    Rule,
    Settlement,
    StoredQuestion,
    pending_record,
)
from user_questions.host.telemetry.metrics import HostMetrics
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem

__all__ = [
    "MAX_CLIENT_BACKLOG",
    "MAX_PENDING",
    "RENDER_WORKERS",
    "RoutedListener",
    "EventListener",
    "HostTask",
    "Hub",
    "PageSubscription",
    "Sees",
    "Watcher",
]

logger = logging.getLogger("user_questions.host")

MAX_PENDING = 50_000
"""Pending requests on one host; a new one beyond it is refused with `TOO_MANY_PENDING`."""
RENDER_WORKERS = 2
"""Worker threads rendering details at once; more requests wait for one (within their budget)."""
MAX_CLIENT_BACKLOG = 100_000
"""Frames queued for one page; a page that falls further behind is disconnected (it reconnects
and gets every pending request replayed)."""
_SETTLED_MEMORY = 1024
"""Recently settled requests remembered, so that a re-attachment or a late frame racing a
settlement is answered without a store read and never revives the request."""

Sees = Callable[[StoredQuestion], bool]
"""Whether a page (or a client of the HTTP API) may see a request (`host/gate/roles.py`);
`None` where one is expected: it sees every request."""
Watcher = Callable[[StoredQuestion], None]
"""Called once, on the event loop, with the settled record of the request it watches."""
RoutedListener = Callable[[StoredQuestion, tuple[str, ...]], None]
"""Told, on the event loop, that this host has just routed a pending request to people again:
the target an escalation step added, or its whole audience for a reminder (empty: everyone).
Of the hosts sharing a store only the one whose step or reminder won tells."""
EventListener = Callable[[StoredQuestion], None]
"""Told, on the event loop, of a request this host has just committed as new (pending) or as
settled; it must not block (a notifier only enqueues)."""
HostTask = Callable[["Hub"], Coroutine[Any, Any, None]]
"""Work run beside the host for as long as it serves, such as an in-process agent or the
notifiers (`create_app(tasks=...)`)."""


@dataclass(eq=False, slots=True)
class _Entry:
    record: StoredQuestion
    frame: str
    """The `question/requested` frame, serialised once and replayed to every page."""
    watchers: list[Watcher] = field(default_factory=list)
    shown: bool = False
    """Whether its first-shown time is recorded (or being recorded)."""
    routing_at: datetime | None = None
    """When its next escalation step or reminder is timed for (in `Hub._routing`)."""


@dataclass(eq=False, slots=True)
class PageSubscription:
    """What a page gets on connect: the pending requests' frames, then every later frame.

    `frames` ends when the hub drops the page (too far behind) or stops.
    """

    snapshot: list[str]
    frames: MemoryObjectReceiveStream[str]
    _send: MemoryObjectSendStream[str]
    _leave: Callable[[PageSubscription], None]
    """Tells the hub to stop sending to this page."""
    _sees: Sees | None
    """Which requests' frames this page gets; `None`: all of them."""

    def close(self) -> None:
        """Stop following; idempotent."""
        self._leave(self)
        self._send.close()
        self.frames.close()


class Hub(AsyncLifetime):
    """The pending requests of one host, over its store; use as `async with Hub(store) as hub`.

    `metrics` counts what the hub commits (a new `HostMetrics` by default); the host's
    connections and notifiers report to it too, and `GET /metrics` renders it.
    """

    def __init__(
        self,
        store: QuestionStore,
        *,
        metrics: HostMetrics | None = None,
        rules: Rules | None = None,
        people: People | None = None,
    ) -> None:
        self.store = store
        self.rules = rules
        """The rules that settle approval requests before anyone sees them; `None`: none."""
        self.people = people
        """Who may answer: a rule a winning answer asks for is made only when the person who
        answered may make it (`roles.rule_refusal`); `None`: everyone in this process may."""
        self.metrics = metrics or HostMetrics()
        self.metrics.watch_pending(lambda: len(self._entries), self._oldest_asked)
        self._entries: dict[str, _Entry] = {}
        self._settled: OrderedDict[str, StoredQuestion] = OrderedDict()
        self._pages: set[PageSubscription] = set()
        self._changes_in, self._changes = anyio.create_memory_object_stream[str | None](math.inf)
        self._shown = ShownRecorder(store)
        self._listeners: list[EventListener] = []
        self._rendering = anyio.CapacityLimiter(RENDER_WORKERS)
        self._routed: list[RoutedListener] = []
        self._deadlines = _Timetable("time out")
        """When each pending request's deadline passes."""
        self._routing = _Timetable("escalate or remind of")
        """When each pending request's next escalation step or reminder is due."""

    def __repr__(self) -> str:
        return f"<Hub {len(self._entries)} pending>"

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        stack.callback(self._changes.close)
        stack.callback(self._changes_in.close)
        # Heard before the first read: a change another host commits from now on is queued
        # until `_follow_store` runs, and one committed before is in the read.
        stack.callback(self.store.on_change(self._changes_in.send_nowait))
        await self._load()
        stack.callback(self._shown.close)
        following = await stack.enter_async_context(anyio.create_task_group())
        following.start_soon(self._follow_store)
        following.start_soon(self._shown.run)
        following.start_soon(self._deadlines.run, self._time_out)
        following.start_soon(self._routing.run, self._route)
        stack.callback(following.cancel_scope.cancel)
        stack.callback(self._drop_pages)
        stack.callback(self.on_event(self.metrics.committed))

    def _oldest_asked(self) -> datetime | None:
        return min((entry.record.asked_at for entry in self._entries.values()), default=None)

    @property
    def pending_count(self) -> int:
        """How many requests are pending (as far as this host knows)."""
        return len(self._entries)

    def pending_frames(self, sees: Sees | None = None) -> list[str]:
        """The `question/requested` frame of every pending request `sees` accepts, oldest
        first. Reading them records nothing: whoever shows them to a person calls
        `record_shown()`."""
        if sees is None:
            return [entry.frame for entry in self._entries.values()]
        return [entry.frame for entry in self._entries.values() if sees(entry.record)]

    def own_frames(self, sees: Sees) -> list[str]:
        """`pending_frames` for an asker listing its own: each under the rpcId it knows it by."""
        return [
            entry.frame
            if entry.record.asker_rpc_id is None
            else requested_frame(entry.record, self._offer(entry.record), own=True)
            for entry in self._entries.values()
            if sees(entry.record)
        ]

    def record_shown(self, sees: Sees | None = None) -> None:
        """Record (in the background) that every pending request `sees` accepts has just been
        shown; one shown before keeps its first time."""
        entries = self._entries.values()
        self._show(entries if sees is None else [e for e in entries if sees(e.record)])

    def on_event(self, listener: EventListener) -> Disposer:
        """Call `listener` after this host commits a new request or wins a settlement.

        Changes written by other hosts on the same store are theirs to report; a request
        re-attached or replayed after a restart is not new. Returns a remover.
        """
        self._listeners.append(listener)
        return lambda: _discard(self._listeners, listener)

    def on_routed(self, listener: RoutedListener) -> Disposer:
        """Call `listener` when this host routes a pending request to people again (an
        escalation step, a reminder: `RoutedListener`). Returns a remover."""
        self._routed.append(listener)
        return lambda: _discard(self._routed, listener)

    # -- askers -------------------------------------------------------------------------------

    async def submit(
        self,
        rpc_id: str,
        session_id: str,
        questions: Sequence[AskUserQuestionItem],
        *,
        watcher: Watcher | None = None,
        asked_by: str | None = None,
        origin: Origin | None = None,
        audience: tuple[str, ...] = (),
        approval: Approval | None = None,
        deadline: float | None = None,
        escalate: Sequence[Escalation] = (),
        remind: int | None = None,
    ) -> tuple[StoredQuestion, Disposer]:
        """Store and show a request, or re-attach to the one this asker asked with this rpcId;
        `asked_by` is the person whose token the asker presented, `origin` where the asker says
        it comes from and `audience` whom it is routed to (both kept from the first submission:
        a re-attachment does not change them). Each asking token has rpcIds of its own: one
        another token asked with first is kept under another (`StoredQuestion.asker_rpc_id`),
        so no answer tells an asker that another's request exists. `approval` says what an
        approval card approves: the host writes the card a person sees from it
        (`_approval_card.host_card_fields`), and a new one a rule decides is settled by it
        (`via` `rule`, `by` `rule:<id>`) before any page or notifier hears of it.
        `deadline` (seconds, the asker token's) ends it as `timed-out` if still pending then,
        on whichever host sharing the store gets there first (the store's settle decides).
        `escalate` (the asker token's steps) routes it to each step's target as well once it
        has been pending that long, and `remind` (seconds) reminds its audience every so often
        while it is pending; the store decides which host fires each.

        Returns the request as it is now and a function that stops `watcher`. When the request
        is pending, `watcher` is called once it settles; when it has already settled (answered
        while its asker was away), the record says how and `watcher` is never called.

        Raises:
            UserQuestionError: `BAD_REQUEST` (an id too long or not text, an origin not text,
                an rpcId this asker used for another request, an approval with more than one
                question), `TOO_MANY_PENDING`, `REQUEST_TOO_LARGE` (its frame would not fit in
                `MAX_FRAME_BYTES`), or the request checks of `ask()` (`EMPTY_QUESTIONS`,
                `BAD_INTENT`, `BAD_QUESTION`, `TOO_MANY_QUESTIONS`, `LIMIT_EXCEEDED`).
        """
        questions = _checked_ask(rpc_id, session_id, origin, questions, approval)
        asking = _Asking(rpc_id, session_id, questions, asked_by, origin, audience, approval)
        for stored_id in _stored_ids(rpc_id, asked_by):
            known = self._known(stored_id)
            if known is None and len(self._entries) >= MAX_PENDING:
                known = await self.store.get(stored_id)  # a re-attachment is never refused
                if known is None:
                    raise UserQuestionError(
                        f"the host already has {MAX_PENDING} pending questions; answer or "
                        "dismiss some first",
                        ErrorCode.TOO_MANY_PENDING,
                    )
            if known is None:
                new = await self._card(asking, deadline, escalate, remind, stored_id)
                known, created = await self.store.submit(new.question)
                if created and new.decided is not None:
                    await self._settled_by_rule(new.question, known, new.decided[0])
                    return known, nothing
                if created:
                    self._apply(known, new.frame)
                    self._committed(known)
                    return self._watch(known, watcher)
            if not asking.asked_as(known):
                continue  # another token's: this asker's request is kept under another id
            # Decided before anything is applied or reported: a mismatch changes nothing here.
            _check_same_request(known, asking)
            self._apply(known)
            return self._watch(self._known(known.rpc_id) or known, watcher)
        raise _taken(rpc_id)

    def _watch(
        self, known: StoredQuestion, watcher: Watcher | None
    ) -> tuple[StoredQuestion, Disposer]:
        entry = self._entries.get(known.rpc_id)
        if entry is None or watcher is None:
            return known, nothing
        entry.watchers.append(watcher)
        return known, lambda: _discard(entry.watchers, watcher)

    async def own(self, rpc_id: str, asked_by: str | None) -> StoredQuestion | None:
        """The request the asker of token `asked_by` knows by `rpc_id`, `None` if none."""
        if usable_id(rpc_id) is None:
            return None
        for stored_id in _stored_ids(rpc_id, asked_by):
            known = self._known(stored_id) or await self.store.get(stored_id)
            if known is None:
                return None
            if known.asked_by == asked_by and known.own_rpc_id == rpc_id:
                return known
        return None

    async def withdraw(
        self,
        rpc_id: str,
        *,
        via: Surface,
        by: str | None = None,
        reason: WithdrawReason | None = None,
        note: str | None = None,
        sees: Sees | None = None,
    ) -> StoredQuestion | None:
        """Settle a pending request as withdrawn (`timed-out` when that is the `reason`), with
        the asker's `note` saying why; the request as it ends up, `None` if unknown, or not one
        `sees` accepts (an asker withdraws only what it asked)."""
        if usable_id(rpc_id) is None:  # no request can have it: never ask the store about it
            return None
        outcome = Outcome.TIMED_OUT if reason == "timed-out" else Outcome.WITHDRAWN
        entry = self._entries.get(rpc_id)
        pending = None if entry is None else entry.record
        if sees is not None:
            known = pending or self._settled.get(rpc_id) or await self.store.get(rpc_id)
            if known is None or not sees(known):
                return None
        settlement = Settlement(outcome, via=via, by=by, note=note)
        won = await self.store.settle(rpc_id, settlement, pending=pending)
        settled = won or self._settled.get(rpc_id) or await self.store.get(rpc_id)
        if settled is not None:
            self._apply(settled)
        if won is not None:
            self._committed(won)
        return settled

    async def decide(
        self,
        rpc_id: str,
        session_id: str,
        questions: Sequence[AskUserQuestionItem],
        approval: Approval,
        *,
        asked_by: str | None = None,
        origin: Origin | None = None,
        audience: tuple[str, ...] = (),
    ) -> StoredQuestion | None:
        """Settle a new approval request by the rules alone: the request as the rule that
        decided it settled it, or `None` when no rule decides it, and nothing is stored (a
        person must be asked: `submit`). The quick path of a hook that sits in front of every
        tool call (`POST /api/decide`).

        Raises:
            UserQuestionError: as `submit` does, and `BAD_REQUEST` for an rpcId this asker
                asked with already.
        """
        questions = _checked_ask(rpc_id, session_id, origin, questions, approval)
        asking = _Asking(rpc_id, session_id, questions, asked_by, origin, audience, approval)
        verdict = await self._verdict(approval, asked_by)
        if verdict is None or verdict.match is None:
            return None
        for stored_id in _stored_ids(rpc_id, asked_by):
            known = self._known(stored_id)
            if known is None:
                new = await self._card(asking, None, (), None, stored_id, verdict)
                if new.decided is None:
                    return None
                known, created = await self.store.submit(new.question)
                if created:
                    await self._settled_by_rule(new.question, known, new.decided[0])
                    return known
            if asking.asked_as(known):
                raise UserQuestionError(
                    f"rpcId {quoted(rpc_id)} names a request already asked", ErrorCode.BAD_REQUEST
                )
        raise _taken(rpc_id)

    async def _card(
        self,
        asking: _Asking,
        deadline: float | None,
        escalate: Sequence[Escalation],
        remind: int | None,
        stored_id: str,
        verdict: Verdict | None = None,
    ) -> _New:
        """A new request as it is stored under `stored_id`: an approval's card written by the
        host, with the rules' note when they could not read the call; settled already when a
        rule decides it; and its page frame, serialised once."""
        approval, questions = asking.approval, asking.questions
        if approval is not None and verdict is None:
            verdict = await self._verdict(approval, asking.asked_by)
        if approval is not None:
            note = None if verdict is None else verdict.unreadable
            fields = host_card_fields(
                approval.tool,
                approval.input,
                questions[0].model_dump(mode="json", exclude_none=True),
                agent=approval.agent,
                note=note,
            )
            questions = (AskUserQuestionItem.model_validate(fields),)
            check_request(questions, None, None, None)
        decided = None if verdict is None else self._decided(verdict, questions)
        rendered = await render_details(questions, self._rendering)
        now = datetime.now(UTC)
        # With pages connected it is shown the moment it is stored: one write, not two.
        shown = now if self._pages and decided is None else None
        question = NewQuestion(
            stored_id,
            asking.session_id,
            questions,
            now,
            asking.asked_by,
            shown,
            asking.origin,
            rendered,
            asking.audience,
            approval,
            None if deadline is None else now + timedelta(seconds=deadline),
            None if decided is None else decided[1],
            escalate=tuple(escalate),
            remind=remind,
            asker_rpc_id=None if stored_id == asking.rpc_id else asking.rpc_id,
        )
        frame = requested_frame(question, None if decided else self._offer(question))
        _check_frame_size(frame)
        return _New(question, frame, decided)

    async def _verdict(self, approval: Approval, asked_by: str | None) -> Verdict | None:
        """What the rules make of `approval` now; `None` with no rules on this host, or when
        they cannot be read (a person decides: never an allow on a doubt)."""
        if self.rules is None:
            return None
        return await self.rules.decide(approval, asked_by)

    def _decided(
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

    async def _settled_by_rule(
        self, asked: NewQuestion, settled: StoredQuestion, found: Match
    ) -> None:
        """Report a request a rule settled as it was stored (it was never pending anywhere, so
        no page or notifier ever heard of it): its ask and its settlement, and the hits of the
        rules that decided it."""
        self.metrics.committed(pending_record(asked))
        self._apply(settled)
        self._committed(settled)
        logger.info("question %s settled by rule %d", settled.rpc_id, found.rule.id)
        assert self.rules is not None  # it decided
        for record in (found.rule, *found.also):
            try:
                await self.rules.store.rule_used(record.id)
            except UserQuestionError as error:
                logger.warning("could not count a use of rule %d: %s", record.id, error)

    # -- pages --------------------------------------------------------------------------------

    def subscribe(self, sees: Sees | None = None) -> PageSubscription:
        """Follow the pending requests `sees` accepts (all of them by default): a snapshot now,
        then every frame about them as it happens. The snapshot is recorded as shown, as is
        every request pushed to a page later."""
        send, receive = anyio.create_memory_object_stream[str](MAX_CLIENT_BACKLOG)
        snapshot = self.pending_frames(sees)
        page = PageSubscription(snapshot, receive, send, self._pages.discard, sees)
        self.record_shown(sees)
        self._pages.add(page)
        return page

    async def respond(
        self,
        response: ClientResponse,
        *,
        via: Surface,
        by: str | None = None,
        channel: str | None = None,
        sees: Sees | None = None,
    ) -> Receipt:
        """Apply an answer or a dismissal given through surface `via` by person `by` (or, for
        an answer link, through notification `channel`); the receipt says whether it won. A
        request `sees` does not accept is refused as if it did not exist."""
        rpc_id = response.rpc_id
        if usable_id(rpc_id) is None:  # no request can have it: never ask the store about it
            return _not_pending(
                f"no question has this rpcId: an rpcId is 1 to {MAX_ID_LENGTH} characters of text"
            )
        entry = self._entries.get(rpc_id)
        if entry is None and rpc_id not in self._settled:
            # Not cached: another host may have stored it a moment ago.
            await self._refresh(rpc_id)
            entry = self._entries.get(rpc_id)
        if entry is None or (sees is not None and not sees(entry.record)):
            return _not_pending(f"no pending question has rpcId {quoted(rpc_id)}")
        try:
            settlement = _settlement(entry.record, response, via, by, channel)
            remember = self._to_remember(entry.record, response, by)
        except UserQuestionError as error:
            return Receipt(accepted=False, reason="bad-response", message=str(error))
        settled = await self.store.settle(rpc_id, settlement, pending=entry.record)
        if settled is None:
            await self._refresh(rpc_id)
            return _not_pending(f"question {quoted(rpc_id)} was settled by another response first")
        self._apply(settled)
        self._committed(settled)
        if remember is not None:
            await self._remember(rpc_id, remember, via)
        return _ACCEPTED

    def _offer(self, record: StoredQuestion | NewQuestion) -> Rule | None:
        """The rule "Allow and don't ask again" makes from a request, `None` when it offers
        none: a plain question, a card without an `Allow` for the rule to choose later, no
        rules on this host, or a call no rule names exactly (`rules.proposed_rule`)."""
        if self.rules is None:
            return None
        return offered_rule(record.questions, record.approval, record.asked_by)

    def _to_remember(
        self, record: StoredQuestion, response: ClientResponse, by: str | None
    ) -> Rule | None:
        """The rule an answer asks the host to make if it wins (`remember: true`), recomputed
        here from the stored request, never taken from the answer; made by person `by`.

        Raises:
            UserQuestionError: `BAD_ANSWER` for `remember` without a person answering, on a
                request that offers no rule, or with an answer that does not allow.
        """
        result = response.result
        if isinstance(result, ErrorResult) or not result.value.remember:
            return None
        if by is None:
            raise UserQuestionError("only a person's answer can make a rule", ErrorCode.BAD_ANSWER)
        offer = self._offer(record)
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
        if self.people is not None:
            person = self.people.named(by)
            asker = None if offer.asker is None else self.people.named(offer.asker)
            refusal = (
                f"no active token is called {quoted(by)}"
                if person is None
                else rule_refusal(person, offer, asker)
            )
            if refusal is not None:
                raise UserQuestionError(
                    f"{by} may not make this rule: {refusal}", ErrorCode.BAD_ANSWER
                )
        return replace(offer, created_by=by)

    async def _remember(self, rpc_id: str, rule: Rule, via: Surface) -> None:
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

    # -- the cache ----------------------------------------------------------------------------

    def _known(self, rpc_id: str) -> StoredQuestion | None:
        entry = self._entries.get(rpc_id)
        return entry.record if entry is not None else self._settled.get(rpc_id)

    def _apply(self, record: StoredQuestion, frame: str | None = None) -> None:
        """Bring the cache, the pages and the waiting askers up to `record` (pending: with its
        `question/requested` frame when the caller has serialised it already). Idempotent."""
        rpc_id = record.rpc_id
        if rpc_id in self._settled:
            return  # settled is final: a stale pending record never revives a request
        if record.pending:
            known = self._entries.get(rpc_id)
            if known is None:
                entry = _Entry(record, frame or requested_frame(record, self._offer(record)))
                self._entries[rpc_id] = entry
                if record.deadline_at is not None:
                    self._deadlines.add(record.deadline_at, rpc_id)
                self._schedule_routing(entry)
                entry.shown = record.shown_at is not None
                if self._pages:
                    self._show((entry,))
                self._broadcast(entry.frame, record)
            elif _routing_moment(record) > _routing_moment(known.record):
                before, known.record = known.record, record
                self._schedule_routing(known)
                self._broadcast(known.frame, record, seen=before)  # to its new audience only
            return
        self._settled[rpc_id] = record
        if len(self._settled) > _SETTLED_MEMORY:
            self._settled.popitem(last=False)
        settled_entry = self._entries.pop(rpc_id, None)
        if settled_entry is None:
            return
        logger.info("question %s settled: %s", rpc_id, record.state)
        self._broadcast(resolved_frame(record), record)
        for watcher in settled_entry.watchers:
            try:
                watcher(record)
            except Exception:
                logger.exception("a watcher of question %s raised", rpc_id)

    async def _load(self) -> list[StoredQuestion]:
        """Read every pending request from the store and `_apply` it (when the hub starts, and
        when a shared store reconnects); the garbage collector is paused meanwhile (see
        `_collector.py`), so that it scans the new records once, afterwards."""
        with collector_paused():
            pending = await self.store.pending()
            for record in pending:
                self._apply(record)
        return pending

    def _committed(self, record: StoredQuestion) -> None:
        for listener in tuple(self._listeners):
            try:
                listener(record)
            except Exception:
                logger.exception("an event listener raised on question %s", record.rpc_id)

    def _show(self, entries: Iterable[_Entry]) -> None:
        fresh = [entry for entry in entries if not entry.shown]
        for entry in fresh:
            entry.shown = True
        if fresh:
            self._shown.note(entry.record.rpc_id for entry in fresh)

    def _drop_pages(self) -> None:
        for page in tuple(self._pages):
            page.close()

    def _broadcast(
        self, frame: str, record: StoredQuestion, *, seen: StoredQuestion | None = None
    ) -> None:
        """Send `frame` to every page that sees `record`, except those that saw `seen` (the
        record before an escalation widened its audience: they have the request already)."""
        for page in tuple(self._pages):
            if page._sees is None and seen is not None:
                continue  # an admin's page sees every request: it has this one
            if page._sees is not None and (
                not page._sees(record) or (seen is not None and page._sees(seen))
            ):
                continue
            try:
                page._send.send_nowait(frame)
            except anyio.WouldBlock:
                logger.warning("a page fell %d frames behind; disconnecting it", MAX_CLIENT_BACKLOG)
                self._pages.discard(page)
                page._send.close()  # the page reads what is queued, then its stream ends
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._pages.discard(page)

    async def _refresh(self, rpc_id: str) -> None:
        record = await self.store.get(rpc_id)
        if record is not None:
            self._apply(record)

    async def _time_out(self, rpc_id: str) -> None:
        """End the request as `timed-out` (`via` `host`) if it is still pending: its deadline is
        stored with it, so a restarted host (or any node) ends one that passed while it was
        away at once; of several nodes, the store's settle lets one win."""
        if rpc_id in self._entries:
            await self.withdraw(rpc_id, via=Surface.HOST, reason="timed-out", note=_DEADLINE_NOTE)

    def _schedule_routing(self, entry: _Entry) -> None:
        at = _next_routing(entry.record)
        if at is not None and at != entry.routing_at:
            entry.routing_at = at
            self._routing.add(at, entry.record.rpc_id)

    async def _route(self, rpc_id: str) -> None:
        """Fire the request's escalation step or reminder that is due, if this host wins it (the
        store's conditional update decides), and tell the routed listeners; a host that lost
        reads the request back, with what the winner wrote."""
        entry = self._entries.get(rpc_id)
        if entry is None:
            return
        record, now = entry.record, datetime.now(UTC)
        step = _due_step(record, now)
        if step is not None:
            routed = await self.store.escalate(rpc_id, record.escalated)
            whom: tuple[str, ...] = (step.to,)
        elif record.remind is not None and _reminder_at(record, record.remind) <= now:
            routed = await self.store.remind(rpc_id, record.reminded_at, now)
            whom = () if routed is None else routed.audience
        else:
            return  # an earlier time, since moved on: the current one is in the timetable
        entry.routing_at = None
        if routed is None:
            await self._refresh(rpc_id)
        else:
            logger.info("question %s routed again to %s", rpc_id, ", ".join(whom) or "everyone")
            self._apply(routed)
            for listener in tuple(self._routed):
                try:
                    listener(routed, whom)
                except Exception:
                    logger.exception("a routed listener raised on question %s", rpc_id)
        if rpc_id in self._entries:
            self._schedule_routing(self._entries[rpc_id])

    async def _follow_store(self) -> None:
        """Apply what other hosts changed, as the store reports it.

        A failed re-read is logged, not fatal: a store that reconnects says `None` afterwards,
        and the full re-read then catches up.
        """
        async for rpc_id in self._changes:
            try:
                if rpc_id is not None:
                    await self._refresh(rpc_id)
                else:
                    await self._resync()
            except UserQuestionError as error:
                logger.warning("could not re-read the store after a change: %s", error)

    async def _resync(self) -> None:
        pending = await self._load()
        still = {record.rpc_id for record in pending}
        for gone in [rpc_id for rpc_id in self._entries if rpc_id not in still]:
            await self._refresh(gone)


def _check_id(what: str, value: str) -> None:
    if not value or len(value) > MAX_ID_LENGTH:
        raise UserQuestionError(
            f"{what} must be 1 to {MAX_ID_LENGTH} characters, got {len(value)}",
            ErrorCode.BAD_REQUEST,
        )
    problem = text_problem(value)
    if problem is not None:
        raise UserQuestionError(f"{what} {problem}", ErrorCode.BAD_REQUEST)


@dataclass(frozen=True, slots=True)
class _Asking:
    """An ask as its asker sent it (an approval's card is still the asker's)."""

    rpc_id: str
    session_id: str
    questions: tuple[AskUserQuestionItem, ...]
    asked_by: str | None
    origin: Origin | None
    audience: tuple[str, ...]
    approval: Approval | None

    def asked_as(self, known: StoredQuestion) -> bool:
        """Whether `known` is the request this asker knows by this rpcId."""
        return known.asked_by == self.asked_by and known.own_rpc_id == self.rpc_id


@dataclass(frozen=True, slots=True)
class _New:
    """A new request ready to store, its page frame, and the rule that decides it, if any."""

    question: NewQuestion
    frame: str
    decided: tuple[Match, Settlement] | None


_OWN_IDS = 8
"""The ids tried for an asker's rpcId (another token may have asked with it, and with the
next); beyond them the rpcId is refused as taken."""


def _stored_ids(rpc_id: str, asked_by: str | None) -> Iterator[str]:
    """Where the request the asker of `asked_by` knows by `rpc_id` is kept: under `rpc_id`
    unless another token asked with it first, then under ids made from both, the same on
    every host (a prefix of the rpcId, `~`, a hash)."""
    yield rpc_id
    for attempt in range(1, _OWN_IDS):
        digest = hashlib.sha256(f"{asked_by}\x00{rpc_id}\x00{attempt}".encode()).hexdigest()
        yield f"{rpc_id[:64]}~{digest[:24]}"


def _taken(rpc_id: str) -> UserQuestionError:
    return UserQuestionError(
        f"rpcId {quoted(rpc_id)} cannot be used; use a new rpcId", ErrorCode.BAD_REQUEST
    )


def _checked_ask(
    rpc_id: str,
    session_id: str,
    origin: Origin | None,
    questions: Sequence[AskUserQuestionItem],
    approval: Approval | None,
) -> tuple[AskUserQuestionItem, ...]:
    """The ask's questions, once its ids, origin and questions pass the checks."""
    _check_id("rpcId", rpc_id)
    _check_id("sessionId", session_id)
    _check_origin(origin)
    checked = tuple(questions)
    check_request(checked, None, None, None)
    if approval is not None and len(checked) != 1:
        raise UserQuestionError(
            f"an approval goes with exactly one question, its card; got {len(checked)}",
            ErrorCode.BAD_REQUEST,
        )
    return checked


def _check_same_request(known: StoredQuestion, asking: _Asking) -> None:
    """Refuse a re-attachment under an rpcId its asker used for a different request (an
    approval's card is the host's: the call it approves is compared instead)."""
    same = known.session_id == asking.session_id and known.approval == asking.approval
    if same and asking.approval is None:
        same = known.questions == asking.questions
    if not same:
        raise UserQuestionError(
            f"rpcId {quoted(asking.rpc_id)} already names another request; use a new rpcId",
            ErrorCode.BAD_REQUEST,
        )


def _check_origin(origin: Origin | None) -> None:
    for name in ("client", "cwd"):
        value = None if origin is None else getattr(origin, name)
        problem = None if value is None else text_problem(value)
        if problem is not None:
            raise UserQuestionError(f"origin.{name} {problem}", ErrorCode.BAD_REQUEST)


def _check_frame_size(frame: str) -> None:
    """Refuse a request whose `question/requested` frame no page could be sent."""
    size = len(frame.encode("utf-8"))
    if size > MAX_FRAME_BYTES:
        raise UserQuestionError(
            f"this request makes a frame of {size} bytes, more than the {MAX_FRAME_BYTES} a frame "
            "may hold; shorten its details or split it",
            ErrorCode.REQUEST_TOO_LARGE,
        )


def _settlement(
    record: StoredQuestion,
    response: ClientResponse,
    via: Surface,
    by: str | None,
    channel: str | None,
) -> Settlement:
    """What a response settles the request as, or `UserQuestionError` when it breaks the rules."""
    result = response.result
    if isinstance(result, ErrorResult):
        if result.error.code != "cancelled":
            raise UserQuestionError(
                f"error code {quoted(result.error.code)} is not understood; "
                'dismiss with code "cancelled"',
                ErrorCode.BAD_ANSWER,
            )
        return Settlement(Outcome.DISMISSED, via=via, by=by, channel=channel)
    named = result.value.session_id
    if named is not None and named != record.session_id:
        raise UserQuestionError(
            f"question {quoted(record.rpc_id)} belongs to session {quoted(record.session_id)}, "
            f"not {quoted(named)}",
            ErrorCode.BAD_ANSWER,
        )
    answer = check_answer(record.questions, result.value.answer, record.approval)
    return Settlement(Outcome.ANSWERED, answer, via, by, channel)


class _Timetable:
    """When to look at which pending request again: a heap of (when, rpcId), and a loop that
    hands each to a function as its time comes (a store that fails: tried again shortly)."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._heap: list[tuple[datetime, str]] = []
        self._added = anyio.Event()

    def add(self, at: datetime, rpc_id: str) -> None:
        heapq.heappush(self._heap, (at, rpc_id))
        self._added.set()

    async def run(self, due: Callable[[str], Coroutine[Any, Any, None]]) -> None:
        while True:
            now = datetime.now(UTC)
            while self._heap and self._heap[0][0] <= now:
                _, rpc_id = heapq.heappop(self._heap)
                try:
                    await due(rpc_id)
                except UserQuestionError as error:  # the store: try again shortly
                    logger.warning("could not %s question %s: %s", self._what, rpc_id, error)
                    self.add(now + timedelta(seconds=1), rpc_id)
                    break
            self._added = anyio.Event()
            wait = math.inf
            if self._heap:
                wait = (self._heap[0][0] - datetime.now(UTC)).total_seconds()
            with anyio.move_on_after(max(wait, 0.0)):
                await self._added.wait()


def _due_step(record: StoredQuestion, now: datetime) -> Escalation | None:
    """The request's next escalation step if its time has come."""
    if record.escalated >= len(record.escalate):
        return None
    step = record.escalate[record.escalated]
    return step if record.asked_at + timedelta(seconds=step.after) <= now else None


def _reminder_at(record: StoredQuestion, every: int) -> datetime:
    return (record.reminded_at or record.asked_at) + timedelta(seconds=every)


def _next_routing(record: StoredQuestion) -> datetime | None:
    """When the request's next escalation step or reminder is due, if it has any."""
    times = []
    if record.escalated < len(record.escalate):
        times.append(record.asked_at + timedelta(seconds=record.escalate[record.escalated].after))
    if record.remind is not None:
        times.append(_reminder_at(record, record.remind))
    return min(times, default=None)


def _routing_moment(record: StoredQuestion) -> tuple[int, datetime]:
    """How far a pending record's routing has got (steps fired, last reminder): a record read
    back replaces the cached one only when it is further on."""
    return (record.escalated, record.reminded_at or record.asked_at)


_DEADLINE_NOTE = "its asker's deadline passed"
"""The note of a request its deadline ended."""

_ACCEPTED = Receipt(accepted=True)
"""The receipt of every answer that won (a frozen model: one serves them all)."""


def _not_pending(message: str) -> Receipt:
    return Receipt(accepted=False, reason="not-pending", message=message)


def _discard(watchers: list[Any], watcher: object) -> None:
    if watcher in watchers:
        watchers.remove(watcher)
