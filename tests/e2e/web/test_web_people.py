"""A person's own token in a real browser: answers are theirs, and revoking the token (with
`uq token revoke`, in another process) shuts their open page out at once."""

from __future__ import annotations

from playwright.sync_api import Browser, expect

from tests.e2e.test_host_cli import uq
from tests.e2e.test_people_history import wait_until_accepted
from tests.e2e.web.conftest import DESKTOP, Asker, Host, Inbox, answer_of

QUESTION = {
    "id": "go",
    "question": "Go ahead with the migration?",
    "options": [{"label": "Yes"}, {"label": "No"}],
}


def test_a_page_opened_with_a_named_token_answers_as_that_person_until_it_is_revoked(
    browser: Browser, host: Host, asker: Asker, session: str
) -> None:
    assert host.db is not None
    added = uq("token", "add", "dana", "--store", str(host.db), "--url", host.base)
    assert added.returncode == 0, added.stderr
    token, link = added.stdout.splitlines()
    assert link == f"{host.base}/?token={token}"
    context = browser.new_context(viewport={"width": DESKTOP["width"], "height": DESKTOP["height"]})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    page.on(
        "console",
        lambda message: (
            errors.append(f"console: {message.text}") if message.type == "error" else None
        ),
    )
    inbox = Inbox(page, errors)
    try:
        wait_until_accepted(host, token)
        page.goto(link)
        inbox.expect_connected()
        asked = asker.ask(session, [QUESTION])
        card = inbox.card(session)
        card.get_by_role("radio", name="Yes").check()
        card.get_by_role("button", name="Submit").click()
        assert answer_of(asked) == {"answers": [{"id": "go", "selected": ["Yes"]}]}

        page.get_by_role("link", name="History").click()
        page.get_by_label("Session").fill(session)
        page.get_by_role("button", name="Apply").click()
        expect(page.locator(".entry .who")).to_have_text("by dana in the web page")

        page.get_by_role("link", name="Inbox").click()
        inbox.expect_connected()
        revoked = uq("token", "revoke", "dana", "--store", str(host.db))
        assert revoked.returncode == 0, revoked.stderr
        expect(page.locator("body")).to_have_attribute("data-connection", "unauthorized")
        expect(page.locator("#status-text")).to_have_text(
            "The host no longer accepts this page's token: open the link printed by uq serve."
        )
        response = page.goto(f"{host.base}/history")  # the cookie holds the revoked token
        assert response is not None
        assert response.status == 401
    finally:
        context.close()
    inbox.errors[:] = [
        error
        for error in inbox.errors
        if not error.startswith(("console: WebSocket connection to", "console: Failed to load"))
    ]
    assert inbox.errors == []
