"""`AppriseNotifier`: real apprise plugins delivering to services on loopback. ntfy (`ntfy://`)
and a JSON webhook (`json://`) post to an HTTP receiver; email (`mailto://`) goes through a real
SMTP server (aiosmtpd). The messages hold the question, its options and links that work; a dead
or silent service never delays an ask, and its failure is logged without the URL's secrets."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import pytest

from tests.host.conftest import MANY, PICK, PLAN, answer
from tests.host.notify.helpers import notifying_hub
from tests.receivers import body_text, dead_port, http_receiver, silent_port, smtp_receiver
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Origin
from user_questions.host.gate.public_url import public_url
from user_questions.host.notify.apprise import AppriseNotifier, check_apprise_url
from user_questions.host.notify.links import AnswerLinks, Grant
from user_questions.outcomes import Surface
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

pytestmark = pytest.mark.anyio

ADDRESS = public_url("https://uq.example.com/team/")
LINKS = AnswerLinks("a-test-key-of-some-length")
DEPLOY = AskUserQuestionItem(
    id="deploy",
    header="Confirm",
    question="Deploy build 1.4.2\nto production?",
    options=[
        AskUserQuestionOption(label="Yes (Recommended)", description="ship it now"),
        AskUserQuestionOption(label="No"),
    ],
)
LINK = re.compile(r"https://uq\.example\.com/team/a/(\S+)")


@pytest.fixture(autouse=True)
def threads_end() -> Iterator[None]:
    """Every thread a notifier left to finish on its own does finish (so none logs into a later
    test): a service that is down or closed its connection fails them at once."""
    yield
    deadline = time.monotonic() + 15
    for thread in threading.enumerate():
        if thread.name == "user-questions apprise":
            thread.join(max(0.0, deadline - time.monotonic()))
            assert not thread.is_alive(), "a message's thread is still running"


def answer_links(text: str) -> list[Grant]:
    """The grants of the answer links in a message, each checked with the host's key."""
    grants = [LINKS.verify(found) for found in LINK.findall(text)]
    assert all(grant is not None for grant in grants), text
    return [grant for grant in grants if grant is not None]


async def test_ntfy_gets_the_question_its_options_and_links_that_answer_it(
    tmp_path: Path,
) -> None:
    with http_receiver() as receiver:
        notifier = AppriseNotifier(
            f"ntfy://{receiver.netloc}/uq-questions", address=ADDRESS, links=LINKS
        )
        async with notifying_hub(tmp_path, notifier) as hub:
            origin = Origin(client="claude-code", cwd="/home/ada/src/shop")
            await hub.submit("r1", "ci-bot", [DEPLOY], origin=origin)
            (post,) = await anyio.to_thread.run_sync(receiver.posts.wait_for, 1)
            await hub.respond(answer("r1", "ci-bot", {"id": "deploy", "selected": ["No"]}),
                              via=Surface.WEB, by="alice")  # fmt: skip
    message = post.json
    assert (post.path, message["topic"]) == ("/", "uq-questions")
    assert message["title"] == "Question from ci-bot"
    lines = message["message"].splitlines()
    assert lines[:4] == [
        "[Confirm] Deploy build 1.4.2 to production?",
        "  1. Yes (Recommended): ship it now",
        "  2. No",
        "From ci-bot (claude-code · /home/ada/src/shop)",
    ]
    assert lines[-1] == "Open it: https://uq.example.com/team/q/r1"
    grants = answer_links(message["message"])
    assert [(g.rpc_id, g.question, g.option, g.channel) for g in grants] == [
        ("r1", 0, 0, "ntfy"),
        ("r1", 0, 1, "ntfy"),
    ]
    lifetime = grants[0].expires - time.time()
    assert 23.9 * 3600 < lifetime <= 24 * 3600  # the default: a day
    assert len(receiver.posts.items) == 1  # settled notices are off unless asked for
    assert notifier.delivered == 1


async def test_settled_notices_say_how_a_question_ended_when_asked_for(tmp_path: Path) -> None:
    with http_receiver() as receiver:
        notifier = AppriseNotifier(
            f"json://{receiver.netloc}/hook", address=ADDRESS, links=LINKS, settled=True
        )
        async with notifying_hub(tmp_path, notifier) as hub:
            await hub.submit("r1", "ci-bot", [DEPLOY])
            chosen = {"id": "deploy", "selected": ["Yes (Recommended)"]}
            await hub.respond(answer("r1", "ci-bot", chosen), via=Surface.WEB, by="alice")
            pending, settled = await anyio.to_thread.run_sync(receiver.posts.wait_for, 2)
    assert pending.path == "/hook"
    assert pending.json["title"] == "Question from ci-bot"
    assert settled.json["title"] == "Answered: Deploy build 1.4.2 to production?"
    assert settled.json["message"].splitlines() == [
        "[Confirm] Deploy build 1.4.2 to production?",
        "Answered: Yes (Recommended)",
        "By alice in the web page",
        "Asked by ci-bot",
    ]
    assert answer_links(settled.json["message"]) == []


async def test_a_settled_notice_shows_the_note_beside_the_answer(tmp_path: Path) -> None:
    with http_receiver() as receiver:
        notifier = AppriseNotifier(
            f"json://{receiver.netloc}/hook", address=ADDRESS, links=LINKS, settled=True
        )
        async with notifying_hub(tmp_path, notifier) as hub:
            await hub.submit("r1", "ci-bot", [DEPLOY])
            chosen = {"id": "deploy", "selected": ["No"], "note": "after the freeze"}
            await hub.respond(answer("r1", "ci-bot", chosen), via=Surface.WEB, by="alice")
            _, settled = await anyio.to_thread.run_sync(receiver.posts.wait_for, 2)
    assert "Answered: No (note: “after the freeze”)" in settled.json["message"].splitlines()


