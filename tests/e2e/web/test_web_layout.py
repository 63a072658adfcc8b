"""The page around the cards: empty state, tab title, phones, colour schemes, screenshots."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import WebSocketRoute, expect

from tests.e2e.web.conftest import PAGE_SOCKET, RESULTS, Asker, Host, OpenInbox, answer_of, error_of
from user_questions.tool_exit_plan_mode import plan_question

BATCH: list[dict[str, Any]] = [
    {
        "id": "db",
        "header": "Storage",
        "question": "Which database should the service use?",
        "detail": "The service keeps **orders** and their history.\n\n"
        "| option | ops |\n|---|---|\n| PostgreSQL | a server |\n| SQLite | a file |",
        "options": [
            {"label": "PostgreSQL (Recommended)", "description": "Battle-tested, rich SQL"},
            {"label": "SQLite", "description": "One file, zero operations"},
        ],
    },
    {
        "id": "features",
        "question": "Which features ship first?",
        "multiSelect": True,
        "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}],
    },
    {"id": "name", "question": "What should the project be called?"},
]
WIDE: dict[str, Any] = {
    "id": "wide",
    "question": "Does a very long " + "unbroken" * 20 + " word fit?",
    "detail": "```\n"
    + "x = 1  # "
    + "long line " * 30
    + "\n```\n\n"
    + "https://example.com/"
    + "a" * 150,
    "options": [{"label": "Yes " + "really" * 25}, {"label": "No"}],
}
PLAN = """# Add a cache

1. Put a `Cache` in front of the store.
2. Invalidate on write.
3. Measure the hit rate in `benchmarks/cache.py`.
"""


def test_empty_state_and_tab_title_count(open_inbox: OpenInbox, asker: Asker, session: str) -> None:
    inbox = open_inbox()
    expect(inbox.page.get_by_role("heading", name="Waiting for questions")).to_be_visible()
    expect(inbox.page).to_have_title("user-questions")
    first = asker.ask(f"{session}-a", [BATCH[0]])
    second = asker.ask(f"{session}-b", [BATCH[2]])
    expect(inbox.page).to_have_title("(2) user-questions")
    expect(inbox.page.locator("#count")).to_have_text("2 requests waiting")
    expect(inbox.page.get_by_role("heading", name="Waiting for questions")).to_be_hidden()
    inbox.card(f"{session}-a").get_by_role("radio", name="SQLite").check()
    inbox.card(f"{session}-a").get_by_role("button", name="Submit").click()
    assert answer_of(first) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    expect(inbox.page).to_have_title("(1) user-questions")
    inbox.card(f"{session}-b").get_by_role("button", name="Dismiss").click()
    assert error_of(second).code == "ASK_CANCELLED"
    expect(inbox.page).to_have_title("user-questions")
    expect(inbox.page.get_by_role("heading", name="Waiting for questions")).to_be_visible()


def test_a_new_request_is_announced_to_screen_readers(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox()
    asker.ask(session, [BATCH[0]])
    announcer = inbox.page.locator("#announcer")
    expect(announcer).to_have_attribute("aria-live", "polite")
    expect(announcer).to_have_text(
        f"New question from {session}: “Which database should the service use?”"
    )


def test_the_token_leaves_the_address_bar_and_the_cookie_keeps_the_page_working(
    open_inbox: OpenInbox, host: Host
) -> None:
    inbox = open_inbox()
    assert inbox.page.url == f"{host.base}/"
    inbox.page.reload()
    inbox.expect_connected()


def test_the_page_loads_nothing_from_another_origin(
    open_inbox: OpenInbox, asker: Asker, host: Host, session: str
) -> None:
    requested: list[str] = []
    inbox = open_inbox(before=lambda page: page.on("request", lambda r: requested.append(r.url)))
    asker.ask(session, [BATCH[0]])
    expect(inbox.card(session)).to_be_visible()
    origins = {host.base, host.base.replace("http:", "ws:")}
    assert requested
    assert [url for url in requested if not any(url.startswith(o) for o in origins)] == []


def test_phone_viewport_has_no_horizontal_scroll(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    asked = asker.ask(session, [WIDE, *BATCH])
    card = inbox.card(session)
    expect(card.locator(".pager .count")).to_have_text("1/4")
    overflow = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    assert inbox.page.evaluate(overflow) == 0
    RESULTS.mkdir(parents=True, exist_ok=True)
    inbox.page.screenshot(path=RESULTS / "inbox-phone.png", full_page=True, animations="disabled")
    card.locator(".option", has_text="No").tap()
    card.get_by_role("button", name="Next").tap()
    expect(card.locator(".markdown table")).to_be_visible()
    assert inbox.page.evaluate(overflow) == 0
    card.get_by_role("button", name="Dismiss").tap()
    assert error_of(asked).code == "ASK_CANCELLED"


def test_screenshots_in_light_and_dark(open_inbox: OpenInbox, asker: Asker, session: str) -> None:
    asker.ask(f"{session}-batch", BATCH)
    asker.ask(f"{session}-plan", [plan_question(PLAN).model_dump(mode="json")])
    RESULTS.mkdir(parents=True, exist_ok=True)
    backgrounds = {}
    for scheme in ("light", "dark"):
        inbox = open_inbox(color_scheme=scheme)
        expect(inbox.page.locator(".card")).to_have_count(2)
        inbox.card(f"{session}-batch").locator(".option", has_text="PostgreSQL").click()
        backgrounds[scheme] = inbox.page.evaluate("getComputedStyle(document.body).backgroundColor")
        path = RESULTS / f"inbox-{scheme}.png"
        inbox.page.screenshot(path=path, full_page=True, animations="disabled")
        assert path.read_bytes().startswith(b"\x89PNG")
    assert backgrounds == {"light": "rgb(245, 245, 241)", "dark": "rgb(20, 22, 25)"}


def test_an_unknown_intent_kind_gets_the_generic_list(open_inbox: OpenInbox) -> None:
    # The host refuses intents it does not know, so a newer peer's frame is played to the page
    # directly: the page must fall back to the option list and answer with the same labels.
    question = {
        "id": "poll",
        "question": "Ship it?",
        "detail": "A newer peer's intent.",
        "options": [{"label": "Yes"}, {"label": "No"}],
        "intent": {"kind": "vote", "approve": "Yes"},
    }
    frame = {
        "rpcId": "from-a-newer-peer",
        "payload": {"type": "question/requested", "sessionId": "peer", "questions": [question]},
        "rendered": {"poll": "<p>A newer peer's intent.</p>"},
        "askedAt": "2025-01-01T00:00:00Z",
    }
    sent: list[dict[str, object]] = []

    def fake_host(page_side: WebSocketRoute) -> None:
        def receive(message: str | bytes) -> None:
            response = json.loads(message)
            sent.append(response)
            receipt = {"type": "client-response/receipt", "accepted": True}
            page_side.send(json.dumps({"rpcId": response["rpcId"], "payload": receipt}))

        page_side.on_message(receive)
        page_side.send(json.dumps(frame))

    inbox = open_inbox(before=lambda page: page.route_web_socket(PAGE_SOCKET, fake_host))
    card = inbox.card("peer")
    expect(card.get_by_role("radio")).to_have_count(3)
    card.get_by_role("radio", name="No").check()
    card.get_by_role("button", name="Submit").click()
    expect(card).to_have_count(0)
    assert sent == [
        {
            "type": "client-response",
            "rpcId": "from-a-newer-peer",
            "result": {
                "ok": True,
                "value": {
                    "sessionId": "peer",
                    "answer": {"answers": [{"id": "poll", "selected": ["No"]}]},
                },
            },
        }
    ]
