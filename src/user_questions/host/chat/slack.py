"""The Slack app of a host: questions as Block Kit messages in direct messages, answered with a
click, over Socket Mode (outbound only: no public URL).

`slack_bot(app_token, bot_token, api, store, tokens)` is a host task. Every host sharing a store
sends the requests it commits to the paired direct messages of the people they are routed to
(`roles.sees`) with `chat.postMessage`, and edits every message sent for a request it settles
with `chat.update`. One host at a time holds the Socket Mode connection: the store's lease
`slack:<bot id>` (renewed while connected), so each envelope's effect happens once. The
connection comes from `apps.connections.open`; every envelope is acknowledged as soon as it is
read (well within Slack's 3 seconds), then handled once (deduplicated by `envelope_id`); on a
`disconnect` message the host reconnects at once, on a dropped socket or an error it backs off
(`MAX_BACKOFF` at most). Nothing that happens to a message ever stops the host.

Authority comes from the pairing, never from what a payload says: every `block_actions` and
`view_submission` goes through `answering`, and anyone else is told so ephemerally.

A note beside the answer is typed in a modal that the card's "Add a note…" button opens
(`note_view`); its submission keeps the note in the message's draft, on the question the button
was shown for, and the card shows it until the click that answers sends it.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections import OrderedDict
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import ObjectReceiveStream

from user_questions._languages import N_, gettext, speaking
from user_questions.host.chat.answering import REFUSAL, SENT, Answering, Reaction
from user_questions.host.chat.cards import Card, cut, ending_of
from user_questions.host.chat.slack_api import SlackApi, SlackApiError, SlackApiUnreachable
from user_questions.host.chat.slack_blocks import (
    MODAL_CALLBACK,
    NOTE_CALLBACK,
    card_blocks,
    detail_apart,
    detail_messages,
    escape,
    modal_view,
    note_view,
    settled_blocks,
)
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import HostTask, Hub
from user_questions.host.stores import ChatMessage, Store, StoredQuestion
from user_questions.outcomes import Surface

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

__all__ = ["LEASE_SECONDS", "MAX_BACKOFF", "REMEMBERED_ENVELOPES", "SocketFailed", "slack_bot"]

logger = logging.getLogger("user_questions.host.chat")

SERVICE = "slack"
LEASE_SECONDS = 30.0
"""How long the connection's lease lasts unless renewed (every third of it while connected): a
node that dies is replaced by another within this."""
MAX_BACKOFF = 60.0
REMEMBERED_ENVELOPES = 1000
"""The latest envelope ids kept to drop one Slack sends again."""
_NOT_PAIRED = N_(
    "This conversation is not paired with the host. Ask its admin for a code "
    "(uq chat pair slack NAME) and send pair CODE here."
)


def slack_bot(app_token: str, bot_token: str, api: str, store: Store, tokens: Tokens) -> HostTask:
    """The host task running the Slack app of `app_token` (Socket Mode) and `bot_token` (its
    messages) at the Web API `api` for `tokens`, keeping what it must in `store`."""

    async def run(hub: Hub) -> None:
        import httpx  # here, not with the host: most hosts run no bot, and httpx is 5 MB

        async with httpx.AsyncClient() as client:
            app, bot = SlackApi(app_token, api, client), SlackApi(bot_token, api, client)
            await _SlackBot(app, bot, hub, store, tokens).run()

    return run


class SocketFailed(Exception):
    """The Socket Mode connection could not be opened."""


class _SlackBot:
    def __init__(self, app: SlackApi, bot: SlackApi, hub: Hub, store: Store, tokens: Tokens):
        self.app = app
        self.bot = bot
        self.store = store
        self.room = Answering(hub, store, tokens, Surface.SLACK)
        self.node = secrets.token_hex(8)
        self.lease: str | None = None
        """`slack:<bot id>`, once `auth.test` has named the bot."""
        self.seen: OrderedDict[str, None] = OrderedDict()
        self.to_handle, self.handling = anyio.create_memory_object_stream[dict[str, Any]](
            REMEMBERED_ENVELOPES
        )

    async def run(self) -> None:
        with self.to_handle, self.handling:  # closed however the bot stops
            await self._run()

    async def _run(self) -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(
                self.room.deliver_forever, self._send_request, self._edit_settled, self._show
            )
            tasks.start_soon(self._work, self.handling)
            await self._connect_forever()

    # -- messages -------------------------------------------------------------------------------

    async def _send_request(self, record: StoredQuestion) -> None:
        await self.room.send(record, self._post)

    async def _post(self, kept: ChatMessage, card: Card) -> str:
        apart = await self._post_detail(kept.chat, card) if detail_apart(card) else 0
        sent = await self.bot.call(
            "chat.postMessage",
            {
                "channel": kept.chat,
                "text": cut(escape(card.question), 3000),
                "blocks": card_blocks(kept.ref, card, apart=apart),
            },
        )
        return str(sent["ts"])

    async def _post_detail(self, channel: str, card: Card) -> int:
        """Post the card's whole detail in messages of its own; how many."""
        messages = detail_messages(card)
        for blocks in messages:
            question = cut(escape(card.question), 200)
            text = gettext("The full text of: {question}").format(question=question)
            await self.bot.call(
                "chat.postMessage", {"channel": channel, "text": text, "blocks": blocks}
            )
        return len(messages)

    async def _show(self, message: ChatMessage, card: Card) -> None:
        """Show `card` in `message` again (its quorum's new count); a detail sent apart stays
        where it is."""
        apart = len(detail_messages(card)) if detail_apart(card) else 0
        blocks = card_blocks(message.ref, card, apart=apart)
        await self._update(message, cut(escape(card.question), 3000), blocks)

    async def _edit_settled(self, record: StoredQuestion) -> None:
        for message in await self.room.sent_messages(record):
            with speaking(await self.room.language_in(message.chat)):
                await self._update(message, ending_of(record), settled_blocks(record))

    async def _update(self, message: ChatMessage, text: str, blocks: list[dict[str, Any]]) -> None:
        if not message.message:
            return  # kept before it was sent, and never sent
        await self.bot.call(
            "chat.update",
            {"channel": message.chat, "ts": message.message, "text": text, "blocks": blocks},
        )

    async def _tell(self, channel: str, user: str, text: str) -> None:
        """An ephemeral message: only `user` sees it."""
        await self.bot.call("chat.postEphemeral", {"channel": channel, "user": user, "text": text})

    async def _say(self, channel: str, text: str) -> None:
        await self.bot.call("chat.postMessage", {"channel": channel, "text": text})

    async def _say_plain(self, channel: str, text: str) -> None:
        await self._say(channel, escape(text))

    # -- Socket Mode ---------------------------------------------------------------------------

    async def _connect_forever(self) -> None:
        try:
            await self._connect_holding()
        finally:  # a host that stops hands the connection on at once
            if self.lease is not None:
                await self.room.release(self.lease, self.node)

    async def _connect_holding(self) -> None:
        """Hold the Socket Mode connection while this host holds the lease; wait for it while
        another host does."""
        backoff = 1.0
        while True:
            try:
                if self.lease is None:
                    me = await self.bot.call("auth.test")
                    self.lease = f"{SERVICE}:{me.get('bot_id') or me['user_id']}"
                lease = self.lease
                if not await self.store.take_lease(lease, self.node, LEASE_SECONDS):
                    await anyio.sleep(LEASE_SECONDS / 3)
                    continue
                opened = await self.app.call("apps.connections.open")
                if await self._session(str(opened["url"]), lease):
                    backoff = 1.0
                    continue  # asked to reconnect: at once
                logger.warning("Slack: the connection was lost; again in %.0f s", backoff)
            except Exception as error:  # the network, Slack, the store: wait, try again
                if isinstance(error, SlackApiError | SlackApiUnreachable | SocketFailed):
                    logger.warning("Slack: %s; connecting again in %.0f s", error, backoff)
                elif isinstance(error, OSError | TimeoutError):
                    logger.warning("Slack: %s; again in %.0f s", type(error).__name__, backoff)
                else:
                    logger.exception("Slack: the connection failed")
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)

    async def _session(self, url: str, lease: str) -> bool:
        """Read one connection's envelopes until it ends; whether Slack asked to reconnect (a
        `disconnect` message) after a `hello`. The URL holds a ticket: it is never logged.

        Raises:
            SocketFailed: the connection could not be made.
        """
        # The extra's (checked by `require_slack_extra` when the host starts): imported here,
        # so that a host without Slack never needs it.
        from websockets.asyncio.client import connect
        from websockets.exceptions import WebSocketException

        try:
            socket = await connect(url, open_timeout=10, max_size=2**22)
        except WebSocketException as error:  # its text may hold the URL: only its kind
            raise SocketFailed(f"Socket Mode: {type(error).__name__}") from None
        async with socket, anyio.create_task_group() as tasks:
            tasks.start_soon(self._keep_lease, socket, lease)
            try:
                asked = await self._read(socket)
            except WebSocketException:  # dropped: reconnect after a back-off
                asked = False
            tasks.cancel_scope.cancel()
        return asked

    async def _keep_lease(self, socket: ClientConnection, lease: str) -> None:
        while True:
            await anyio.sleep(LEASE_SECONDS / 3)
            if not await self.store.take_lease(lease, self.node, LEASE_SECONDS):
                logger.warning("Slack: another host holds the connection now")
                await socket.close()
                return

    async def _read(self, socket: ClientConnection) -> bool:
        greeted = False
        async for raw in socket:
            try:
                envelope = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(envelope, dict):
                continue
            envelope_id = envelope.get("envelope_id")
            if isinstance(envelope_id, str):
                await socket.send(json.dumps({"envelope_id": envelope_id}))
            kind = envelope.get("type")
            if kind == "hello":
                greeted = True
            elif kind == "disconnect":
                return greeted
            elif isinstance(envelope_id, str) and self._first(envelope_id):
                try:
                    self.to_handle.send_nowait(envelope)
                except anyio.WouldBlock:
                    logger.warning("Slack: too many envelopes wait; dropped %s", envelope_id)
        return False

    def _first(self, envelope_id: str) -> bool:
        """Whether `envelope_id` is new (Slack sends an envelope again until it is acked)."""
        if envelope_id in self.seen:
            return False
        self.seen[envelope_id] = None
        while len(self.seen) > REMEMBERED_ENVELOPES:
            self.seen.popitem(last=False)
        return True

    async def _work(self, envelopes: ObjectReceiveStream[dict[str, Any]]) -> None:
        async for envelope in envelopes:
            try:
                await self._handle(envelope)
            except (SlackApiError, SlackApiUnreachable) as error:
                logger.warning("Slack: envelope %s: %s", envelope.get("envelope_id"), error)
            except (KeyError, TypeError, ValueError, AttributeError):
                logger.warning("Slack: envelope %s is not as documented", envelope.get("type"))
            except Exception:
                logger.exception("Slack: envelope %s failed", envelope.get("type"))

    async def _handle(self, envelope: dict[str, Any]) -> None:
        payload = envelope["payload"]
        if envelope.get("type") == "events_api":
            event = payload.get("event") or {}
            typed = not event.get("bot_id") and not event.get("subtype")
            if event.get("type") == "message" and event.get("channel_type") == "im" and typed:
                await self._written(event)
        elif envelope.get("type") == "interactive":
            with speaking(await self._language_of(str(payload["user"]["id"]))):
                if payload.get("type") == "block_actions":
                    await self._clicked(payload)
                elif payload.get("type") == "view_submission":
                    await self._submitted(payload)

    async def _language_of(self, user: str) -> str | None:
        """The own language of the person paired as Slack's `user` (`None`: the host's)."""
        pairing = await self.room.paired(user)
        return None if pairing is None else self.room.language_of(pairing.person)

    # -- what people do ------------------------------------------------------------------------

    async def _written(self, event: dict[str, Any]) -> None:
        text, user, channel = (
            str(event.get("text") or ""),
            str(event["user"]),
            str(event["channel"]),
        )
        command, _, code = text.strip().partition(" ")
        if command.lower() == "pair":
            say = partial(self._say_plain, channel)
            await self.room.pair(code.strip(), user, channel, say, self._post)
            return
        pairing = await self.room.paired(user)
        if pairing is None or pairing.chat != channel:
            await self._say(channel, gettext(_NOT_PAIRED))
            return
        with speaking(self.room.language_of(pairing.person)):
            await self._say(
                channel, gettext("Answer with the buttons; Other… opens a form to type in.")
            )

    async def _clicked(self, payload: dict[str, Any]) -> None:
        user = str(payload["user"]["id"])
        container = payload.get("container") or {}
        channel = str((payload.get("channel") or {}).get("id") or container["channel_id"])
        ref, _, action = str(payload["actions"][0].get("value", "")).partition(":")
        reaction = await self.room.press(user, channel, ref, action)
        await self._react(reaction, user, channel, container.get("message_ts"), payload)

    async def _submitted(self, payload: dict[str, Any]) -> None:
        """A modal sent: the "Other" text or feedback (`modal_view`), or a note (`note_view`)."""
        view = payload["view"]
        callback = view.get("callback_id")
        if callback not in (MODAL_CALLBACK, NOTE_CALLBACK):
            return
        kept = json.loads(view["private_metadata"])
        user, channel, ref = str(payload["user"]["id"]), str(kept["channel"]), str(kept["ref"])
        block = "answer" if callback == MODAL_CALLBACK else "note"
        text = str(view["state"]["values"][block]["text"].get("value") or "")
        tap = await self.room.tap(user, channel, ref)
        if tap is None:
            await self._tell(channel, user, gettext(REFUSAL))
            return
        if callback == MODAL_CALLBACK:
            reaction = await self.room.typed(tap, text)
        else:
            reaction = await self.room.note(tap, text, str(kept["question"]))
        await self._react(reaction, user, channel, None, None)

    async def _react(
        self,
        reaction: Reaction,
        user: str,
        channel: str,
        ts: str | None,
        payload: dict[str, Any] | None,
    ) -> None:
        """Show what a click (`payload`) or a modal's text led to."""
        tap = reaction.tap
        if tap is None:
            await self._tell(channel, user, reaction.told)
            return
        message = tap.message
        if not message.message and ts:  # clicked before its ts was kept
            message = replace(message, message=str(ts))
        if reaction.settled is not None:
            await self._tell(channel, user, reaction.told)
            await self._update(
                message, ending_of(reaction.settled), settled_blocks(reaction.settled)
            )
            return
        if reaction.prompt is not None and payload is not None:
            view = modal_view(reaction.prompt, message.ref, message.chat)
            await self.bot.call("views.open", {"trigger_id": payload["trigger_id"], "view": view})
        elif reaction.note is not None and payload is not None:
            view = note_view(reaction.note, message.ref, message.chat)
            await self.bot.call("views.open", {"trigger_id": payload["trigger_id"], "view": view})
        elif reaction.card is not None:
            card = reaction.card
            apart = await self._post_detail(message.chat, card) if detail_apart(card) else 0
            blocks = card_blocks(message.ref, card, apart=apart)
            await self._update(message, cut(escape(card.question), 3000), blocks)
        if reaction.told and reaction.told != gettext(SENT):
            await self._tell(channel, user, reaction.told)
