"""Notifications grouped: a person's notifier hears of a card of identical requests once (and of
none of their settlements but the card's), a flood of cards as the first few and then one
"N more questions are waiting" digest; a webhook still gets every event."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.host.conftest import PICK, answer
from tests.host.notify.helpers import notifying_hub, receiving
from tests.host.notify.test_apprise import ADDRESS
from tests.host.notify.test_webhook import quick
from tests.receivers import http_receiver
from user_questions.host.hub import Hub
from user_questions.host.notify.apprise import AppriseNotifier
from user_questions.host.notify.events import EVENT_PENDING, EVENT_WAITING, HostEvent
from user_questions.host.notify.message import message_of
from user_questions.host.notify.telling import Telling
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Surface
from user_questions.types import AskUserQuestionItem

pytestmark = pytest.mark.anyio


def distinct(number: int) -> AskUserQuestionItem:
    return PICK.model_copy(update={"question": f"Which one, {number}?"})


async def test_a_person_hears_of_a_card_once_while_a_webhook_gets_every_event(
    tmp_path: Path,
) -> None:
    with http_receiver() as person:
        people = AppriseNotifier(
            f"json://{person.netloc}/inbox", address=ADDRESS, links=None, settled=True
        )
        async with receiving() as program:
            async with notifying_hub(tmp_path, people, quick(program.url)) as hub:
                for number in range(4):
                    await hub.submit(f"r{number}", "loop", [PICK], asked_by="runaway")
                yes = answer("r0", "loop", {"id": "pick", "selected": ["a"]})
                assert (await hub.respond(yes, via=Surface.WEB)).accepted
                hooks = await program.wait_for(8)
            posts = await anyio.to_thread.run_sync(person.posts.wait_for, 2)
    assert sorted(hook.json["id"] for hook in hooks) == sorted(
        f"r{number}:{kind}" for number in range(4) for kind in ("pending", "settled")
    )
    told = [post.json["title"] for post in posts]
    assert told[0] == "Question from loop"
    assert told[1].startswith("Answered")
    assert len(person.posts.items) == 2  # nothing more for the three the card stood for


async def test_a_flood_is_the_first_few_then_one_digest(tmp_path: Path) -> None:
    heard: list[HostEvent] = []
    digested = anyio.Event()

    def hear(event: HostEvent) -> None:
        heard.append(event)
        if event.type == EVENT_WAITING:
            digested.set()

    async with SQLiteStore(tmp_path / "host.db") as store, Hub(store) as hub:
        telling = Telling(hear, hub, first=2, window=0.5)
        hub.on_event(telling.tell)
        async with anyio.create_task_group() as digests:
            digests.start_soon(telling.run)
            for number in range(7):
                await hub.submit(f"r{number}", f"agent-{number}", [distinct(number)])
            await hub.withdraw("r6", via=Surface.ASKER)  # settled before the digest: not in it
            with anyio.fail_after(10):
                await digested.wait()
            digests.cancel_scope.cancel()
    assert [event.type for event in heard] == [EVENT_PENDING, EVENT_PENDING, EVENT_WAITING]
    assert [event.rpc_id for event in heard] == ["r0", "r1", "r5"]
    digest = heard[2]
    assert digest.waiting == 4
    message = message_of(digest, ADDRESS, None, "json")
    assert message.title == "4 more questions are waiting"
    assert "The latest: Which one, 5?" in message.body
    assert f"Open the inbox: {ADDRESS.link('')}" in message.body
    korean = message_of(digest, ADDRESS, None, "json", language="ko")
    assert korean.title == "질문 4개가 더 기다리고 있습니다"
    assert "최근 질문: Which one, 5?" in korean.body
    assert f"받은 질문 열기: {ADDRESS.link('')}" in korean.body
    thousands = digest.model_copy(update={"waiting": 3000})
    assert message_of(thousands, ADDRESS, None, "json").title == (
        "3,000 more questions are waiting"
    )
