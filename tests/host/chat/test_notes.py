"""A note beside the answer from the chat apps, with a real bot of the host in process against
the fakes of Telegram and Slack (`tests/telegram_fake.py`, `tests/slack_fake.py`): typed in
Slack's note modal or replied to the card in Telegram, the note is shown on the card, reaches
the agent's answer with the choice, is shown on the answered card and is found in the history.
A reply to anything but a live card, or a note the host would refuse, changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.host.conftest import PICK
from tests.slack_fake import APP_TOKEN, BOT_TOKEN, FakeSlack, fake_slack
from tests.slack_fake import Message as SlackMessage
from tests.telegram_fake import TOKEN, FakeBotApi, fake_bot_api
from tests.telegram_fake import Message as TelegramMessage
from user_questions.host.chat.slack import slack_bot
from user_questions.host.chat.telegram import telegram_bot
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import HostTask, Hub
from user_questions.host.stores import ChatPairing, HistoryQuery, StoredQuestion
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.limits import MAX_ANSWER_NOTE_LENGTH
from user_questions.types import AskUserQuestionItem

pytestmark = pytest.mark.anyio

OWNER_CHAT = 42
"""The Telegram user (and private chat) paired as the host's owner."""
STRANGER_CHAT = 43
OWNER = "U0OWNER"
"""The Slack user paired as the host's owner."""
NOTE = "keep the lockfile as it is"
FORM = AskUserQuestionItem(
    id="form",
    question="Your details?",
    schema={"type": "object", "properties": {"name": {"type": "string"}}},
)


@dataclass
class Room:
    """A host's hub and store with one chat bot running, its owner paired."""

    hub: Hub
    store: SQLiteStore

    async def ask(
        self, rpc_id: str, questions: Sequence[AskUserQuestionItem] = (PICK,)
    ) -> anyio.Event:
        """Ask `questions`; an event set once the request settles."""
        settled = anyio.Event()
        await self.hub.submit(rpc_id, "s", questions, watcher=lambda _: settled.set())
        return settled

    async def waiting(self, rpc_id: str) -> bool:
        """Whether the request `rpc_id` is still pending."""
        record = await self.store.get(rpc_id)
        return record is not None and record.pending

    async def settled(self, rpc_id: str, event: anyio.Event) -> StoredQuestion:
        with anyio.fail_after(15):
            await event.wait()
        record = await self.store.get(rpc_id)
        assert record is not None
        assert not record.pending
        return record


@asynccontextmanager
async def running(
    tmp_path: Path, bot: Callable[[SQLiteStore, Tokens], HostTask], pairing: ChatPairing
) -> AsyncIterator[Room]:
    async with (
        SQLiteStore(tmp_path / "host.db") as store,
        Tokens(store, "owner-token-123", "agents-token-123") as tokens,
        Hub(store) as hub,
        anyio.create_task_group() as tasks,
    ):
        await store.pair(pairing)
        tasks.start_soon(bot(store, tokens), hub)
        yield Room(hub, store)
        tasks.cancel_scope.cancel()


async def waited(fake: FakeBotApi | FakeSlack, what: Callable[[], Any]) -> Any:
    """`fake.wait(what)`, in a thread: the bot runs on this loop meanwhile."""
    return await anyio.to_thread.run_sync(fake.wait, what)


def answered_items(record: StoredQuestion) -> list[dict[str, Any]]:
    assert record.answer is not None
    return [item.model_dump(exclude_none=True) for item in record.answer.answers]


async def went_with_the_answer(
    room: Room,
    settled: anyio.Event,
    fake: FakeBotApi | FakeSlack,
    card: TelegramMessage | SlackMessage,
) -> None:
    """Once `b` was chosen on request r1's `card`: the answer carries `NOTE`, the answered card
    shows it, and a history search finds the request by a word of it."""
    record = await room.settled("r1", settled)
    assert answered_items(record) == [{"id": "pick", "selected": ["b"], "note": NOTE}]
    await waited(fake, lambda: not card.buttons)
    assert f"→ b (note: {NOTE})" in card.shown
    found = await room.store.history(HistoryQuery(terms=("lockfile",)))
    assert [r.rpc_id for r in found.records] == ["r1"]


