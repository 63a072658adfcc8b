"""Desktop notifications: a question arriving while the tab is hidden shows one, with permission.

These are the tab's own notifications, what a browser without Web Push gets: the pages here have
no `PushManager` (`NO_PUSH`); Web Push is tested in test_web_push.py.

The browser's permission is granted (or not) through the Playwright context. An init script
records every `Notification` the page constructs (the real constructor still runs) and lets the
test hide the tab: `document.visibilityState` is emulated, as a tab in the background reports it.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.web.conftest import Asker, Inbox, OpenInbox, answer_of

RECORD_AND_HIDE = """
(() => {
  window.__notifications = [];
  const Real = window.Notification;
  class Recording extends Real {
    constructor(title, options) {
      super(title, options);
      window.__notifications.push({ title, body: options?.body ?? "", note: this });
    }
  }
  window.Notification = Recording;
  let hidden = false;
  Object.defineProperty(document, "visibilityState", {
    configurable: true,
    get: () => (hidden ? "hidden" : "visible"),
  });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  window.__setHidden = (value) => {
    hidden = value;
    document.dispatchEvent(new Event("visibilitychange"));
  };
  window.__focused = 0;
  const focus = window.focus.bind(window);
  window.focus = () => {
    window.__focused += 1;
    focus();
  };
})();
"""
TURNED_ON = "try { localStorage.setItem('uq.notify', 'on'); } catch {}"
NO_PUSH = "delete window.PushManager;"


def question(name: str) -> dict[str, Any]:
    return {"id": name, "question": f"Ship {name}?", "options": [{"label": "yes"}]}


def install(*scripts: str) -> Any:
    def before(page: Page) -> None:
        for script in (NO_PUSH, *scripts):
            page.add_init_script(script)

    return before


def notifications(inbox: Inbox, count: int) -> list[dict[str, str]]:
    """The notifications shown so far, once there are `count` of them."""
    inbox.page.wait_for_function("(count) => window.__notifications.length >= count", arg=count)
    shown: list[dict[str, str]] = inbox.page.evaluate(
        "window.__notifications.map(({ title, body }) => ({ title, body }))"
    )
    return shown


def hide(inbox: Inbox, hidden: bool = True) -> None:
    inbox.page.evaluate(f"window.__setHidden({'true' if hidden else 'false'})")


def test_a_question_arriving_while_the_tab_is_hidden_shows_a_desktop_notification(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    inbox = open_inbox(install(RECORD_AND_HIDE), permissions=["notifications"])
    toggle = inbox.page.get_by_role("button", name="Notify me")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    on = inbox.page.get_by_role("button", name="Notifications on")
    expect(on).to_have_attribute("aria-pressed", "true")

    hide(inbox)
    pending = asker.ask(session, [question("api")])
    expect(inbox.card(session)).to_be_visible()
    assert notifications(inbox, 1) == [{"title": f"Question from {session}", "body": "“Ship api?”"}]

    inbox.page.evaluate("window.__notifications[0].note.dispatchEvent(new Event('click'))")
    expect(inbox.card(session)).to_be_focused()
    assert inbox.page.evaluate("window.__focused") == 1

    inbox.card(session).get_by_label("yes").check()
    inbox.card(session).get_by_role("button", name="Submit").click()
    assert answer_of(pending) == {"answers": [{"id": "api", "selected": ["yes"]}]}

    inbox.page.reload()  # the choice is kept
    inbox.expect_connected()
    expect(inbox.page.get_by_role("button", name="Notifications on")).to_be_visible()


def test_nothing_is_shown_while_the_tab_is_visible_or_once_turned_off(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    session = f"quiet-{session[-6:]}"  # short: a notification's title shows 40 characters
    inbox = open_inbox(install(RECORD_AND_HIDE, TURNED_ON), permissions=["notifications"])
    toggle = inbox.page.get_by_role("button", name="Notifications on")
    asker.ask(f"{session}-seen", [question("seen")])  # the tab is visible: no notification
    expect(inbox.card(f"{session}-seen")).to_be_visible()

    toggle.click()  # off
    expect(inbox.page.get_by_role("button", name="Notify me")).to_be_visible()
    hide(inbox)
    asker.ask(f"{session}-off", [question("off")])  # notifications are off
    expect(inbox.card(f"{session}-off")).to_be_visible()

    hide(inbox, False)
    inbox.page.get_by_role("button", name="Notify me").click()  # on again
    hide(inbox)
    asker.ask(f"{session}-last", [question("last")])
    expect(inbox.card(f"{session}-last")).to_be_visible()
    assert notifications(inbox, 1) == [
        {"title": f"Question from {session}-last", "body": "“Ship last?”"}
    ]


def test_questions_replayed_at_once_make_one_notification(
    open_inbox: OpenInbox, asker: Asker, session: str
) -> None:
    asker.ask(f"{session}-a", [question("a")])
    asker.ask(f"{session}-b", [question("b")])
    asker.host.wait_pending(2)
    hidden_from_the_start = RECORD_AND_HIDE + "window.__setHidden(true);"
    inbox = open_inbox(install(hidden_from_the_start, TURNED_ON), permissions=["notifications"])
    shown = notifications(inbox, 1)
    assert len(shown) == 1
    assert shown[0]["title"] == "2 questions are waiting"
    assert shown[0]["body"].splitlines() == ["“Ship a?”", "“Ship b?”"]


def test_a_browser_that_refuses_permission_shows_notifications_are_blocked(
    open_inbox: OpenInbox,
) -> None:
    inbox = open_inbox(install(RECORD_AND_HIDE))  # no permission granted to the page
    inbox.page.get_by_role("button", name="Notify me").click()
    blocked = inbox.page.get_by_role("button", name="Notifications blocked")
    expect(blocked).to_be_disabled()
    expect(blocked).to_have_attribute(
        "title",
        "This browser blocks notifications from this page: allow them in the site settings.",
    )
