"""Browsers, dropped connections and receipts: nothing typed is lost, nothing answered twice."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable

from playwright.sync_api import Page, WebSocketRoute, expect

from tests.e2e.host_process import answer_body
from tests.e2e.web.conftest import PAGE_SOCKET, Asker, Host, OpenInbox, answer_of, error_of
from user_questions import ErrorCode
from user_questions.frames import Origin

DATABASE = {
    "id": "db",
    "question": "Which database?",
    "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
}
NAME = {"id": "name", "question": "What should the project be called?"}
SQLITE = {"id": "db", "selected": ["SQLite"]}
POSTGRES = {"id": "db", "selected": ["PostgreSQL"]}


class Relay:
    """Sits on the page's WebSocket: can hide `question/resolved` frames from the page, rewrite
    the page's next client-response, and cut the connection, as a flaky network would."""

    def __init__(self) -> None:
        self.hide_resolved = False
        self.rewrite_next: Callable[[dict[str, object]], dict[str, object]] | None = None
        self.connections: list[WebSocketRoute] = []

    def install(self, page: Page) -> None:
        page.route_web_socket(PAGE_SOCKET, self.connect)

    def connect(self, page_side: WebSocketRoute) -> None:
        server = page_side.connect_to_server()
        self.connections.append(page_side)

        def from_server(message: str | bytes) -> None:
            if self.hide_resolved and "question/resolved" in str(message):
                return
            page_side.send(message)

        def from_page(message: str | bytes) -> None:
            frame = json.loads(message)
            if self.rewrite_next is not None and frame.get("type") == "client-response":
                frame, self.rewrite_next = self.rewrite_next(frame), None
            server.send(json.dumps(frame))

        server.on_message(from_server)
        page_side.on_message(from_page)


def test_two_browsers_first_answer_wins_and_the_other_card_vanishes(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    first, second = open_inbox(), open_inbox()
    asked = asker.ask(session, [DATABASE])
    expect(first.card(session)).to_be_visible()
    expect(second.card(session)).to_be_visible()
    second.card(session).get_by_role("radio", name="PostgreSQL").check()
    first.card(session).get_by_role("radio", name="SQLite").check()
    first.card(session).get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    expect(second.card(session)).to_have_count(0)
    expect(second.page.locator("#notices")).to_contain_text("Answered elsewhere")
    expect(second.page).to_have_title("user-questions")


def test_a_late_answer_is_told_the_question_was_answered_elsewhere(
    open_inbox: OpenInbox, asker: Asker, host: Host, session: str
) -> None:
    relay = Relay()
    relay.hide_resolved = True
    inbox = open_inbox(before=relay.install)
    asked = asker.ask(session, [DATABASE])
    card = inbox.card(session)
    expect(card).to_be_visible()
    receipt = host.respond(answer_body(host.rpc_id_of(session), session, SQLITE))
    assert receipt == {"accepted": True}
    assert answer_of(asked) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    card.get_by_role("radio", name="PostgreSQL").check()
    card.get_by_role("button", name="Submit").click()
    expect(card).to_have_count(0)
    expect(inbox.page.locator("#notices")).to_contain_text("Answered elsewhere")


def test_a_bad_response_shows_the_host_message_and_keeps_the_card(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    relay = Relay()
    inbox = open_inbox(before=relay.install)
    asked = asker.ask(session, [DATABASE])
    card = inbox.card(session)
    card.get_by_role("radio", name="SQLite").check()

    def unknown_label(frame: dict[str, object]) -> dict[str, object]:
        text = json.dumps(frame).replace('"SQLite"', '"MongoDB"')
        rewritten: dict[str, object] = json.loads(text)
        return rewritten

    relay.rewrite_next = unknown_label
    card.get_by_role("button", name="Submit").click()
    expect(card.get_by_role("alert")).to_contain_text("MongoDB")
    expect(card.get_by_role("button", name="Submit")).to_be_enabled()
    assert not asked.done()
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


def test_a_card_settled_while_the_page_was_away_is_dropped_on_reconnect(
    open_inbox: OpenInbox, asker: Asker, host: Host, session: str
) -> None:
    relay = Relay()
    relay.hide_resolved = True
    inbox = open_inbox(before=relay.install)
    asked = asker.ask(session, [DATABASE])
    card = inbox.card(session)
    expect(card).to_be_visible()
    host.respond(answer_body(host.rpc_id_of(session), session, POSTGRES))
    assert answer_of(asked) == {"answers": [{"id": "db", "selected": ["PostgreSQL"]}]}
    expect(card).to_be_visible()  # the page missed the news
    relay.hide_resolved = False
    relay.connections[-1].close()
    expect(card).to_have_count(0)
    expect(inbox.page.locator("#notices")).to_contain_text("No longer pending")
    assert len(relay.connections) == 2


def test_a_withdrawn_question_vanishes(open_inbox: OpenInbox, asker: Asker, session: str) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE])
    expect(inbox.card(session)).to_be_visible()
    asked.cancel()
    expect(inbox.card(session)).to_have_count(0)
    expect(inbox.page.locator("#notices")).to_contain_text("Withdrawn by its agent")


