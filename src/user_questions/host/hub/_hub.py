"""`Hub`: the inbox in code, composing the requests' cache, the pages, the timetable, the request
checks and the rules over one store (the package docstring says how)."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any

import anyio

from user_questions._checks import quoted, usable_id
from user_questions._languages import DEFAULT_LANGUAGE, speaking
from user_questions._lifecycle.disposer import Disposer, nothing
from user_questions._lifecycle.lifetime import AsyncLifetime
from user_questions._lifecycle.listeners import Listeners
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import (
    MAX_ID_LENGTH,
    Approval,
    ClientResponse,
    Origin,
    Receipt,
    WithdrawReason,
)
from user_questions.host._frame_text import (
    group_frame,
    grouped_frame,
    quorum_frame,
    requested_frame,
    resolved_frame,
)
from user_questions.host.gate.fair_share import MAX_PENDING, Share
from user_questions.host.gate.roles import maker_refusal
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub._admission import Admission
from user_questions.host.hub._checks import (
    ACCEPTED,
    check_same_request,
    checked_ask,
    not_pending,
    settlement_of,
)
from user_questions.host.hub._events import EventListener, RoutedListener, TallyListener
from user_questions.host.hub._following import StoreFollower
from user_questions.host.hub._intake import Intake, New, Timing
from user_questions.host.hub._pages import Pages, PageSubscription, Sees
from user_questions.host.hub._quorum import tally_receipt, tally_text, vote_of
from user_questions.host.hub._requests import (
    Applied,
    Asking,
    Change,
    Entry,
    Requests,
    Watcher,
    stored_ids,
    taken,
)
from user_questions.host.hub._timetable import Clock, SystemClock, Timers
from user_questions.host.rules import InboxRules, Match, Rules, Verdict
from user_questions.host.shown import ShownRecorder
from user_questions.host.stores import (
    Escalation,
    QuestionStore,
    Role,
    RulesMoved,
    Settlement,
    StoredQuestion,
)
from user_questions.host.telemetry.metrics import HostMetrics
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem

__all__ = ["MAX_PENDING", "HostTask", "Hub"]

logger = logging.getLogger("user_questions.host")

_DEADLINE_NOTE = "its asker's deadline passed"
"""The note of a request its deadline ended."""
_GROUP_SETTLES = 32
"""Settlements of one group's requests written at once (the store commits them together)."""
_RULES_TRIES = 3
"""Times a new approval request is decided and offered to the store, each time refused because
another process or node changed the rules meanwhile (`RulesMoved`), before a person is asked."""

HostTask = Callable[["Hub"], Coroutine[Any, Any, None]]
"""Work run beside the host for as long as it serves, such as an in-process agent or the
notifiers (`create_app(tasks=...)`)."""


