"""The Telegram bot of a host: questions as messages with buttons, answered with a tap.

`telegram_bot(token, api, tokens)` is a host task. Every host sharing a store sends the requests
it commits to the paired chats of the people they are routed to (`roles.sees`), and edits every
message sent for a request it settles; one host at a time polls (`getUpdates`, after
`deleteWebhook`), holding the store's lease `telegram:<bot id>` and keeping the update offset in
the store, so another node takes over where it stopped. Network failures are backed off
(`MAX_BACKOFF` at most), a 429's `retry_after` is obeyed (`bot_api`), and nothing that happens
to a message ever stops the host.

Authority comes from the pairing, never from what an update says: a tap counts when its sender
is paired, the message is in that sender's own chat, and the person may answer the request; a
stranger gets a refusal alert and nothing changes. A tap after the request settled is told who
answered. Answers are recorded as the paired person, via `telegram`.

A note beside the answer is a reply (`reply_to_message`) to the request's message: found by the
chat and the message's id (`Store.chat_message_at`), it becomes the note on the question the
message shows, and the message is edited to show it; the tap that answers then sends it. A
reply to a message that is no request's, or to one that settled, is told so and changes nothing.
"""

from __future__ import annotations

import html
import logging
import re
import secrets
from dataclasses import replace
from functools import partial
from typing import Any

import anyio

from user_questions._languages import N_, gettext, speaking
from user_questions.host.chat.answering import REFUSAL, Answering, Reaction
from user_questions.host.chat.bot_api import BotApi, BotApiError, BotApiUnreachable
from user_questions.host.chat.cards import (
    Card,
    cut,
    detail_parts,
    ended_rows,
    ending_of,
)
from user_questions.host.chat.pairing import USERNAME_SETTING
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import HostTask, Hub
from user_questions.host.stores import ChatMessage, Store, StoredQuestion
from user_questions.outcomes import Surface

__all__ = [
    "LEASE_SECONDS",
    "MAX_BACKOFF",
    "MAX_MESSAGE_CHARACTERS",
    "POLL_SECONDS",
    "settled_text",
    "telegram_bot",
    "telegram_html",
]

logger = logging.getLogger("user_questions.host.chat")

SERVICE = "telegram"
POLL_SECONDS = 20
"""`getUpdates`' long-polling timeout."""
LEASE_SECONDS = 30.0
"""How long the poller's lease lasts unless renewed (before every `getUpdates`): a node that
dies is replaced by another within this."""
MAX_BACKOFF = 60.0
MAX_MESSAGE_CHARACTERS = 4096
"""A message's text after entity parsing, as the Bot API limits it."""
_DESCRIPTION_CHARACTERS = 300
_REPLY_FOR_NOTE = N_("Reply to this message to add a note to your answer.")
_NOTHING_AWAITED = N_("Nothing waits for a typed answer here; tap a button.")
_NOT_A_CARD = N_(
    "The message you replied to is not a question: reply to a question's message to add a note."
)


def telegram_bot(token: str, api: str, store: Store, tokens: Tokens) -> HostTask:
    """The host task running the bot of `token` at the Bot API `api` for `tokens`, keeping
    what it must in `store` (the host's)."""

    async def run(hub: Hub) -> None:
        import httpx  # here, not with the host: most hosts run no bot, and httpx is 5 MB

        async with httpx.AsyncClient() as client:
            await _TelegramBot(BotApi(token, api, client), hub, store, tokens).run()

    return run


