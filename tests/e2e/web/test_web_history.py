"""The history page in a real browser: reached from the inbox, filtered, searched, paginated,
and safe with whatever a model wrote."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, expect
from websockets.sync.client import connect

from tests.e2e.host_process import answer_body
from tests.e2e.web.conftest import DESKTOP, RESULTS, Host, Inbox, OpenInbox

PICK: dict[str, Any] = {
    "id": "pick",
    "header": "Release",
    "question": "Ship the release?",
    "options": [{"label": "Ship (Recommended)"}, {"label": "Wait"}],
}
HOSTILE: dict[str, Any] = {
    "id": "hostile",
    "multiSelect": True,
    "header": "<img src=x onerror=window.pwned=1>",
    "question": "<script>window.pwned=1</script> Pick one",
    "detail": "# Plan\n\n<script>window.pwned=1</script>\n\n<img src=x onerror=window.pwned=1>",
    "options": [{"label": "<b>bold</b>"}, {"label": "plain"}],
}

OpenHistory = Callable[..., Inbox]


@pytest.fixture
def open_history(browser: Browser, host: Host) -> Iterator[OpenHistory]:
    """Open `/history` (with `query`) in a new browser context; it must report no errors."""
    opened: list[tuple[BrowserContext, Inbox]] = []

    def open_page(query: str = "", **options: Any) -> Inbox:
        options.setdefault("viewport", DESKTOP)
        context = browser.new_context(**options)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        page.on(
            "console",
            lambda message: (
                errors.append(f"console: {message.text}") if message.type == "error" else None
            ),
        )
        page.goto(f"{host.base}/history?token={host.token}{'&' + query if query else ''}")
        opened.append((context, Inbox(page, errors)))
        return opened[-1][1]

    yield open_page
    for context, inbox in opened:
        context.close()
        assert inbox.errors == [], f"the page reported errors: {inbox.errors}"


def settle(
    host: Host,
    session: str,
    questions: Sequence[dict[str, Any]],
    answers: Sequence[Sequence[dict[str, Any]] | None],
    origin: dict[str, str] | None = None,
) -> list[str]:
    """Ask one request per answer (through the asker protocol, from `origin` if given), then
    answer each over HTTP with its answer items (`None` dismisses it); the rpcIds, oldest
    first."""
    rpc_ids = [f"{session}-{index}" for index in range(len(answers))]
    with connect(
        host.base.replace("http", "ws", 1) + "/ws/ask", additional_headers=host.auth
    ) as asker:
        for rpc_id in rpc_ids:
            frame = {"type": "ask", "rpcId": rpc_id, "sessionId": session, "questions": questions}
            asker.send(json.dumps(frame if origin is None else {**frame, "origin": origin}))
            assert json.loads(asker.recv(timeout=10))["payload"]["type"] == "ask/pending"
    # The asker has left (its requests stay pending), so nobody has to read their settlements.
    with httpx.Client(base_url=host.base, headers=host.auth, timeout=10) as client:
        for rpc_id, answer in zip(rpc_ids, answers, strict=True):
            body = (
                answer_body(rpc_id, session, *answer)
                if answer is not None
                else {
                    "type": "client-response",
                    "rpcId": rpc_id,
                    "result": {"ok": False, "error": {"code": "cancelled"}},
                }
            )
            assert client.post("/api/respond", json=body).json() == {"accepted": True}
    return rpc_ids


def test_the_inbox_links_to_the_history_of_answers_newest_first(
    open_inbox: OpenInbox, host: Host, session: str
) -> None:
    origin = {"client": "codex", "cwd": "/srv/release"}
    answers = [[{"id": "pick", "selected": ["Ship (Recommended)"]}], None]
    settle(host, session, [PICK], answers, origin)
    inbox = open_inbox()
    inbox.page.get_by_role("link", name="History").click()
    page = inbox.page
    expect(page).to_have_url(f"{host.base}/history")  # the token never stays in the address bar
    # The first page of history is shown (the page has read its filters from the address):
    # only then is the form the person's to fill.
    expect(page.locator("#summary")).to_contain_text("newest first")
    page.get_by_label("Session").fill(session)
    page.get_by_role("button", name="Apply").click()
    entries = page.locator(".entry")
    expect(entries).to_have_count(2)
    expect(entries.nth(0).locator(".outcome")).to_have_text("Dismissed")
    answered = entries.nth(1)
    expect(answered.locator(".outcome")).to_have_text("Answered")
    expect(answered.locator(".who")).to_have_text("by owner through the API")
    expect(answered.locator(".origin")).to_have_text("codex · /srv/release")
    expect(answered.locator(".chip")).to_have_text("Release")
    expect(answered.locator(".entry-answer")).to_have_text("Answer: Ship (Recommended)")
    expect(answered.locator(".entry-times")).to_contain_text("Asked")
    expect(page.locator("#summary")).to_have_text("2 settled questions matching, newest first")
    page.get_by_role("link", name="Inbox").click()
    expect(page.locator("body")).to_have_attribute("data-connection", "open")


def test_filters_search_and_sessions_narrow_the_history_and_stay_in_the_address(
    open_history: OpenHistory, host: Host, session: str
) -> None:
    ship = {"id": "pick", "selected": ["Ship (Recommended)"]}
    typed = {"id": "pick", "selected": [], "custom": "blue-green deploy on Friday"}
    settle(host, f"{session}-a", [PICK], [[ship], [typed], None])
    settle(host, f"{session}-b", [PICK], [[ship]])
    history = open_history(f"q={session}")  # nothing matches the session's name as text
    page = history.page
    expect(page.locator("#none")).to_have_text("No settled questions match these filters.")
    page.get_by_label("Search").fill("BLUE-GREEN friday")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator(".entry")).to_have_count(1)
    expect(page.locator(".entry .custom")).to_have_text("blue-green deploy on Friday")
    page.get_by_role("button", name="Clear").click()
    page.get_by_label("Outcome").select_option("dismissed")
    page.get_by_label("Session").fill(f"{session}-a")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator(".entry")).to_have_count(1)
    expect(page.locator(".entry .outcome")).to_have_text("Dismissed")
    page.get_by_role("button", name="Clear").click()
    page.locator(".entry").filter(has_text=f"{session}-b").first.get_by_role(
        "button", name=f"{session}-b"
    ).click()
    expect(page.locator(".entry")).to_have_count(1)
    expect(page).to_have_url(f"{host.base}/history?session={session}-b")
    page.reload()
    expect(page.get_by_label("Session")).to_have_value(f"{session}-b")
    expect(page.locator(".entry")).to_have_count(1)


def test_load_more_follows_the_cursor_without_repeating_an_entry(
    open_history: OpenHistory, host: Host, session: str
) -> None:
    rpc_ids = settle(host, session, [PICK], [[{"id": "pick", "selected": ["Wait"]}]] * 55)
    page = open_history(f"session={session}").page
    entries = page.locator(".entry")
    expect(entries).to_have_count(50)
    more = page.get_by_role("button", name="Load more")
    expect(more).to_be_visible()
    settle(host, f"{session}-later", [PICK], [None])  # settles while the page is open
    more.click()
    expect(entries).to_have_count(55)
    expect(more).to_be_hidden()
    shown = [entries.nth(index).get_attribute("data-rpc-id") for index in range(55)]
    assert shown == list(reversed(rpc_ids))


def test_model_text_is_shown_as_text_and_never_runs(
    open_history: OpenHistory, host: Host, session: str
) -> None:
    answer = {"id": "hostile", "selected": ["<b>bold</b>"], "custom": "<i>typed</i>"}
    settle(host, session, [HOSTILE], [[answer]])
    page = open_history(f"session={session}").page
    entry = page.locator(".entry")
    expect(entry).to_have_count(1)
    expect(entry.locator(".chip")).to_have_text(HOSTILE["header"])
    expect(entry.locator(".question-text")).to_have_text(HOSTILE["question"])
    expect(entry.locator(".chosen")).to_have_text("<b>bold</b>")
    expect(entry.locator(".custom")).to_have_text("<i>typed</i>")
    entry.get_by_text("Details").click()
    detail = entry.locator(".markdown")
    expect(detail.locator("h1")).to_have_text("Plan")
    expect(detail).to_contain_text("<script>window.pwned=1</script>")
    assert entry.locator("script, img, b, i").count() == 0
    assert page.evaluate("window.pwned") is None


def test_the_history_reads_well_on_a_phone_and_in_both_colour_schemes(
    open_history: OpenHistory, host: Host, session: str
) -> None:
    name = {"id": "name", "question": "What should the release be called?"}
    answer = [
        {"id": "pick", "selected": ["Ship (Recommended)"]},
        {"id": "name", "selected": [], "custom": "Halley"},
    ]
    settle(host, session, [PICK, name], [answer])
    RESULTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        page = open_history(f"session={session}", color_scheme=scheme).page
        expect(page.locator(".entry")).to_have_count(1)
        page.screenshot(path=RESULTS / f"history-{scheme}.png", full_page=True)
    phone = open_history(
        f"session={session}", viewport={"width": 375, "height": 740}, is_mobile=True
    ).page
    expect(phone.locator(".entry")).to_have_count(1)
    assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    phone.screenshot(path=RESULTS / "history-phone.png", full_page=True)