class Hub(AsyncLifetime):
    """The pending requests of one host, over its store; use as `async with Hub(store) as hub`.

    `metrics` counts what the hub commits (a new `HostMetrics` by default); the host's
    connections and notifiers report to it too, and `GET /metrics` renders it. `rules` settle
    approval requests before anyone sees them (`None`: none); `tokens` say who may make the
    rule an answer asks for (`roles.rule_refusal`; `None`: whoever answers in this process).
    `clock` times requests and their deadlines, steps and reminders (the real time by default).
    """

    def __init__(
        self,
        store: QuestionStore,
        *,
        metrics: HostMetrics | None = None,
        rules: Rules | None = None,
        tokens: Tokens | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self.rules = rules
        self.tokens = tokens
        self.metrics = metrics or HostMetrics()
        self._requests = Requests(self._asks_as_agent)
        self.metrics.watch_pending(lambda: len(self._requests), self._requests.oldest_asked)
        self._pages = Pages()
        self._timers = Timers(clock or SystemClock())
        self._admission = Admission(self._timers.clock, self._requests.held_by)
        refusal = None if tokens is None else functools.partial(maker_refusal, tokens)
        self._rules = InboxRules(rules, refusal)
        self._intake = Intake(self._rules, self._timers.clock)
        self._store_follower = StoreFollower(store, self._apply, self._tallied)
        self._shown = ShownRecorder(store)
        self._listeners: Listeners[[StoredQuestion]] = Listeners(
            logger, lambda record: f"an event listener raised on question {record.rpc_id}"
        )
        self._routed: Listeners[[StoredQuestion, tuple[str, ...]]] = Listeners(
            logger, lambda record, _: f"a routed listener raised on question {record.rpc_id}"
        )
        self._tallies: Listeners[[StoredQuestion, tuple[str, ...]]] = Listeners(
            logger, lambda record, _: f"a tally listener raised on question {record.rpc_id}"
        )

    def __repr__(self) -> str:
        return f"<Hub {len(self._requests)} pending>"

    def _asks_as_agent(self, name: str) -> bool:
        """Whether the token called `name` is an asker's (any named asker without `tokens`):
        its identical pending requests are one card."""
        if self.tokens is None:
            return True
        identity = self.tokens.named(name)
        return identity is not None and identity.role is Role.ASKER

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        self._store_follower.listen(stack)
        await self._store_follower.load()
        stack.callback(self._shown.close)
        following = await stack.enter_async_context(anyio.create_task_group())
        following.start_soon(self._store_follower.follow, self._requests.ids)
        following.start_soon(self._shown.run)
        following.start_soon(self._timers.run, self._time_out, self._route)
        stack.callback(following.cancel_scope.cancel)
        stack.callback(self._pages.close)
        stack.callback(self.on_event(self.metrics.committed))

    @property
    def pending_count(self) -> int:
        """How many requests are pending (as far as this host knows)."""
        return len(self._requests)

    def pending_frames(self, sees: Sees | None = None) -> list[str]:
        """The `question/requested` frame of every card `sees` accepts, oldest first: one per
        group of identical requests, with its count (recording nothing: whoever shows them to
        a person calls `record_shown()`)."""
        requests = self._requests
        return [
            grouped_frame(self._frame(entry), requests.count(entry))
            for entry in self._seen(sees)
            if requests.leads(entry)
        ]

    def own_frames(self, sees: Sees) -> list[str]:
        """`pending_frames` for an asker listing its own: each under the rpcId it knows it by."""
        return [
            self._frame(entry)
            if entry.record.asker_rpc_id is None
            else self._requested_frame(entry.record, own=True, approved_by=entry.approved_by)
            for entry in self._seen(sees)
        ]

    def shown_apart(self, rpc_id: str) -> bool:
        """Whether pending request `rpc_id` is a card of its own, rather than one more of the
        identical requests another's card stands for (what a notification of it would repeat)."""
        entry = self._requests.pending(rpc_id)
        return entry is None or self._requests.leads(entry)

    def record_shown(self, sees: Sees | None = None) -> None:
        """Record in the background that each pending request `sees` accepts was just shown."""
        self._show(self._seen(sees))

    def on_event(self, listener: EventListener) -> Disposer:
        """Call `listener` after this host commits a new request or wins a settlement.

        Changes written by other hosts on the same store are theirs to report; a request
        re-attached or replayed after a restart is not new. Returns a remover.
        """
        return self._listeners.add(listener)

    def on_routed(self, listener: RoutedListener) -> Disposer:
        """Call `listener` when this host routes a pending request to people again (an
        escalation step, a reminder: `RoutedListener`). Returns a remover."""
        return self._routed.add(listener)

    def on_tally(self, listener: TallyListener) -> Disposer:
        """Call `listener` when the count of a pending request that needs several approvals
        changes, on this host or another sharing the store (`TallyListener`). Returns a
        remover."""
        return self._tallies.add(listener)

    def approved_by(self, rpc_id: str) -> tuple[str, ...]:
        """Who approved pending request `rpc_id` so far (of a quorum), as this host last read."""
        entry = self._requests.pending(rpc_id)
        return () if entry is None else entry.approved_by

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
        approvals: int = 1,
        share: Share | None = None,
    ) -> tuple[StoredQuestion, Disposer]:
        """Store and show a request, or re-attach to the one this asker asked with this rpcId.

        `asked_by` is the asker's token, `origin` where it says it comes from, `audience` whom
        it is routed to (kept from the first submission). Each token has rpcIds of its own
        (`StoredQuestion.asker_rpc_id`), so no answer tells an asker of another's request. The
        host writes an approval's card from `approval`, and a rule may settle it before anyone
        hears of it (`via` `rule`). `deadline`, `escalate` and `remind` (the asker token's) are
        the request's timetable (`_timetable`): whichever host sharing the store gets there
        first fires each. `approvals` (the asker token's) is how many people must approve its
        call (`_quorum`). `share` is the asker token's fair share (`None`: a person's, an
        admin's or an in-process ask): a new ask beyond its pending cap or its rate is refused,
        before the host-wide `MAX_PENDING`; a re-attachment never is.

        Returns the request as it is now and a function that stops `watcher`, which is called
        once a pending request settles (never for one that settled while its asker was away).

        Raises:
            UserQuestionError: `BAD_REQUEST` (an id too long or not text, an origin not text,
                an rpcId this asker used for another request, an approval with more than one
                question), `TOO_MANY_PENDING`, `RATE_LIMITED`, `REQUEST_TOO_LARGE`, or the
                request checks of `ask()` (`EMPTY_QUESTIONS`, `BAD_INTENT`, `BAD_QUESTION`,
                `TOO_MANY_QUESTIONS`, `LIMIT_EXCEEDED`).
        """
        questions = checked_ask(rpc_id, session_id, origin, questions, approval)
        asking = Asking(rpc_id, session_id, questions, asked_by, origin, audience, approval)
        for stored_id in stored_ids(rpc_id, asked_by):
            known = self._requests.known(stored_id)
            refusal = None if known is not None else self._refusal(share)
            if refusal is not None:
                known = await self.store.get(stored_id)  # a re-attachment is never refused
                if known is None:
                    raise refusal
            if known is None:
                with self._admission.asking(share):
                    timing = Timing(deadline, escalate, remind, approvals)
                    verdict = await self._rules.verdict(approval, asked_by)
                    stored = await self._stored(asking, stored_id, timing, verdict)
                    assert stored is not None  # only a decision by the rules alone gives up
                    new, known, created = stored
                    if created and new.decided is None:
                        self._apply(known, new.frame)
                if created and new.decided is not None:
                    self._settled_by_rule(known, new.decided)
                    return known, nothing
                if created:
                    self._listeners.tell(known)
                    return self._watch(known, watcher)
            if not asking.asked_as(known):
                continue  # another token's: this asker's request is kept under another id
            # Decided before anything is applied or reported: a mismatch changes nothing here.
            check_same_request(known, asking)
            self._apply(known)
            return self._watch(self._requests.known(known.rpc_id) or known, watcher)
        raise taken(rpc_id)

    def _refusal(self, share: Share | None) -> UserQuestionError | None:
        """Why a new ask is refused now: its asker's share first, then the host-wide cap."""
        refusal = self._admission.refusal(share)
        if refusal is None and len(self._requests) >= MAX_PENDING:
            refusal = UserQuestionError(
                f"the host already has {MAX_PENDING} pending questions; answer or "
                "dismiss some first",
                ErrorCode.TOO_MANY_PENDING,
            )
        return refusal

    def _watch(
        self, known: StoredQuestion, watcher: Watcher | None
    ) -> tuple[StoredQuestion, Disposer]:
        entry = self._requests.pending(known.rpc_id)
        if entry is None or watcher is None:
            return known, nothing
        return known, entry.watch(watcher)

    async def own(self, rpc_id: str, asked_by: str | None) -> StoredQuestion | None:
        """The request the asker of token `asked_by` knows by `rpc_id`, `None` if none."""
        if usable_id(rpc_id) is None:
            return None
        for stored_id in stored_ids(rpc_id, asked_by):
            known = self._requests.known(stored_id) or await self.store.get(stored_id)
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
        entry = self._requests.pending(rpc_id)
        pending = None if entry is None else entry.record
        if sees is not None:
            known = self._requests.known(rpc_id) or await self.store.get(rpc_id)
            if known is None or not sees(known):
                return None
        settlement = Settlement(outcome, via=via, by=by, note=note)
        won = await self.store.settle(rpc_id, settlement, pending=pending)
        settled = won or self._requests.settled(rpc_id) or await self.store.get(rpc_id)
        if settled is not None:
            self._apply(settled)
        if won is not None:
            self._listeners.tell(won)
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
        """Settle a new approval request by the rules alone (`POST /api/decide`, a hook's
        quick path): the request as the rule settled it, or `None` with nothing stored (a
        person must be asked: `submit`). Raises as `submit` does, and `BAD_REQUEST` for an
        rpcId this asker asked with already."""
        questions = checked_ask(rpc_id, session_id, origin, questions, approval)
        asking = Asking(rpc_id, session_id, questions, asked_by, origin, audience, approval)
        verdict = await self._rules.verdict(approval, asked_by)
        if verdict is None or verdict.match is None:
            return None
        for stored_id in stored_ids(rpc_id, asked_by):
            known = self._requests.known(stored_id)
            if known is None:
                stored = await self._stored(asking, stored_id, Timing(), verdict, ruled_only=True)
                if stored is None:
                    return None
                new, known, created = stored
                if created:
                    assert new.decided is not None  # `ruled_only`
                    self._settled_by_rule(known, new.decided)
                    return known
            if asking.asked_as(known):
                raise UserQuestionError(
                    f"rpcId {quoted(rpc_id)} names a request already asked", ErrorCode.BAD_REQUEST
                )
        raise taken(rpc_id)

    async def _stored(
        self,
        asking: Asking,
        stored_id: str,
        timing: Timing,
        verdict: Verdict | None,
        *,
        ruled_only: bool = False,
    ) -> tuple[New, StoredQuestion, bool] | None:
        """Store the new request `asking` asked under `stored_id` as `verdict` decides it: the
        new request, its record and whether this call created it (`QuestionStore.submit`).

        The store takes it only while the rules are at the version `verdict` was made at; when
        another process or node changed them meanwhile (`RulesMoved`), the rules are read again
        and it is decided again, `_RULES_TRIES` times at most, and then a person is asked
        (never an allow on a doubt). `ruled_only` (`decide`): `None`, with nothing stored, when
        no rule settles it.
        """
        moves = 0
        while True:
            new = await self._intake.new(
                asking, stored_id, timing, shown=bool(self._pages), verdict=verdict
            )
            if ruled_only and new.decided is None:
                return None
            try:
                known, created = await self.store.submit(new.question)
            except RulesMoved:
                moves += 1
                if moves < _RULES_TRIES:
                    verdict = await self._rules.verdict(
                        asking.approval, asking.asked_by, fresh=True
                    )
                else:  # no version to check: the store takes it as a person's to decide
                    logger.warning(
                        "the rules changed each time question %s was decided: a person decides",
                        stored_id,
                    )
                    verdict = None
                continue
            return new, known, created

    def _settled_by_rule(self, settled: StoredQuestion, found: Match) -> None:
        """Report a request a rule settled (never pending anywhere, so no page or notifier
        heard of it): its ask and its settlement (the store counted the rules' uses)."""
        self.metrics.stored_new()  # the listeners, `metrics.committed` among them, hear the rest
        self._apply(settled)
        self._listeners.tell(settled)
        logger.info("question %s settled by rule %d", settled.rpc_id, found.rule.id)

    # -- pages --------------------------------------------------------------------------------

    def subscribe(self, sees: Sees | None = None) -> PageSubscription:
        """Follow the pending requests `sees` accepts (all of them by default): a snapshot now,
        then every frame about them as it happens. The snapshot is recorded as shown, as is
        every request pushed to a page later."""
        page = self._pages.follow(self.pending_frames(sees), sees)
        self.record_shown(sees)
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
            return not_pending(
                f"no question has this rpcId: an rpcId is 1 to {MAX_ID_LENGTH} characters of text"
            )
        entry = self._requests.pending(rpc_id)
        if entry is None and self._requests.settled(rpc_id) is None:
            # Not cached: another host may have stored it a moment ago.
            await self._store_follower.refresh(rpc_id)
            entry = self._requests.pending(rpc_id)
        if entry is None or (sees is not None and not sees(entry.record)):
            return not_pending(f"no pending question has rpcId {quoted(rpc_id)}")
        try:
            settlement = settlement_of(entry.record, response, via, by, channel)
            remember = self._rules.to_remember(entry.record, response, by)
            vote = vote_of(entry.record, settlement, via, self._timers.clock.now())
        except UserQuestionError as error:
            return Receipt(accepted=False, reason="bad-response", message=str(error))
        group = self._requests.group(entry)
        if vote is None:
            settled = await self.store.settle(rpc_id, settlement, pending=entry.record)
        else:  # one approval of a quorum: counted, and the last one settles it (and its group)
            tally = await self.store.approve(vote, settlement)
            if tally is not None and tally.settled is None:
                with speaking(DEFAULT_LANGUAGE):  # the log is English whoever approved
                    logger.info("question %s: %s", rpc_id, tally_text(tally))
                await self._store_follower.refresh(rpc_id)  # every page sees the count
                return tally_receipt(tally)
            settled = None if tally is None else tally.settled
        if settled is None:
            await self._store_follower.refresh(rpc_id)
            return not_pending(f"question {quoted(rpc_id)} was settled by another response first")
        won = [settled, *await self._settle_others(group, entry, settlement)]
        card = group[0].record.rpc_id
        # The card last and aloud: the pages see it close once, not its count fall.
        for record in sorted(won, key=lambda record: record.rpc_id == card):
            self._apply(record, quiet=record.rpc_id != card)
            self._listeners.tell(record)
        if remember is not None:
            await self._rules.remember(rpc_id, remember, via)
        return ACCEPTED

    async def _settle_others(
        self, group: list[Entry], answered: Entry, settlement: Settlement
    ) -> list[StoredQuestion]:
        """Settle the requests of `group` other than `answered` as it was, each through the
        store as its own settlement (its audit record, its history, its asker told); the
        settlements won, to apply (one lost was settled otherwise: the store says how)."""

        async def settle(entry: Entry) -> None:
            rpc_id = entry.record.rpc_id
            async with limiter:
                record = await self.store.settle(rpc_id, settlement, pending=entry.record)
            if record is None:
                await self._store_follower.refresh(rpc_id)
            else:
                won.append(record)

        won: list[StoredQuestion] = []
        if len(group) == 1:  # the request answered alone, as nearly every one is
            return won
        limiter = anyio.CapacityLimiter(_GROUP_SETTLES)
        async with anyio.create_task_group() as task_group:
            for entry in group:
                if entry is not answered:
                    task_group.start_soon(settle, entry)
        return won

    # -- the cache, announced ---------------------------------------------------------------

    def _apply(
        self, record: StoredQuestion, frame: str | None = None, *, quiet: bool = False
    ) -> None:
        """Bring the cache, the timetable, the pages and the waiting askers up to `record`
        (pending: with its `question/requested` frame when the caller has serialised it
        already); `quiet`: a group's request settled with its card, which the pages hear of
        instead. Idempotent."""
        applied = self._requests.apply(record)
        if applied is not None:
            self._announce(applied, record, frame, quiet=quiet)

    def _frame(self, entry: Entry) -> str:
        """The `question/requested` frame of pending `entry`, written when it is sent rather
        than kept: kept, the frames of 10,000 pending requests were a fifth of what they cost
        the host, and writing one takes a few microseconds (a replay of 10,000, tens of ms)."""
        return self._requested_frame(entry.record, approved_by=entry.approved_by)

    def _requested_frame(
        self, record: StoredQuestion, *, own: bool = False, approved_by: tuple[str, ...] = ()
    ) -> str:
        offer = self._rules.offer(record)
        return requested_frame(record, offer, own=own, approved_by=approved_by)

    def _tallied(self, record: StoredQuestion, approved_by: tuple[str, ...]) -> None:
        """Bring the card of pending `record` up to who approved it so far, and tell the pages
        showing it and the tally listeners when that changed."""
        entry = self._requests.pending(record.rpc_id)
        if entry is None or entry.approved_by == approved_by:
            return
        entry.approved_by = approved_by
        frame = quorum_frame(record.rpc_id, entry.record.approvals, approved_by)
        self._pages.broadcast(frame, entry.record)
        self._tallies.tell(entry.record, approved_by)

    def _announce(
        self, applied: Applied, record: StoredQuestion, frame: str | None, *, quiet: bool
    ) -> None:
        """Tell the pages and watchers what `applied` changed (`frame`: a new request's
        `question/requested` frame, when the caller has written it already)."""
        entry, leader = applied.entry, applied.leader
        if applied.change is Change.NEW:
            self._timers.track(record)
            if self._pages:
                self._show((entry,))
            if leader is entry:
                self._pages.broadcast(frame or self._frame(entry), record)
            else:  # one more of a card's identical requests: its count, not another card
                self._count_changed(leader, applied.count)
        elif applied.change is Change.WIDENED:
            self._timers.reschedule(record)
            if leader is entry:  # its new audience
                widened = grouped_frame(self._frame(entry), applied.count)
                self._pages.broadcast(widened, record, seen=applied.before)
        else:
            self._timers.forget(record.rpc_id)
            logger.info("question %s settled: %s", record.rpc_id, record.state)
            if not quiet and applied.was_leader:
                self._pages.broadcast(resolved_frame(record), record)
                if leader is not None:  # the group's next request is its card now
                    card = grouped_frame(self._frame(leader), applied.count)
                    self._pages.broadcast(card, leader.record)
            elif not quiet:
                self._count_changed(leader, applied.count)
            entry.tell_watchers(record)

    def _count_changed(self, leader: Entry | None, count: int) -> None:
        """Tell the pages showing `leader`'s card that it stands for `count` requests now."""
        if leader is not None:
            self._pages.broadcast(group_frame(leader.record.rpc_id, count), leader.record)

    def _seen(self, sees: Sees | None) -> list[Entry]:
        return [entry for entry in self._requests if sees is None or sees(entry.record)]

    def _show(self, entries: Iterable[Entry]) -> None:
        fresh = self._requests.unshown(entries)
        if fresh:
            self._shown.note(fresh)

    # -- the timetable ------------------------------------------------------------------------

    async def _time_out(self, rpc_id: str) -> None:
        """End the request as `timed-out` (`via` `host`) if it is still pending; of several
        nodes, the store's settle lets one win."""
        if self._requests.pending(rpc_id) is not None:
            await self.withdraw(rpc_id, via=Surface.HOST, reason="timed-out", note=_DEADLINE_NOTE)

    async def _route(self, rpc_id: str) -> None:
        """Fire the request's step or reminder that is due if this host wins it (the store
        decides) and tell the routed listeners; a host that lost reads back what won."""
        entry = self._requests.pending(rpc_id)
        if entry is None:
            return
        fired = await self._timers.fire(self.store, entry.record)
        if fired is None:
            return
        routed, whom = fired
        if routed is None:
            await self._store_follower.refresh(rpc_id)
        else:
            logger.info("question %s routed again to %s", rpc_id, ", ".join(whom) or "everyone")
            self._apply(routed)
            self._routed.tell(routed, whom)
        entry = self._requests.pending(rpc_id)
        if entry is not None:
            self._timers.reschedule(entry.record)