def test_a_card_says_where_its_agent_runs_and_that_the_agent_timed_out(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    origin = Origin(client="claude-code", cwd="/home/ada/src/shop")
    asked = asker.ask(session, [DATABASE], origin=origin, timeout=4.0)
    card = inbox.card(session)
    expect(card.locator(".origin")).to_have_text("claude-code · /home/ada/src/shop")
    assert error_of(asked).code == ErrorCode.ASK_TIMED_OUT
    expect(card).to_have_count(0)
    expect(inbox.page.locator("#notices")).to_contain_text("Timed out")


def test_drafts_survive_a_reload_of_the_tab(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE, NAME])
    card = inbox.card(session)
    card.get_by_role("radio", name="SQLite").check()
    card.get_by_role("button", name="Next").click()
    card.get_by_role("textbox", name="Your answer").fill("Half-typed")
    inbox.page.reload()
    inbox.expect_connected()
    expect(card.get_by_role("textbox", name="Your answer")).to_have_value("Half-typed")
    card.get_by_role("button", name="Back").click()
    expect(card.get_by_role("radio", name="SQLite")).to_be_checked()
    card.get_by_role("button", name="Next").click()
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {
        "answers": [
            {"id": "db", "selected": ["SQLite"]},
            {"id": "name", "selected": [], "custom": "Half-typed"},
        ]
    }


def test_drafts_survive_a_host_crash_and_the_answer_still_reaches_the_agent(
    open_inbox: OpenInbox, asker: Asker, host: Host, session: str
) -> None:
    inbox = open_inbox()
    asked = asker.ask(session, [DATABASE, NAME])
    card = inbox.card(session)
    card.get_by_role("radio", name="PostgreSQL").check()
    card.get_by_role("button", name="Next").click()
    card.get_by_role("textbox", name="Your answer").fill("Typed before the crash")
    host.restart()
    # The page noticed (its socket closed) and came back on its own.
    expect(inbox.page.locator("body")).not_to_have_attribute("data-connection", "open")
    inbox.expect_connected()
    expect(card.get_by_role("textbox", name="Your answer")).to_have_value("Typed before the crash")
    card.get_by_role("button", name="Submit").click()
    assert answer_of(asked) == {
        "answers": [
            {"id": "db", "selected": ["PostgreSQL"]},
            {"id": "name", "selected": [], "custom": "Typed before the crash"},
        ]
    }
    inbox.forget_network_errors()


def test_a_dismissal_reaches_the_agent_as_ask_cancelled_even_from_a_second_browser(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    first, second = open_inbox(), open_inbox()
    asked = asker.ask(session, [DATABASE])
    expect(first.card(session)).to_be_visible()
    second.card(session).get_by_role("button", name="Dismiss").click()
    assert error_of(asked).code == ErrorCode.ASK_CANCELLED
    expect(first.card(session)).to_have_count(0)
    expect(first.page.locator("#notices")).to_contain_text("Dismissed elsewhere")


def test_a_page_whose_token_was_replaced_says_so(open_inbox: OpenInbox, host: Host) -> None:
    inbox = open_inbox()
    # The page registers its service worker once its replay is in; the browser reports the
    # worker's script fetch failing (a console error) if the host stops before it is installed.
    inbox.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    host.restart("--token", secrets.token_urlsafe(16))
    expect(inbox.page.locator("body")).to_have_attribute("data-connection", "unauthorized")
    expect(inbox.page.get_by_role("status")).to_have_text(
        "The host no longer accepts this page's token: open the link printed by uq serve."
    )
    inbox.forget_network_errors()