# -- Telegram: a reply to the card --------------------------------------------------------------


@pytest.fixture
def telegram() -> Any:
    with fake_bot_api() as fake:
        yield fake


def telegram_room(tmp_path: Path, fake: FakeBotApi) -> Any:
    pairing = ChatPairing("telegram", str(OWNER_CHAT), str(OWNER_CHAT), "owner", datetime.now(UTC))
    return running(tmp_path, lambda s, t: telegram_bot(TOKEN, fake.url, s, t), pairing)


async def card_in(fake: FakeBotApi, chat: int = OWNER_CHAT) -> TelegramMessage:
    """The request's message (with buttons) in `chat`."""
    found = await waited(fake, lambda: [m for m in fake.messages_in(chat) if m.buttons])
    return found[0]  # type: ignore[no-any-return]


async def said(fake: FakeBotApi, text: str, chat: int = OWNER_CHAT) -> None:
    """Wait for the bot to write a message holding `text` into `chat`."""
    await waited(fake, lambda: any(text in m.shown for m in fake.messages_in(chat)))


async def test_a_reply_to_the_telegram_card_is_the_note_its_answer_carries(
    tmp_path: Path, telegram: FakeBotApi
) -> None:
    async with telegram_room(tmp_path, telegram) as room:
        settled = await room.ask("r1")
        card = await card_in(telegram)
        assert "Reply to this message to add a note to your answer." in card.shown

        telegram.send(OWNER_CHAT, NOTE, reply_to=card)
        await waited(telegram, lambda: f"Note: {NOTE}" in card.shown)
        assert card.buttons  # still waiting for the choice
        assert await room.waiting("r1")

        telegram.tap(OWNER_CHAT, card, "b")
        await went_with_the_answer(room, settled, telegram, card)


async def test_a_reply_to_a_settled_or_unknown_message_or_a_form_is_refused_and_changes_nothing(
    tmp_path: Path, telegram: FakeBotApi
) -> None:
    async with telegram_room(tmp_path, telegram) as room:
        settled = await room.ask("r1")
        card = await card_in(telegram)
        telegram.tap(OWNER_CHAT, card, "a")
        await room.settled("r1", settled)
        await waited(telegram, lambda: not card.buttons)
        edits = card.edits

        telegram.send(OWNER_CHAT, NOTE, reply_to=card)
        await said(telegram, "Too late: answered by owner via telegram.")
        nobody = TelegramMessage(OWNER_CHAT, 9999, "not a card", None)
        telegram.send(OWNER_CHAT, NOTE, reply_to=nobody)
        await said(telegram, "The message you replied to is not a question")
        telegram.send(STRANGER_CHAT, NOTE, reply_to=card)  # a stranger, in their own chat
        await said(telegram, "This chat is not paired with the host", STRANGER_CHAT)

        await room.ask("r2", [FORM])
        form = await waited(telegram, lambda: [m for m in telegram.messages if m.buttons])
        telegram.send(OWNER_CHAT, NOTE, reply_to=form[0])
        await said(telegram, "This question is a form: fill it in on the page.")
        record = await room.store.get("r1")
        assert record is not None
        assert answered_items(record) == [{"id": "pick", "selected": ["a"]}]
        assert card.edits == edits
        assert form[0].edits == 0
        assert "Note:" not in form[0].shown


