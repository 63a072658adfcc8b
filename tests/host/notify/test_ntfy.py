"""`NtfyNotifier` against an ntfy server on loopback written from ntfy's docs
(`tests/ntfy_fake.py`): the question with `http` buttons that are answer links, at most three,
none where one tap cannot answer; the settled message under the same sequence id, replacing it;
the URL's credentials, priority and tags; text outside ASCII in encoded words; `--notify
ntfy://` picking it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from tests.host.conftest import MANY, PICK, answer
from tests.host.notify.helpers import notifying_hub
from tests.ntfy_fake import FakeNtfy, Message, ntfy_server
from user_questions.approvals import approval_question
from user_questions.host.gate.public_url import public_url
from user_questions.host.notify.apprise import AppriseNotifier
from user_questions.host.notify.links import AnswerLinks
from user_questions.host.notify.ntfy import NtfyNotifier, service_notifier
from user_questions.outcomes import Surface
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

pytestmark = pytest.mark.anyio

ADDRESS = public_url("https://uq.example.com/team/")
LINKS = AnswerLinks("a-test-key-of-some-length")


@pytest.fixture
def ntfy() -> Iterator[FakeNtfy]:
    with ntfy_server() as running:
        yield running


async def published(ntfy: FakeNtfy, count: int) -> list[Message]:
    return await anyio.to_thread.run_sync(ntfy.messages.wait_for, count)


async def test_a_question_gets_a_button_per_option_posting_to_its_answer_link(
    tmp_path: Path, ntfy: FakeNtfy
) -> None:
    notifier = NtfyNotifier(f"ntfy://{ntfy.netloc}/uq-questions", address=ADDRESS, links=LINKS)
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "ci-bot", [PICK])
        (message,) = await published(ntfy, 1)
    assert ntfy.refused.items == []
    assert (message.topic, message.title) == ("uq-questions", "Question from ci-bot")
    assert message.click == "https://uq.example.com/team/q/r1"
    assert message.sequence_id is not None
    assert [(a["action"], a["label"], a["method"], a["clear"]) for a in message.actions] == [
        ("http", "a", "POST", True),
        ("http", "b", "POST", True),
    ]
    for index, action in enumerate(message.actions):
        grant = LINKS.verify(action["url"].removeprefix("https://uq.example.com/team/a/"))
        assert grant is not None
        assert (grant.rpc_id, grant.question, grant.option, grant.channel) == (
            "r1",
            0,
            index,
            "ntfy",
        )
    assert "/a/" not in message.message  # the buttons are the answer links


async def test_an_approval_offers_allow_and_deny_but_never_the_rule(
    tmp_path: Path, ntfy: FakeNtfy
) -> None:
    notifier = NtfyNotifier(f"ntfy://{ntfy.netloc}/uq", address=ADDRESS, links=LINKS)
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [approval_question("Bash", {"command": "make"})])
        (message,) = await published(ntfy, 1)
    assert [action["label"] for action in message.actions] == ["Allow", "Deny"]


@pytest.mark.parametrize(
    "question",
    [
        MANY,  # multi-select: the page
        AskUserQuestionItem(
            id="four",
            question="Which?",
            options=[AskUserQuestionOption(label=label) for label in "abcd"],
        ),  # more options than ntfy has buttons
        AskUserQuestionItem(
            id="long",
            question="Which?",
            options=[AskUserQuestionOption(label="x" * 41), AskUserQuestionOption(label="y")],
        ),  # a label too long for a button
    ],
    ids=["multi-select", "four-options", "long-label"],
)
async def test_a_question_one_tap_cannot_answer_has_no_buttons_and_keeps_its_links(
    tmp_path: Path, ntfy: FakeNtfy, question: AskUserQuestionItem
) -> None:
    notifier = NtfyNotifier(f"ntfy://{ntfy.netloc}/uq", address=ADDRESS, links=LINKS)
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [question])
        (message,) = await published(ntfy, 1)
    assert message.actions == []
    assert "Open it: https://uq.example.com/team/q/r1" in message.message


async def test_the_settled_message_replaces_the_question_under_its_sequence_id(
    tmp_path: Path, ntfy: FakeNtfy
) -> None:
    notifier = NtfyNotifier(f"ntfy://{ntfy.netloc}/uq", address=ADDRESS, links=LINKS)
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [PICK])
        await hub.submit("r2", "s", [PICK])
        await published(ntfy, 2)
        chosen = {"id": "pick", "selected": ["b"]}
        await hub.respond(answer("r1", "s", chosen), via=Surface.WEB, by="alice")
        first, second, settled = await published(ntfy, 3)
    # The two questions are published concurrently: tell them apart by the request they open.
    question, other = (first, second) if first.click == f"{ADDRESS.base}q/r1" else (second, first)
    assert other.click == f"{ADDRESS.base}q/r2"
    assert settled.sequence_id == question.sequence_id != other.sequence_id
    assert settled.actions == []
    assert settled.title == "Answered: Which one?"
    assert "Answered: b" in settled.message
    shown = {key[1]: message.title for key, message in ntfy.shown.items()}
    assert shown == {question.sequence_id: "Answered: Which one?", other.sequence_id: other.title}


async def test_the_urls_token_priority_and_tags_and_text_beyond_ascii_arrive_as_ntfy_reads_them(
    tmp_path: Path, ntfy: FakeNtfy
) -> None:
    ntfy.authorization = "Bearer tk_secret"
    url = f"ntfy://{ntfy.netloc}/uq?auth=token&token=tk_secret&priority=high&tags=robot,warning"
    notifier = NtfyNotifier(url, address=ADDRESS, links=LINKS)
    korean = AskUserQuestionItem(
        id="ko",
        question="배포할까요?",
        options=[AskUserQuestionOption(label="네"), AskUserQuestionOption(label="아니요")],
    )
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "세션", [korean])
        (message,) = await published(ntfy, 1)
    assert ntfy.refused.items == []
    assert (message.priority, message.tags) == (4, ["robot", "warning"])
    assert message.title == "Question from 세션"
    assert [action["label"] for action in message.actions] == ["네", "아니요"]
    assert message.message.startswith("배포할까요?")


async def test_a_refused_publish_is_counted_and_a_wrong_token_is_never_retried(
    tmp_path: Path, ntfy: FakeNtfy
) -> None:
    ntfy.authorization = "Bearer right"
    url = f"ntfy://{ntfy.netloc}/uq?auth=token&token=wrong"
    notifier = NtfyNotifier(url, address=ADDRESS, links=LINKS, backoff=0.01)
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [PICK])
        with anyio.fail_after(10):
            await notifier.drained()
    assert (notifier.failed, notifier.delivered) == (1, 0)
    assert ntfy.messages.items == []


def test_notify_urls_of_ntfy_go_to_ntfys_api_and_others_to_apprise() -> None:
    for url in ("ntfy://127.0.0.1:9/uq", "ntfys://ntfy.sh/uq", "NTFY://ntfy.sh/uq"):
        assert isinstance(service_notifier(url, address=ADDRESS, links=LINKS), NtfyNotifier)
    mail = service_notifier("mailto://ada@example.com", address=ADDRESS, links=LINKS)
    assert isinstance(mail, AppriseNotifier)
    secure = NtfyNotifier("ntfys://ntfy.example.com/uq", address=ADDRESS)
    assert secure.target == "ntfy ntfy.example.com"  # never the topic: it is a secret
    assert secure.channel == "ntfys"
