"""Notifications with links, followed in Chromium: a real `uq serve --notify` sends each question
through apprise to a JSON receiver and a real SMTP server on loopback; the tests take the links
from what arrived and open them as a person would, on a phone without the host's token.

Answer links: opening one answers nothing, sending it gives the agent the answer, and a second
use, an expired, altered or settled-elsewhere link, or a host with `--answer-links off` gets the
same refusal. The question link opens the inbox on its card, asking for the token first.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import httpx
import pytest
from anyio.from_thread import BlockingPortal
from playwright.sync_api import Browser, Page, expect

from tests.e2e.host_process import answer_body, free_port
from tests.e2e.web.conftest import Asker, Host, answer_of
from tests.receivers import HttpReceiver, SmtpReceiver, body_text, http_receiver, smtp_receiver
from user_questions.host.notify.links import AnswerLinks, Grant, answer_link_secret
from user_questions.host.stores import open_store
from user_questions.types import AskUserQuestionAnswer

REFUSED = "This link cannot be used"
LINK = re.compile(r"^  (.+): (http://\S+/a/\S+)$", re.M)
DEPLOY = {
    "id": "deploy",
    "header": "Deploy",
    "question": "Deploy build 1.4.2 to production?",
    "options": [{"label": "Yes", "description": "ship it now"}, {"label": "Not now"}],
}


@pytest.fixture(scope="module")
def receiver() -> Iterator[HttpReceiver]:
    with http_receiver() as running:
        yield running


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpReceiver]:
    with smtp_receiver() as running:
        yield running


@pytest.fixture(scope="module")
def host(
    tmp_path_factory: pytest.TempPathFactory, receiver: HttpReceiver, smtp: SmtpReceiver
) -> Iterator[Host]:
    notify = ("--notify", f"json://{receiver.netloc}/hook", "--notify", smtp.mailto())
    running = Host(tmp_path_factory.mktemp("host") / "uq.db", port=free_port(), args=notify)
    running.start()
    yield running
    running.stop()


def message_for(receiver: HttpReceiver, session: str) -> str:
    """The body of the JSON notification about `session`'s question."""
    deadline = time.monotonic() + 15
    while True:
        for post in receiver.posts.items:
            if post.json["title"] == f"Question from {session}":
                text: str = post.json["message"]
                return text
        assert time.monotonic() < deadline, f"no notification about {session}"
        receiver.posts.wait_for(len(receiver.posts.items) + 1, deadline - time.monotonic())


def links_in(text: str) -> dict[str, str]:
    """The answer links of a message, by option label."""
    return dict(LINK.findall(text))


def asked(
    asker: Asker, receiver: HttpReceiver, session: str
) -> tuple[Future[AskUserQuestionAnswer], dict[str, str]]:
    future = asker.ask(session, [DEPLOY])
    return future, links_in(message_for(receiver, session))


def phone(browser: Browser) -> Page:
    """A browser that has never seen the host: no cookie, no token."""
    context = browser.new_context(viewport={"width": 390, "height": 800})
    return context.new_page()


def test_an_answer_link_shows_the_answer_then_sends_it_once(
    browser: Browser, asker: Asker, receiver: HttpReceiver, host: Host, session: str
) -> None:
    future, links = asked(asker, receiver, session)
    assert list(links) == ["Yes", "Not now"]
    page = phone(browser)
    page.goto(links["Not now"])
    expect(page.get_by_role("heading")).to_have_text("Deploy build 1.4.2 to production?")
    expect(page.locator(".chosen strong")).to_have_text("Not now")
    expect(page.locator(".from")).to_have_text(f"From {session}")
    assert host.rpc_id_of(session)  # opening it answered nothing
    assert not future.done()
    page.get_by_role("button", name="Send this answer").click()
    expect(page.get_by_role("heading")).to_have_text("Answer sent")
    assert answer_of(future) == {"answers": [{"id": "deploy", "selected": ["Not now"]}]}
    page.goto(links["Yes"])  # the other option's link: the question is settled now
    expect(page.get_by_role("heading")).to_have_text(REFUSED)
    page.goto(links["Not now"])  # and the one used
    expect(page.get_by_role("heading")).to_have_text(REFUSED)
    page.context.close()


def test_expired_altered_and_settled_elsewhere_links_are_refused(
    browser: Browser,
    portal: BlockingPortal,
    asker: Asker,
    receiver: HttpReceiver,
    host: Host,
    session: str,
) -> None:
    future, links = asked(asker, receiver, session)
    rpc_id = host.rpc_id_of(session)
    assert host.db is not None
    key = AnswerLinks(portal.call(stored_key, host.db))
    expired = key.sign(Grant(rpc_id, 0, 0, int(time.time()) - 60, "json"))
    altered = links["Yes"][:-3] + ("AAA" if not links["Yes"].endswith("AAA") else "BBB")
    page = phone(browser)
    for link in (f"{host.base}/a/{expired}", altered):
        page.goto(link)
        expect(page.get_by_role("heading")).to_have_text(REFUSED)
        expect(page.locator("button")).to_have_count(0)
    page.goto(links["Yes"])  # opened, then answered elsewhere before it is sent
    expect(page.locator(".chosen strong")).to_have_text("Yes")
    chosen = {"id": "deploy", "selected": ["Not now"]}
    assert host.respond(answer_body(rpc_id, session, chosen)) == {"accepted": True}
    page.get_by_role("button", name="Send this answer").click()
    expect(page.get_by_role("heading")).to_have_text(REFUSED)
    assert answer_of(future) == {"answers": [chosen]}
    page.context.close()


