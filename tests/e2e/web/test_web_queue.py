"""The inbox with more requests than cards: the count, the list, its filter by session.

A few requests get full cards; the others wait in a list of compact rows (only the rows in view
are built), filtered by session. The agents ask through `RemoteProvider` and every test checks
the answer (or withdrawal) an agent got.
"""

from __future__ import annotations

import json
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from pathlib import Path

from anyio.from_thread import BlockingPortal
from playwright.sync_api import Browser, WebSocketRoute, expect

from tests.e2e.host_process import HostProcess
from tests.e2e.web.conftest import PAGE_SOCKET, Asker, Host, OpenInbox, answer_of, inboxes
from user_questions import AskUserQuestionAnswer, AskUserQuestionItem
from user_questions.host.stores import NewQuestion
from user_questions.host.stores.sqlite import SQLiteStore

CARDS_SHOWN = 5
"""Full cards the page shows at once (`CARDS_SHOWN` in app.js)."""


def ask_many(
    asker: Asker, session: str, count: int, first: int = 0
) -> dict[str, Future[AskUserQuestionAnswer]]:
    """`count` one-question requests from `session`, by their question's text."""
    asked = {}
    for index in range(first, first + count):
        text = f"Deploy build {index}?"
        question = {"id": "go", "question": text, "options": [{"label": "Yes"}, {"label": "No"}]}
        asked[text] = asker.ask(session, [question])
    return asked


def test_the_count_is_right_and_the_requests_beyond_the_cards_wait_in_the_list(
    asker: Asker, host: Host, open_inbox: OpenInbox, session: str
) -> None:
    ask_many(asker, f"{session}-a", 8)
    ask_many(asker, f"{session}-b", 4, first=8)
    host.wait_pending(12)
    inbox = open_inbox()
    page = inbox.page
    expect(page).to_have_title("(12) user-questions")
    expect(page.locator("#count")).to_have_text("12 requests waiting")
    expect(page.locator(".card")).to_have_count(CARDS_SHOWN)
    queue = page.locator("#queue")
    expect(queue.locator("#queue-heading")).to_have_text("7 more requests waiting")
    expect(queue.locator(".queue-row")).to_have_count(7)
    expect(queue.locator("#session-filter option")).to_have_text(
        ["All sessions (12)", f"{session}-a (8)", f"{session}-b (4)"]
    )


def test_the_filter_shows_one_session_while_others_arrive_and_settle(
    asker: Asker, host: Host, open_inbox: OpenInbox, session: str
) -> None:
    mine = ask_many(asker, f"{session}-a", 8)
    theirs = ask_many(asker, f"{session}-b", 3, first=8)
    host.wait_pending(11)
    inbox = open_inbox()
    page = inbox.page
    expect(page.locator(".card")).to_have_count(CARDS_SHOWN)
    page.get_by_role("combobox", name="Session").select_option(f"{session}-b")
    cards = page.locator(".card")
    expect(cards).to_have_count(3)
    for card in cards.all():
        expect(card.locator(".session")).to_have_text(f"{session}-b")
    expect(page.locator("#queue-heading")).to_have_text(f"0 more requests waiting from {session}-b")

    ask_many(asker, f"{session}-a", 1, first=20)  # another session's request arrives
    expect(page).to_have_title("(12) user-questions")
    expect(page.locator("#count")).to_have_text("12 requests waiting")
    expect(cards).to_have_count(3)
    mine["Deploy build 0?"].cancel()  # one of another session's requests settles
    expect(page).to_have_title("(11) user-questions")
    expect(cards).to_have_count(3)

    theirs["Deploy build 8?"].cancel()  # one of the shown session's requests settles
    expect(page.locator(".notice").last).to_contain_text("Withdrawn by its agent")
    expect(page).to_have_title("(10) user-questions")
    expect(cards).to_have_count(2)
    card = inbox.card("Deploy build 9?")
    card.get_by_role("radio", name="No").check()
    card.get_by_role("button", name="Submit").click()
    assert answer_of(theirs["Deploy build 9?"]) == {"answers": [{"id": "go", "selected": ["No"]}]}
    expect(cards).to_have_count(1)

    page.get_by_role("combobox", name="Session").select_option("")  # every session again
    expect(cards).to_have_count(CARDS_SHOWN)
    expect(page).to_have_title("(9) user-questions")


