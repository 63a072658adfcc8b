"""What every chat bot does the same way, whatever carries its messages: who a chat user is,
whether a tap on a message counts, and answering through the hub as the paired person.

Authority comes from the pairing only: a tap or a reply counts when its sender is paired with
the service, the message is in that sender's own chat, the person's token is active and the
request is routed to them (`roles.sees`). The answer then goes through `Hub.respond` exactly as
the page's does (first answer wins), recorded as the person via the service's surface.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import anyio

from user_questions._languages import N_, gettext, speaking
from user_questions.errors import UserQuestionError
from user_questions.frames import AnswerResult, AnswerValue, ClientResponse, ErrorResult
from user_questions.host.chat.cards import (
    FORM_ON_PAGE,
    Answered,
    Card,
    Dismissed,
    Draft,
    Step,
    WaitForNote,
    WaitForText,
    card_of,
    quorum_line,
    take_action,
    take_note,
    take_text,
    too_late,
)
from user_questions.host.chat.pairing import check_code
from user_questions.host.gate.roles import may_answer, sees, viewer
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import Hub, OnePerCard
from user_questions.host.stores import ChatMessage, ChatPairing, Store, StoredQuestion
from user_questions.outcomes import Surface

__all__ = [
    "NOTE_REFUSED",
    "NOT_CURRENT",
    "QUEUE",
    "REFUSAL",
    "RELEASE_SECONDS",
    "SENT",
    "Answering",
    "Deliver",
    "Show",
    "Post",
    "Reaction",
    "Say",
    "Tap",
]

logger = logging.getLogger("user_questions.host.chat")

# What a presser is told: message ids, said in the language spoken where they are used.
REFUSAL = N_("You are not paired to answer this question.")
QUEUE = 1000
"""Requests waiting to be sent or edited; more are dropped with a log line."""
SENT = N_("Sent.")
NOT_CURRENT = N_("This button is no longer current.")
NOTE_REFUSED = N_("The note was not kept: {reason}")
"""What a note the host would refuse beside an answer is told (the checker's English reason)."""
RELEASE_SECONDS = 2.0
"""How long a stopping host tries to release its bot's lease (renewed for 0 s: expired)."""


Deliver = Callable[[StoredQuestion], Awaitable[None]]
"""Sends a new request to the chats, or edits the messages of a settled one."""

Say = Callable[[str], Awaitable[None]]
"""Writes plain text (the transport escapes it) into the chat at hand."""

Show = Callable[[ChatMessage, Card], Awaitable[None]]
"""Edits a message kept and posted to show `Card` (its buttons carry the message's `ref`)."""
Post = Callable[[ChatMessage, Card], Awaitable[str]]
"""Posts a request's first card into the chat of the message kept (its buttons carry the
message's `ref`); the service's id of the message."""


@dataclass(frozen=True, slots=True)
class Tap:
    """A tap (or a reply) that counts: who, on which message, of which request as it is now."""

    pairing: ChatPairing
    message: ChatMessage
    record: StoredQuestion


@dataclass(frozen=True, slots=True)
class Reaction:
    """What a press (or a typed reply) leads to, for the transport to show: at most one of
    `card`, `prompt` and `settled`, and what to tell the presser."""

    tap: Tap | None
    """`None`: the press does not count (`REFUSAL`)."""
    told: str = ""
    """What the presser is told (empty: nothing)."""
    alert: bool = True
    """Whether `told` is a refusal or a warning rather than a plain acknowledgement."""
    card: Card | None = None
    """The message's new look (the draft went on)."""
    prompt: str | None = None
    """Ask for typed text: the "Other" answer or a plan review's feedback, to this prompt."""
    note: WaitForNote | None = None
    """Ask for the note on a question."""
    settled: StoredQuestion | None = None
    """The request had settled already: edit the message to say how."""


class Answering:
    """One service's view of the pairings, the sent messages and the hub."""

    def __init__(self, hub: Hub, store: Store, tokens: Tokens, surface: Surface) -> None:
        self.hub = hub
        self.store = store
        self.tokens = tokens
        self.surface = surface
        self.service = surface.value

    def may_answer(self, person: str, record: StoredQuestion) -> bool:
        """Whether `person` (an active token) may answer `record`."""
        identity = self.tokens.named(person)
        return identity is not None and may_answer(identity) and sees(identity, record)

    def language_of(self, person: str) -> str | None:
        """`person`'s own language (`uq token add --lang`), or `None`: the host's."""
        identity = self.tokens.named(person)
        return None if identity is None else identity.lang

    async def language_in(self, chat: str) -> str | None:
        """The language of the person paired in `chat` (`None`: the host's)."""
        pairing = next((p for p in await self.pairings() if p.chat == chat), None)
        return None if pairing is None else self.language_of(pairing.person)

    async def pairings(self) -> list[ChatPairing]:
        return [p for p in await self.store.pairings() if p.service == self.service]

    async def paired(self, user: str) -> ChatPairing | None:
        """The pairing of the service's user `user`, if any."""
        return next((p for p in await self.pairings() if p.user == user), None)

    async def recipients(
        self, record: StoredQuestion, pairings: list[ChatPairing] | None = None
    ) -> list[ChatPairing]:
        """Those of `pairings` (every pairing of the service by default) whose person may
        answer `record` and whose chat has no message of it yet: a request is one message in
        each chat, however often it is heard (stored, routed again, caught up at start)."""
        messages = await self.store.chat_messages(record.rpc_id)
        sent = {m.chat for m in messages if m.service == self.service}
        return [
            pairing
            for pairing in (await self.pairings() if pairings is None else pairings)
            if pairing.chat not in sent and self.may_answer(pairing.person, record)
        ]

    async def release(self, lease: str, holder: str) -> None:
        """Hand the lease `lease` of `holder` on at once (a host that stops), not when it runs
        out; shielded, as it runs while the host is being cancelled."""
        with anyio.move_on_after(RELEASE_SECONDS, shield=True):
            try:
                await self.store.take_lease(lease, holder, 0)
            except Exception as error:  # the store is going too: the lease runs out
                logger.warning("%s: the lease was not released: %s", self.service, error)

    async def send(
        self, record: StoredQuestion, post: Post, pairings: list[ChatPairing] | None = None
    ) -> None:
        """Send `record` with `post` to each of `pairings` (all of the service's by default)
        that is among its `recipients`, in the language of its person. Each message is kept,
        with a fresh reference, before it is posted (a tap on it may come at once), then with
        the id `post` returns."""
        for pairing in await self.recipients(record, pairings):
            ref = secrets.token_urlsafe(12)  # 96 bits: no other message's buttons carry it
            kept = ChatMessage(
                ref, record.rpc_id, self.service, pairing.chat, "", digest=record.card
            )
            await self.store.add_chat_message(kept)
            with speaking(self.language_of(pairing.person)):
                sent = await post(kept, card_of(record.questions, Draft(), self.quorum(record)))
            await self.store.add_chat_message(replace(kept, message=sent))

    def quorum(self, record: StoredQuestion) -> str | None:
        """Where the quorum of `record` stands, as its cards show it (in the language spoken)."""
        return quorum_line(record.approvals, self.hub.approved_by(record.rpc_id))

    async def recount(self, record: StoredQuestion, show: Show) -> None:
        """`show` each of the service's messages of pending `record` again, at the step its
        person is on, with the quorum's new count."""
        for message in await self.sent_messages(record):
            with speaking(await self.language_in(message.chat)):
                card = card_of(
                    record.questions, Draft.from_json(message.draft), self.quorum(record)
                )
                await show(message, card)

    async def sent_messages(self, record: StoredQuestion) -> list[ChatMessage]:
        """The service's messages sent for `record` (kept and posted), to edit once it settled."""
        return [
            message
            for message in await self.store.chat_messages(record.rpc_id)
            if message.service == self.service and message.message
        ]

    async def tap(self, user: str, chat: str, ref: str) -> Tap | None:
        """The tap of `user` in `chat` on the message `ref`, if it counts (see the module)."""
        pairing = await self.paired(user)
        message = await self.store.chat_message(ref)
        if pairing is None or message is None or message.service != self.service:
            return None
        if not message.chat == chat == pairing.chat:
            return None
        record = await self.store.get(message.rpc_id)
        if record is None or not self.may_answer(pairing.person, record):
            return None
        return Tap(pairing, message, record)

    async def respond(self, tap: Tap, step: Answered | Dismissed) -> str:
        """Give the answer or the dismissal `step` as the tap's person; what to tell them."""
        identity = self.tokens.named(tap.pairing.person)
        if identity is None:
            return gettext(REFUSAL)
        result: AnswerResult | ErrorResult
        if isinstance(step, Answered):
            result = AnswerResult(ok=True, value=AnswerValue(answer=step.answer))
        else:
            result = ErrorResult.model_validate({"ok": False, "error": {"code": "cancelled"}})
        receipt = await self.hub.respond(
            ClientResponse(rpc_id=tap.record.rpc_id, result=result, digest=tap.message.digest),
            via=self.surface,
            by=tap.pairing.person,
            sees=viewer(identity),
        )
        if receipt.accepted and receipt.message is not None:
            # One approval of a quorum, counted: where it stands, in the person's language.
            return self.quorum(tap.record) or receipt.message
        if receipt.accepted:
            return gettext(SENT)
        if receipt.reason == "bad-response" and tap.message.digest not in (None, tap.record.card):
            return gettext("Not sent: the card changed since it was shown")
        if receipt.reason == "bad-response" and receipt.message is not None:
            return gettext("Not sent: {reason}").format(reason=receipt.message)
        known = await self.store.get(tap.record.rpc_id)
        return gettext(SENT) if known is None or known.pending else too_late(known)

    async def press(self, user: str, chat: str, ref: str, action: str) -> Reaction:
        """What the press of `user` in `chat` on the button `action` of the message `ref` does,
        done: the draft kept, or the answer given."""
        tap = await self.tap(user, chat, ref)
        if tap is None:
            return Reaction(None, gettext(REFUSAL))
        if not tap.record.pending:
            return Reaction(tap, too_late(tap.record), settled=tap.record)
        draft = Draft.from_json(tap.message.draft)
        return await self._advance(tap, draft, take_action(tap.record.questions, draft, action))

    async def typed(self, tap: Tap, text: str) -> Reaction:
        """What `text`, typed for the message of `tap` (an awaited "Other" or feedback), does."""
        if not tap.record.pending:
            return Reaction(tap, too_late(tap.record), settled=tap.record)
        draft = Draft.from_json(tap.message.draft)
        return await self._advance(tap, draft, take_text(tap.record.questions, draft, text))

    async def note(self, tap: Tap, text: str, question: str | None = None) -> Reaction:
        """What `text`, given as the note on the message of `tap` (on its question of id
        `question`, else on the one it shows), does: the draft kept with it, and the card that
        shows it; a note the host would refuse beside an answer changes nothing."""
        if not tap.record.pending:
            return Reaction(tap, too_late(tap.record), settled=tap.record)
        draft = Draft.from_json(tap.message.draft)
        try:
            step = take_note(tap.record.questions, draft, text, question)
        except UserQuestionError as error:
            return Reaction(tap, gettext(NOTE_REFUSED).format(reason=error.message))
        if step is None:
            return Reaction(tap, gettext(FORM_ON_PAGE if question is None else NOT_CURRENT))
        return await self._advance(tap, draft, step)

    async def _advance(self, tap: Tap, draft: Draft, step: Step) -> Reaction:
        if step is None:
            return Reaction(tap, gettext(NOT_CURRENT))
        if isinstance(step, WaitForNote):
            return Reaction(tap, alert=False, note=step)
        if isinstance(step, Answered | Dismissed):
            return Reaction(tap, await self.respond(tap, step), alert=False)
        await self.store.set_chat_draft(tap.message.ref, draft.to_json())
        if isinstance(step, WaitForText):
            return Reaction(tap, alert=False, prompt=step.prompt)
        card = card_of(tap.record.questions, step, self.quorum(tap.record))
        return Reaction(tap, alert=False, card=card)

    async def pair(self, code: str, user: str, chat: str, say: Say, post: Post) -> None:
        """Pair `user` (writing in `chat`) with the person `code` was made for, if it is a
        valid code of this service, and `say` so; then send them with `post` every request that
        already waits for them."""
        person = None
        if check_code(code) is not None:
            person = await self.store.redeem_pair_code(self.service, code)
        if person is None:
            unknown = gettext(
                "This code is unknown or expired; make a new one with uq chat pair {service} NAME."
            )
            await say(unknown.format(service=self.service))
            return
        pairing = ChatPairing(self.service, user, chat, person, datetime.now(UTC))
        await self.store.pair(pairing)
        logger.info("%s: user %s is paired as %s", self.service, user, person)
        with speaking(self.language_of(person)):
            await say(gettext("Paired: you answer here as {person}.").format(person=person))
        for record in await self.store.pending():
            await self.send(record, post, [pairing])

    async def deliver_forever(self, send: Deliver, edit: Deliver, show: Show) -> None:
        """`send` each request this host stores or routes again (an escalation step reaching
        new people), and every request already pending when it starts (asked while no bot ran,
        or on a node that stopped before sending it); `edit` the messages of each request it
        settles; `show` the messages of a request again when its quorum's count changes (`recount`);
        one after the other, for as long as it runs; a failure is logged, never
        raised. `send` sends only to `recipients`, so a request heard twice is sent once."""
        into, out = anyio.create_memory_object_stream[tuple[StoredQuestion, bool]](QUEUE)
        cards = OnePerCard(self.hub.shown_apart)  # a card's identical requests: one message

        def heard(record: StoredQuestion, *_: object) -> None:
            if cards.wanted(record):
                queue(record, tallied=False)

        def tallied(record: StoredQuestion, *_: object) -> None:
            queue(record, tallied=True)

        def queue(record: StoredQuestion, *, tallied: bool) -> None:
            try:
                into.send_nowait((record, tallied))
            except anyio.WouldBlock:
                logger.warning(
                    "%s: %d wait already; dropped %s", self.service, QUEUE, record.rpc_id
                )

        with into, out, contextlib.ExitStack() as stack:
            stack.callback(self.hub.on_event(heard))
            stack.callback(self.hub.on_routed(heard))
            stack.callback(self.hub.on_tally(tallied))
            try:
                for record in await self.store.pending():
                    heard(record)
            except Exception as error:  # the store: what is asked from now on is still sent
                logger.warning("%s: the pending requests were not read: %s", self.service, error)
            async for record, recounted in out:
                try:
                    if recounted:
                        await self.recount(record, show)
                    else:
                        await (send if record.pending else edit)(record)
                except Exception as error:  # the network, the service, the store: go on
                    logger.warning("%s: question %s: %s", self.service, record.rpc_id, error)