async def test_an_email_holds_the_question_and_its_links(tmp_path: Path) -> None:
    with smtp_receiver() as smtp:
        notifier = AppriseNotifier(smtp.mailto(), address=ADDRESS, links=LINKS)
        async with notifying_hub(tmp_path, notifier) as hub:
            await hub.submit("mail-1", "ci-bot", [DEPLOY])
            (mail,) = await anyio.to_thread.run_sync(smtp.mails.wait_for, 1)
    assert mail["Subject"] == "Question from ci-bot"
    assert mail["To"] == "ada@example.com"
    text = body_text(mail)
    assert "[Confirm] Deploy build 1.4.2 to production?" in text
    assert "  2. No" in text
    assert [(g.option, g.channel) for g in answer_links(text)] == [(0, "mailto"), (1, "mailto")]
    assert "Open it: https://uq.example.com/team/q/mail-1" in text


async def test_only_what_one_tap_can_answer_gets_answer_links(tmp_path: Path) -> None:
    with http_receiver() as receiver:
        quiet = AppriseNotifier(f"json://{receiver.netloc}/off", address=ADDRESS, links=None)
        linked = AppriseNotifier(f"json://{receiver.netloc}/on", address=ADDRESS, links=LINKS)
        async with notifying_hub(tmp_path, quiet, linked) as hub:
            await hub.submit("plan", "s", [PLAN])  # a plan review: its approve option only
            await hub.submit("many", "s", [MANY])  # multi-select: none
            await hub.submit("batch", "s", [PICK, DEPLOY])  # two questions: none
            await hub.submit("pick", "s", [PICK])  # links off for `quiet`
            posts = await anyio.to_thread.run_sync(receiver.posts.wait_for, 8)
    links = {
        (post.path, post.json["message"].split("/q/")[-1]): [
            (grant.rpc_id, grant.option) for grant in answer_links(post.json["message"])
        ]
        for post in posts
    }
    assert links == {
        ("/on", "plan"): [("plan", 0)],
        ("/on", "many"): [],
        ("/on", "batch"): [],
        ("/on", "pick"): [("pick", 0), ("pick", 1)],
        ("/off", "plan"): [],
        ("/off", "many"): [],
        ("/off", "batch"): [],
        ("/off", "pick"): [],
    }
    (batch,) = [post for post in posts if post.path == "/on" and "/q/batch" in post.json["message"]]
    assert "(+1 more question)" in batch.json["message"]


async def test_a_silent_service_never_delays_an_ask_and_is_given_up_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "user_questions.host.notify")
    with silent_port() as port:
        notifier = AppriseNotifier(
            f"json://127.0.0.1:{port}/hook", address=ADDRESS, links=LINKS, timeout=1.0
        )
        async with notifying_hub(tmp_path, notifier) as hub:
            for number in range(3):
                rpc_id = f"r{number}"
                started = time.monotonic()
                await hub.submit(rpc_id, "s", [PICK])
                chosen = {"id": "pick", "selected": ["a"]}
                await hub.respond(answer(rpc_id, "s", chosen), via=Surface.WEB)
                assert time.monotonic() - started < 0.5  # the service is never waited for
            with anyio.fail_after(10):
                await notifier.drained()
    assert (notifier.delivered, notifier.failed) == (0, 3)
    assert caplog.records[0].getMessage() == (
        "apprise json://127.0.0.1: question/pending of question r0 took too long"
    )


class Collecting(logging.Handler):
    """What a handler on the root logger gets: what a host's log would show."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def host_log() -> Iterator[Collecting]:
    root = logging.getLogger()
    handler, level = Collecting(), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    root.setLevel(level)


async def test_a_failure_is_logged_without_the_urls_secrets(
    tmp_path: Path, host_log: Collecting
) -> None:
    url = f"ntfy://alice:hunter2-secret@127.0.0.1:{dead_port()}/private-topic-xyz"
    notifier = AppriseNotifier(url, address=ADDRESS, links=LINKS)
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [PICK])
        with anyio.fail_after(10):
            await notifier.drained()
    assert notifier.failed == 1
    lines = host_log.lines
    (failure,) = [line for line in lines if "question/pending of question r1" in line]
    assert failure.startswith("apprise ntfy://127.0.0.1: question/pending of question r1 failed")
    for secret in ("hunter2-secret", "private-topic-xyz", "alice"):
        assert not any(secret in line for line in lines), lines


def test_a_url_apprise_cannot_use_is_refused_without_quoting_it() -> None:
    for url in ("nosuchservice://token-abc@host/x", "not a url at all"):
        with pytest.raises(UserQuestionError) as refused:
            check_apprise_url(url)
        assert refused.value.code == ErrorCode.BAD_NOTIFIER
        assert "token-abc" not in refused.value.message
        assert "apprise cannot use" in refused.value.message


def test_the_notifier_names_its_service_by_scheme_and_redacted_host_only() -> None:
    telegram = AppriseNotifier("tgram://123456789:AAE-secret-token/987654", address=ADDRESS)
    assert telegram.channel == "tgram"
    assert "secret" not in telegram.target
    assert "987654" not in telegram.target
    mail = AppriseNotifier(
        "mailtos://ada:app-password@smtp.example.com?to=bob@example.com", address=ADDRESS
    )
    assert (mail.channel, mail.target) == ("mailtos", "apprise mailtos://smtp.example.com")
    assert urlsplit("https://" + mail.target.split("://")[1]).hostname == "smtp.example.com"