def test_a_request_deep_in_the_list_opens_on_top_and_is_answered(
    asker: Asker, host: Host, open_inbox: OpenInbox, session: str
) -> None:
    asked = ask_many(asker, session, 40)
    host.wait_pending(40)
    inbox = open_inbox()
    page = inbox.page
    expect(page.locator("#queue-heading")).to_have_text("35 more requests waiting")
    rows = page.locator(".queue-row")
    assert rows.count() < 35, "only the rows in view (and a few around them) are built"
    scroller = page.locator("#queue-scroll")
    scroller.evaluate("(box) => { box.scrollTop = box.scrollHeight; }")
    last = page.locator('.queue-row[data-index="34"]')
    expect(last).to_be_visible()
    text = last.locator(".line").inner_text()
    last.click()
    card = page.locator(".card").first
    expect(card).to_contain_text(text)
    expect(card).to_be_focused()
    expect(page.locator(".card")).to_have_count(CARDS_SHOWN + 1)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    assert answer_of(asked[text]) == {"answers": [{"id": "go", "selected": ["Yes"]}]}
    expect(page).to_have_title("(39) user-questions")
    expect(page.locator(".card")).to_have_count(CARDS_SHOWN)
    expect(page.locator("#queue-heading")).to_have_text("34 more requests waiting")


async def fill(db: Path, count: int) -> None:
    """`count` pending one-question requests from one session, straight into the store."""
    question = AskUserQuestionItem.model_validate(
        {"id": "go", "question": "Deploy?", "options": [{"label": "Yes"}, {"label": "No"}]}
    )
    async with SQLiteStore(db) as store:
        for index in range(count):
            asked = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=index)
            await store.submit(NewQuestion(f"r{index:04}", "deploy-bot", (question,), asked))


class HeldPings:
    """Sits on the page's WebSocket and holds back the page's pings until `release()`."""

    def __init__(self) -> None:
        self.held: list[str | bytes] = []
        self.server: WebSocketRoute | None = None

    def connect(self, page_side: WebSocketRoute) -> None:
        self.server = server = page_side.connect_to_server()

        def from_page(message: str | bytes) -> None:
            if self.server is None:
                server.send(message)
            elif json.loads(message).get("type") == "ping":
                self.held.append(message)
            else:
                server.send(message)

        page_side.on_message(from_page)

    def release(self) -> None:
        server, self.server = self.server, None
        assert server is not None
        for message in self.held:
            server.send(message)


def test_an_answer_during_a_long_replay_gets_its_receipt_and_the_count_goes_down_at_once(
    browser: Browser, portal: BlockingPortal, tmp_path: Path
) -> None:
    # 1,100 pending: three batches (50, 1,000, 50). A paced replay goes at most two batches
    # ahead of the page's pings; held back, the host stops before the last batch.
    portal.call(fill, tmp_path / "uq.db", 1_100)
    host = HostProcess(tmp_path / "uq.db")
    host.start()
    pings = HeldPings()
    try:
        with inboxes(browser, host.url) as open_page:
            inbox = open_page(before=lambda page: page.route_web_socket(PAGE_SOCKET, pings.connect))
            page = inbox.page
            expect(page).to_have_title("(1100) user-questions")
            expect(page.locator("#queue-heading")).to_have_text("1,045 more requests waiting")
            first = page.locator(".card").first
            first.get_by_role("radio", name="Yes").check()
            first.get_by_role("button", name="Submit").click()
            expect(page.locator(".card")).to_have_count(CARDS_SHOWN)
            expect(page).to_have_title("(1099) user-questions")  # the receipt did not wait
            assert len(pings.held) == 2  # one for each batch read; the last batch never came
            assert len(host.pending()) == 1_099
            pings.release()
            expect(page.locator("#queue-heading")).to_have_text("1,094 more requests waiting")
            expect(page).to_have_title("(1099) user-questions")
    finally:
        host.stop()