class _TelegramBot:
    def __init__(self, api: BotApi, hub: Hub, store: Store, tokens: Tokens) -> None:
        self.api = api
        self.hub = hub
        self.store = store
        self.room = Answering(hub, store, tokens, Surface.TELEGRAM)
        self.node = secrets.token_hex(8)

    async def run(self) -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(
                self.room.deliver_forever, self._send_request, self._edit_settled, self._show
            )
            await self._poll_forever()

    async def _send_request(self, record: StoredQuestion) -> None:
        await self.room.send(record, self._post)

    async def _post(self, kept: ChatMessage, card: Card) -> str:
        text = telegram_html(card)
        if _visible_length(text) > MAX_MESSAGE_CHARACTERS and card.detail is not None:
            name = "plan.md" if card.plan_review else "detail.md"
            await self.api.call(
                "sendDocument",
                {
                    "chat_id": kept.chat,
                    "caption": gettext("The full text of: {question}").format(
                        question=card.question
                    )[:1000],
                },
                files={"document": (name, card.detail.encode(), "text/markdown")},
            )
            text = telegram_html(card, detail_attached=name)
        sent = await self.api.call(
            "sendMessage",
            {
                "chat_id": kept.chat,
                "text": _fit(text),
                "parse_mode": "HTML",
                "reply_markup": _keyboard(kept.ref, card),
            },
        )
        return str(sent["message_id"])

    async def _show(self, message: ChatMessage, card: Card) -> None:
        """Show `card` in `message` again (its quorum's new count)."""
        await self._edit(message, telegram_html(card), _keyboard(message.ref, card))

    async def _edit_settled(self, record: StoredQuestion) -> None:
        for message in await self.room.sent_messages(record):
            with speaking(await self.room.language_in(message.chat)):
                await self._edit(message, settled_text(record), {"inline_keyboard": []})

    async def _edit(self, message: ChatMessage, text: str, markup: dict[str, Any]) -> None:
        if not message.message:
            return  # kept before it was sent, and never sent
        try:
            await self.api.call(
                "editMessageText",
                {
                    "chat_id": message.chat,
                    "message_id": int(message.message),
                    "text": _fit(text),
                    "parse_mode": "HTML",
                    "reply_markup": markup,
                },
            )
        except BotApiError as error:
            if "not modified" not in error.description:
                raise

    # -- polling --------------------------------------------------------------------------------

    async def _poll_forever(self) -> None:
        lease = f"{SERVICE}:{self.api.bot_id}"
        try:
            await self._poll_holding(lease)
        finally:  # a host that stops hands the polling on at once, not when the lease runs out
            await self.room.release(lease, self.node)

    async def _poll_holding(self, lease: str) -> None:
        """Poll while this host holds `lease`; wait for it while another host does."""
        backoff = 1.0
        prepared = False
        offset_key = f"chat.telegram.offset.{self.api.bot_id}"
        while True:
            try:
                if not await self.store.take_lease(lease, self.node, LEASE_SECONDS):
                    prepared = False
                    await anyio.sleep(LEASE_SECONDS / 3)
                    continue
                if not prepared:
                    await self.api.call("deleteWebhook", {"drop_pending_updates": False})
                    me = await self.api.call("getMe")
                    await self.store.set_setting(USERNAME_SETTING, str(me["username"]))
                    prepared = True
                offset = int(await self.store.setting(offset_key) or 0)
                updates = await self.api.call(
                    "getUpdates",
                    {
                        "offset": offset,
                        "timeout": POLL_SECONDS,
                        "allowed_updates": ["message", "callback_query"],
                    },
                    seconds=POLL_SECONDS + 10,
                )
                for update in updates:
                    await self._handle(update)
                    offset = max(offset, int(update["update_id"]) + 1)
                    await self.store.set_setting(offset_key, str(offset))
                backoff = 1.0
            except Exception as error:  # the network, Telegram, the store: wait, try again
                if not isinstance(error, BotApiError | BotApiUnreachable):
                    logger.exception("Telegram: polling failed")
                else:
                    logger.warning("Telegram: %s; polling again in %.0f s", error, backoff)
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)

    async def _handle(self, update: dict[str, Any]) -> None:
        """An update, answered in the language of the person paired with its sender."""
        try:
            if isinstance(update.get("callback_query"), dict):
                query = update["callback_query"]
                with speaking(await self._language_of(query)):
                    await self._tapped(query)
            elif isinstance(update.get("message"), dict):
                with speaking(await self._language_of(update["message"])):
                    await self._written(update["message"])
        except (BotApiError, BotApiUnreachable) as error:
            logger.warning("Telegram: update %s: %s", update.get("update_id"), error)
        except (KeyError, TypeError, ValueError):
            logger.warning("Telegram: update %s is not as documented", update.get("update_id"))

    async def _language_of(self, sent: dict[str, Any]) -> str | None:
        pairing = await self.room.paired(str(sent["from"]["id"]))
        return None if pairing is None else self.room.language_of(pairing.person)

    async def _tapped(self, query: dict[str, Any]) -> None:
        ref, _, action = str(query.get("data", "")).partition(":")
        chat = str(query.get("message", {}).get("chat", {}).get("id"))
        reaction = await self.room.press(str(query["from"]["id"]), chat, ref, action)
        await self._react(query, reaction)

    async def _written(self, update: dict[str, Any]) -> None:
        text = update.get("text")
        chat = update.get("chat", {})
        if not isinstance(text, str) or chat.get("type") != "private":
            return
        chat_id, user = str(chat["id"]), str(update["from"]["id"])
        command, _, argument = text.strip().partition(" ")
        if command == "/start":
            say = partial(self._say_plain, chat_id)
            await self.room.pair(argument.strip(), user, chat_id, say, self._post)
            return
        pairing = await self.room.paired(user)
        if pairing is None or pairing.chat != chat_id:
            await self._say(
                chat_id,
                gettext(
                    "This chat is not paired with the host. Ask its admin for a code "
                    "(uq chat pair telegram NAME) and send /start CODE."
                ),
            )
            return
        replied = update.get("reply_to_message")
        if isinstance(replied, dict):
            sent = str(replied.get("message_id"))
            card = await self.store.chat_message_at(SERVICE, chat_id, sent)
            if card is not None:
                await self._noted(user, chat_id, card, text)
                return
        ref = await self.store.setting(_awaiting_key(chat_id))
        tap = None if not ref else await self.room.tap(user, chat_id, ref)
        if tap is None:
            await self._say_plain(chat_id, gettext(_NOT_A_CARD if replied else _NOTHING_AWAITED))
            return
        await self.store.set_setting(_awaiting_key(chat_id), "")
        reaction = await self.room.typed(tap, text)
        if reaction.settled is not None:
            await self._say(chat_id, reaction.told)
            return
        await self._react(None, reaction)

    async def _noted(self, user: str, chat: str, card: ChatMessage, text: str) -> None:
        """`text`, a reply to the request's message `card`, as the note on its answer: the
        message edited to show it, or the person told why not."""
        tap = await self.room.tap(user, chat, card.ref)
        if tap is None:
            await self._say_plain(chat, gettext(REFUSAL))
            return
        reaction = await self.room.note(tap, text)
        if reaction.card is None:
            await self._say_plain(chat, reaction.told)
            return
        await self._edit(card, telegram_html(reaction.card), _keyboard(card.ref, reaction.card))

    async def _react(self, query: dict[str, Any] | None, reaction: Reaction) -> None:
        """Show what a tap (`query`) or a typed reply (`None`) led to."""
        tap = reaction.tap
        if tap is None:
            if query is not None:
                await self._alert(query, reaction.told)
            return
        message = tap.message
        if not message.message and query is not None:  # tapped before its id was kept
            message = replace(message, message=str(query["message"]["message_id"]))
        if reaction.settled is not None:
            if query is not None:
                await self._alert(query, reaction.told)
            await self._edit(message, settled_text(reaction.settled), {"inline_keyboard": []})
            return
        if reaction.prompt is not None:
            await self.store.set_setting(_awaiting_key(message.chat), message.ref)
            await self.api.call(
                "sendMessage",
                {
                    "chat_id": message.chat,
                    "text": _fit(
                        gettext("Type your answer to: {question}").format(question=reaction.prompt)
                    ),
                    "reply_markup": {
                        "force_reply": True,
                        "input_field_placeholder": gettext("Your answer"),
                    },
                },
            )
        elif reaction.card is not None:
            card = reaction.card
            await self._edit(message, telegram_html(card), _keyboard(message.ref, card))
        elif reaction.note is not None and query is not None:  # no button asks for it here
            await self._alert(query, gettext(_REPLY_FOR_NOTE))
            return
        if query is not None:
            await self._alert(query, reaction.told, alert=reaction.alert)

    async def _alert(self, query: dict[str, Any], text: str, *, alert: bool = True) -> None:
        payload: dict[str, Any] = {"callback_query_id": query["id"]}
        if text:
            payload |= {"text": text[:200], "show_alert": alert}
        await self.api.call("answerCallbackQuery", payload)

    async def _say(self, chat: str, text: str) -> None:
        await self.api.call("sendMessage", {"chat_id": chat, "text": text, "parse_mode": "HTML"})

    async def _say_plain(self, chat: str, text: str) -> None:
        await self._say(chat, html.escape(text))


