"""Answering generic questions in a real browser: the agent gets exactly what the page shows."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.web.conftest import Asker, OpenInbox, answer_of, error_of

DATABASE = {
    "id": "db",
    "header": "Storage",
    "question": "Which database should the service use?",
    "detail": "We need **durable** storage.",
    "options": [
        {"label": "PostgreSQL (Recommended)", "description": "Battle-tested, rich SQL"},
        {"label": "SQLite", "description": "One file, zero operations"},
    ],
}
FEATURES = {
    "id": "features",
    "question": "Which features ship first?",
    "multiSelect": True,
    "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}],
}
NAME = {"id": "name", "question": "What should the project be called?"}


def test_single_select_answer_keeps_the_full_recommended_label(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE])
    card = inbox.card(session)
    expect(card.locator(".chip")).to_have_text("Storage")
    expect(card.locator(".detail strong")).to_have_text("durable")
    option = card.locator(".option", has_text="PostgreSQL")
    expect(option.locator(".option-label")).to_have_text("PostgreSQLRecommended")
    expect(option.locator(".badge")).to_have_text("Recommended")
    expect(option.locator(".option-desc")).to_have_text("Battle-tested, rich SQL")
    expect(card).not_to_contain_text("(Recommended)")
    option.click()
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {"answers": [{"id": "db", "selected": ["PostgreSQL (Recommended)"]}]}
    expect(card).to_have_count(0)
    expect(inbox.page.locator("#notices")).to_contain_text("Answer sent")


def test_multi_select_sends_labels_in_option_order(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [FEATURES])
    card = inbox.card(session)
    expect(card.get_by_role("checkbox", name="Search")).to_be_visible()
    inbox.page.keyboard.press("3")  # digits pick on the first card when nothing is focused
    inbox.page.keyboard.press("1")
    card.get_by_role("checkbox", name="Billing").focus()
    inbox.page.keyboard.press("Space")
    inbox.page.keyboard.press("Space")  # Space toggles: Billing is off again
    expect(card.get_by_role("checkbox", name="Billing")).not_to_be_checked()
    inbox.page.keyboard.press("Enter")
    assert answer_of(asked) == {"answers": [{"id": "features", "selected": ["Auth", "Search"]}]}


def test_other_text_replaces_the_choice_on_single_select(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE])
    card = inbox.card(session)
    card.locator(".option", has_text="SQLite").click()
    card.get_by_role("textbox", name="Other: your own answer").fill("  DuckDB  ")
    expect(card.get_by_role("radio", name="Other")).to_be_checked()
    expect(card.get_by_role("radio", name="SQLite")).not_to_be_checked()
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {"answers": [{"id": "db", "selected": [], "custom": "DuckDB"}]}


def test_other_text_accompanies_the_picks_on_multi_select(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [FEATURES])
    card = inbox.card(session)
    card.get_by_role("checkbox", name="Billing").check()
    inbox.page.keyboard.press("4")  # the digit after the options is "Other"
    expect(card.get_by_role("textbox", name="Other: your own answer")).to_be_focused()
    inbox.page.keyboard.type("Audit log")
    inbox.page.keyboard.press("Enter")
    assert answer_of(asked) == {
        "answers": [{"id": "features", "selected": ["Billing"], "custom": "Audit log"}]
    }


def test_optionless_question_takes_free_text(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [NAME])
    card = inbox.card(session)
    answer = card.get_by_role("textbox", name="Your answer")
    answer.fill("Zephyr")
    answer.press("Shift+Enter")  # a new line, not a submit
    answer.press_sequentially("Two")
    answer.press("Enter")
    assert answer_of(asked) == {
        "answers": [{"id": "name", "selected": [], "custom": "Zephyr\nTwo"}]
    }


def test_pager_shows_one_question_at_a_time_and_keeps_picks(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE, FEATURES, NAME])
    card = inbox.card(session)
    expect(card.locator(".pager .count")).to_have_text("1/3")
    expect(card.locator("fieldset")).to_have_count(1)
    card.locator(".option", has_text="SQLite").click()
    card.get_by_role("button", name="Next").click()
    expect(card.locator(".pager .count")).to_have_text("2/3")
    expect(card.get_by_role("button", name="Question 1, answered")).to_be_visible()
    card.get_by_role("checkbox", name="Search").check()
    card.get_by_role("button", name="Back").click()
    expect(card.get_by_role("radio", name="SQLite")).to_be_checked()
    card.get_by_role("button", name="Question 3, unanswered").click()
    card.get_by_role("textbox", name="Your answer").fill("Zephyr")
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {
        "answers": [
            {"id": "db", "selected": ["SQLite"]},
            {"id": "features", "selected": ["Search"]},
            {"id": "name", "selected": [], "custom": "Zephyr"},
        ]
    }


def test_skip_answers_with_nothing_selected(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE, FEATURES])
    card = inbox.card(session)
    card.locator(".option", has_text="SQLite").click()
    card.get_by_role("button", name="Skip").click()  # the pick does not count once skipped
    expect(card.get_by_role("button", name="Question 1, skipped")).to_be_visible()
    card.get_by_role("checkbox", name="Auth").check()
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {
        "answers": [{"id": "db", "selected": []}, {"id": "features", "selected": ["Auth"]}]
    }


def test_dismiss_fails_the_ask_with_ask_cancelled(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE])
    card = inbox.card(session)
    card.get_by_role("button", name="Dismiss").click()
    assert error_of(asked).code == "ASK_CANCELLED"
    expect(card).to_have_count(0)
    expect(inbox.page.locator("#notices")).to_contain_text("Dismissed")


def test_escape_asks_first_and_dismisses_on_the_second_press(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE])
    card = inbox.card(session)
    confirm = card.get_by_role("group", name="Confirm dismissal")
    card.get_by_role("radio", name="SQLite").focus()
    inbox.page.keyboard.press("Escape")
    expect(confirm).to_be_visible()
    confirm.get_by_role("button", name="Keep").click()
    expect(confirm).to_be_hidden()
    expect(card.get_by_role("radio", name="SQLite")).to_be_focused()
    assert not asked.done()
    inbox.page.keyboard.press("Escape")
    inbox.page.keyboard.press("Escape")
    assert error_of(asked).code == "ASK_CANCELLED"


def test_plan_review_intent_with_three_options_gets_the_generic_list(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    question = {
        "id": "plan",
        "question": "Go ahead?",
        "detail": "1. Migrate",
        "options": [{"label": "Yes"}, {"label": "No"}, {"label": "Later"}],
        "intent": {"kind": "plan-review", "approve": "Yes"},
    }
    asked = asker.ask(session, [question])
    card = inbox.card(session)
    expect(card.get_by_role("radio")).to_have_count(4)  # three options and "Other"
    expect(card.get_by_role("button", name="Chat about it")).to_have_count(0)
    card.get_by_role("radio", name="Later").check()
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {"answers": [{"id": "plan", "selected": ["Later"]}]}


def test_enter_never_skips_a_question_left_blank(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE])
    card = inbox.card(session)
    expect(card).to_be_visible()
    inbox.page.keyboard.press("Enter")
    expect(card.get_by_role("alert")).to_contain_text("or press Skip")
    assert not asked.done()
    inbox.page.keyboard.press("2")
    expect(card.get_by_role("alert")).to_be_hidden()
    inbox.page.keyboard.press("Enter")
    assert answer_of(asked) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_after_an_answer_focus_rests_on_the_next_card_so_a_second_enter_does_nothing(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    first = asker.ask(f"{session}-first", [DATABASE])
    expect(inbox.card(f"{session}-first")).to_be_visible()
    plan = {
        **DATABASE,
        "detail": "1. Migrate",
        "intent": {"kind": "plan-review", "approve": "SQLite"},
    }
    second = asker.ask(f"{session}-plan", [plan])
    expect(inbox.page.locator(".card")).to_have_count(2)
    inbox.card(f"{session}-first").get_by_role("radio", name="SQLite").check()
    inbox.page.keyboard.press("Enter")
    assert answer_of(first) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    expect(inbox.card(f"{session}-plan")).to_be_focused()
    inbox.page.keyboard.press("Enter")
    inbox.page.keyboard.press("1")
    # The first response wins: had a key approved the plan, this dismissal would come too late.
    inbox.card(f"{session}-plan").get_by_role("button", name="Chat about it").click()
    assert error_of(second).code == "ASK_CANCELLED"