async def test_a_note_longer_than_the_host_takes_is_refused_and_the_request_still_waits(
    tmp_path: Path, telegram: FakeBotApi
) -> None:
    async with telegram_room(tmp_path, telegram) as room:
        settled = await room.ask("r1")
        card = await card_in(telegram)
        telegram.send(OWNER_CHAT, "x" * (MAX_ANSWER_NOTE_LENGTH + 1), reply_to=card)
        await said(telegram, "The note was not kept:")
        (told,) = [m.shown for m in telegram.messages_in(OWNER_CHAT) if "not kept" in m.shown]
        assert f"at most {MAX_ANSWER_NOTE_LENGTH} are allowed" in told
        assert card.edits == 0
        assert await room.waiting("r1")

        telegram.tap(OWNER_CHAT, card, "a")  # the refused note is nowhere
        record = await room.settled("r1", settled)
        assert answered_items(record) == [{"id": "pick", "selected": ["a"]}]


# -- Slack: the note modal ----------------------------------------------------------------------


@pytest.fixture
def slack() -> Any:
    with fake_slack() as fake:
        yield fake
        assert fake.late_acks == []


def slack_room(tmp_path: Path, fake: FakeSlack) -> Any:
    channel = FakeSlack.channel_of(OWNER)
    pairing = ChatPairing("slack", OWNER, channel, "owner", datetime.now(UTC))
    return running(tmp_path, lambda s, t: slack_bot(APP_TOKEN, BOT_TOKEN, fake.url, s, t), pairing)


async def slack_card(fake: FakeSlack) -> SlackMessage:
    channel = FakeSlack.channel_of(OWNER)
    found = await waited(fake, lambda: [m for m in fake.messages_in(channel) if m.buttons])
    return found[0]  # type: ignore[no-any-return]


async def test_a_note_typed_in_slacks_modal_reaches_the_answer_and_the_history(
    tmp_path: Path, slack: FakeSlack
) -> None:
    async with slack_room(tmp_path, slack) as room:
        settled = await room.ask("r1")
        card = await slack_card(slack)
        assert card.labels == ["a", "b", "Other…", "Dismiss", "Add a note…"]

        slack.click(OWNER, card, "Add a note")
        (view,) = await waited(slack, lambda: slack.views)
        assert view.view["callback_id"] == "uq_note"
        assert view.view["blocks"][0]["label"]["text"] == "Which one?"
        slack.submit(OWNER, view, NOTE)
        await waited(slack, lambda: f"Note: {NOTE}" in card.shown)
        assert card.labels[-1] == "Change the note…"

        slack.click(OWNER, card, "Change the note")  # the modal holds the note kept
        await waited(slack, lambda: len(slack.views) == 2)
        assert slack.views[1].view["blocks"][0]["element"]["initial_value"] == NOTE

        slack.click(OWNER, card, "b")
        await went_with_the_answer(room, settled, slack, card)


async def test_a_slack_note_goes_to_the_question_it_was_written_for_and_an_empty_one_goes(
    tmp_path: Path, slack: FakeSlack
) -> None:
    second = AskUserQuestionItem(id="second", question="And then?", options=PICK.options)
    async with slack_room(tmp_path, slack) as room:
        settled = await room.ask("r1", [PICK, second])
        card = await slack_card(slack)
        slack.click(OWNER, card, "Add a note")
        (view,) = await waited(slack, lambda: slack.views)
        slack.click(OWNER, card, "a")  # on to the second question before the note is kept
        await waited(slack, lambda: "And then?" in card.shown)
        slack.submit(OWNER, view, NOTE)
        await waited(slack, lambda: card.edits == 2)
        assert "Note:" not in card.shown  # the second question has none

        slack.click(OWNER, card, "b")  # the summary: the first question's row holds the note
        await waited(slack, lambda: f"a (note: {NOTE})" in card.shown)
        assert card.labels[-1] == "Change the note…"  # the summary's note: the first question's
        slack.click(OWNER, card, "Change the note")
        await waited(slack, lambda: len(slack.views) == 2)
        slack.submit(OWNER, slack.views[1], "")  # emptied: the note goes
        await waited(slack, lambda: "(note:" not in card.shown)

        slack.click(OWNER, card, "Send")
        record = await room.settled("r1", settled)
        assert answered_items(record) == [
            {"id": "pick", "selected": ["a"]},
            {"id": "second", "selected": ["b"]},
        ]