def telegram_html(card: Card, *, detail_attached: str | None = None) -> str:
    """`card` in Telegram's HTML, every text escaped; `detail_attached`: the detail was sent as
    this file, and the message says so instead of holding it."""
    parts = []
    if card.header:
        parts.append(f"<b>{html.escape(card.header)}</b>")
    parts.append(html.escape(card.question))
    if card.detail is not None:
        if detail_attached is None:
            parts.append(_detail_html(card.detail))
        else:
            above = gettext("The full text is in {file}, above.").format(file=detail_attached)
            parts.append(f"<i>{html.escape(above)}</i>")
    for number, line in enumerate(card.lines, 1):
        mark = "☑ " if line.chosen else ""
        text = f"{number}. {mark}<b>{html.escape(line.label)}</b>"
        if line.recommended:
            text += " ⭐ <i>" + html.escape(gettext("recommended")) + "</i>"
        if line.description:
            text += "\n    " + html.escape(cut(line.description, _DESCRIPTION_CHARACTERS))
        parts.append(text)
    for question, answer in card.summary:
        parts.append(f"<b>{html.escape(question)}</b>\n{html.escape(answer)}")
    if card.note is not None:
        parts.append("<i>" + html.escape(gettext("Note: {note}").format(note=card.note)) + "</i>")
    elif card.note_button is not None:
        parts.append("<i>" + html.escape(gettext(_REPLY_FOR_NOTE)) + "</i>")
    if card.quorum is not None:
        parts.append(f"<i>{html.escape(card.quorum)}</i>")
    return "\n\n".join(parts)