def test_the_emailed_link_answers_end_to_end(
    browser: Browser, asker: Asker, smtp: SmtpReceiver, host: Host, session: str
) -> None:
    future = asker.ask(session, [DEPLOY])
    deadline = time.monotonic() + 15
    while not (
        mails := [m for m in smtp.mails.items if m["Subject"] == f"Question from {session}"]
    ):
        assert time.monotonic() < deadline, "no mail about the question"
        smtp.mails.wait_for(len(smtp.mails.items) + 1, deadline - time.monotonic())
    text = body_text(mails[0])
    assert "[Deploy] Deploy build 1.4.2 to production?" in text
    assert "  1. Yes: ship it now" in text
    page = phone(browser)
    page.goto(links_in(text)["Yes"])
    page.get_by_role("button", name="Send this answer").click()
    expect(page.get_by_role("heading")).to_have_text("Answer sent")
    assert answer_of(future) == {"answers": [{"id": "deploy", "selected": ["Yes"]}]}
    (entry,) = [item for item in _history(host) if item["sessionId"] == session]
    assert (entry["via"], entry["channel"]) == ("link", "mailto")
    page.context.close()


def test_the_question_link_asks_for_the_token_then_opens_the_inbox_on_its_card(
    browser: Browser, asker: Asker, receiver: HttpReceiver, host: Host, session: str
) -> None:
    asker.ask(f"{session}-other", [dict(DEPLOY, question="Another question?")])
    asker.ask(session, [DEPLOY])
    text = message_for(receiver, session)
    (question_link,) = re.findall(r"^Open it: (\S+)$", text, re.M)
    assert question_link == f"{host.base}/q/{host.rpc_id_of(session)}"
    page = phone(browser)
    page.goto(question_link)
    sign_in = page.get_by_label("Paste the link uq serve printed, or a token")
    expect(sign_in).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("This host needs its token.")
    expect(page.locator(".card")).to_have_count(0)  # nothing is shown without the token
    sign_in.fill("not-the-token")
    page.get_by_role("button", name="Open the inbox").click()
    expect(page.get_by_role("alert")).to_have_text("This host does not accept that token.")
    sign_in.fill(host.page_url)  # the whole link uq serve printed
    page.get_by_role("button", name="Open the inbox").click()
    card = page.locator(".card", has_text=session).filter(has_not_text="Another question?")
    expect(card).to_be_focused()
    expect(card).to_have_class(re.compile(r"\bwanted\b"))
    expect(page.locator(".card")).to_have_count(2)
    assert "q=" not in page.url
    page.goto(question_link)  # the browser remembers: no question asked this time
    expect(page.locator(".card.wanted", has_text=session)).to_be_focused()
    expect(sign_in).to_be_hidden()
    page.context.close()


def test_a_host_with_answer_links_off_sends_none_and_takes_none(
    browser: Browser,
    portal: BlockingPortal,
    receiver: HttpReceiver,
    tmp_path: Path,
    session: str,
) -> None:
    args = ("--notify", f"json://{receiver.netloc}/off", "--answer-links", "off")
    off = Host(tmp_path / "uq.db", port=free_port(), args=args)
    off.start()
    try:
        asker = Asker(portal, off)
        asker.ask(session, [DEPLOY])
        text = message_for(receiver, session)
        assert links_in(text) == {}
        assert "Open it: " in text
        rpc_id = off.rpc_id_of(session)
        key = AnswerLinks(portal.call(stored_key, tmp_path / "uq.db"))
        forged = key.sign(key.grant(rpc_id, 0, 0, "json"))  # signed with the host's own key
        page = phone(browser)
        page.goto(f"{off.base}/a/{forged}")
        expect(page.get_by_role("heading")).to_have_text(REFUSED)
        page.context.close()
        assert off.rpc_id_of(session) == rpc_id
        asker.withdraw_all()
    finally:
        off.stop()


async def stored_key(db: Path) -> str:
    """The answer-link key of the store a running host uses (read beside it, as `uq token`)."""
    async with open_store(db, host=False) as store:
        return await answer_link_secret(store)


def _history(host: Host) -> list[dict[str, object]]:
    response = httpx.get(f"{host.base}/api/history", headers=host.auth, timeout=10)
    response.raise_for_status()
    items: list[dict[str, object]] = response.json()["items"]
    return items
