"""The inbox with more requests than cards: the count, the list, its filter by session.

A few requests get full cards; the others wait in a list of compact rows (only the rows in view
are built), filtered by session. The agents ask through `RemoteProvider` and every test checks
the answer (or withdrawal) an agent got.
"""

from __future__ import annotations

from concurrent.futures import Future

from playwright.sync_api import expect

from tests.e2e.web.conftest import Asker, Host, OpenInbox, answer_of
from user_questions import AskUserQuestionAnswer

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