def settled_text(record: StoredQuestion) -> str:
    """The text a message of `record` is edited to once it settled: how, by whom, where."""
    lines = [f"<b>{html.escape(ending_of(record))}</b>"]
    for question, answer in ended_rows(record):
        lines.append(
            html.escape(question) + ("" if answer is None else f"\n→ {html.escape(answer)}")
        )
    return "\n\n".join(lines)


def _keyboard(ref: str, card: Card) -> dict[str, Any]:
    return {
        "inline_keyboard": [
            [{"text": cut(b.text, 100), "callback_data": f"{ref}:{b.action}"} for b in row]
            for row in card.buttons
        ]
    }


def _detail_html(markdown: str) -> str:
    """Fenced code as `<pre><code>`, the rest as escaped text."""
    parts = []
    for text, language in detail_parts(markdown):
        if language is None:
            parts.append(html.escape(text))
        else:
            named = f' class="language-{language}"' if language else ""
            parts.append(f"<pre><code{named}>{html.escape(text)}</code></pre>")
    return "".join(parts).strip()


def _visible_length(text: str) -> int:
    return len(html.unescape(re.sub(r"<[^>]+>", "", text)))


def _fit(text: str) -> str:
    """`text` cut to what a message holds (a cut inside a tag would break it, so a text too
    long is sent as plain, escaped text)."""
    if _visible_length(text) <= MAX_MESSAGE_CHARACTERS:
        return text
    plain = html.unescape(re.sub(r"<[^>]+>", "", text))
    return html.escape(cut(plain, MAX_MESSAGE_CHARACTERS - 100))


def _awaiting_key(chat: str) -> str:
    return f"chat.telegram.awaiting.{chat}"
