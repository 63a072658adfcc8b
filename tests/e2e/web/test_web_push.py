"""Web Push in Debian's Chromium: the page subscribes and registers the subscription, the host
pushes to a push service on loopback (`tests/push_fake.py`, which checks VAPID and decrypts), and
the service worker shows what it decrypted with a button per choice and answers from a button.

Headless Chromium has no push service of its own (`PushManager.subscribe` fails there), so an
init script stands in for the two `PushManager` methods the page calls: `subscribe` records the
`applicationServerKey` it was given and returns the fake service's subscription, whose `toJSON()`
is a browser's. Everything else is the browser's own: the service worker, its IndexedDB, its
notifications (`Notification.maxActions` is 2 here), and the push itself, delivered to the worker
with DevTools' `ServiceWorker.deliverPushMessage`, as the push service would once it decrypted
it; a tap on a button is the worker's `notificationclick` with that button's action.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import BrowserContext, CDPSession, Page, Worker, expect

from tests.e2e.web.conftest import Asker, Host, Inbox, OpenInbox, answer_of
from tests.push_fake import Browser, FakePushService, Push, push_service, unb64

SHIM = """
((made) => {
  let current = null;
  window.__subscribedWith = null;
  PushManager.prototype.getSubscription = async function () {
    return current;
  };
  PushManager.prototype.subscribe = async function (options) {
    window.__subscribedWith = Array.from(new Uint8Array(options.applicationServerKey));
    current = {
      endpoint: made.endpoint,
      options,
      toJSON: () => made,
      unsubscribe: async () => {
        current = null;
        return true;
      },
    };
    return current;
  };
})(%s);
"""
SHOWN = """async (tag) => {
  for (let tries = 0; tries < 400; tries += 1) {
    const shown = await self.registration.getNotifications({ tag });
    if (shown.length > 0) {
      return shown.map((note) => ({
        title: note.title,
        body: note.body,
        actions: note.actions.map((action) => [action.action, action.title]),
      }));
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return [];
}"""
"""The notifications of `tag` once there are some (a bounded wait inside the worker)."""
CLOSED = """async (tag) => {
  for (let tries = 0; tries < 400; tries += 1) {
    if ((await self.registration.getNotifications({ tag })).length === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}"""
TAP = """async ([tag, action]) => {
  const [notification] = await self.registration.getNotifications({ tag });
  self.dispatchEvent(new NotificationEvent("notificationclick", { notification, action }));
}"""
"""A tap on the button `action` of the notification `tag`, as the browser dispatches it."""


@pytest.fixture
def service() -> Iterator[FakePushService]:
    with push_service() as running:
        yield running


def subscribed_inbox(open_inbox: OpenInbox, host: Host, browser: Browser) -> Inbox:
    """The page, with notifications allowed and turned on: subscribed and registered."""
    inbox = open_inbox(
        lambda page: page.add_init_script(SHIM % json.dumps(browser.to_json())),
        permissions=["notifications"],
    )
    inbox.page.get_by_role("button", name="Notify me").click()
    toggle = inbox.page.get_by_role("button", name="Notifications on")
    expect(toggle).to_have_attribute("title", re.compile("even with no tab open"))
    return inbox


def worker(context: BrowserContext) -> Worker:
    (found,) = [each for each in context.service_workers if each.url.endswith("/sw.js")]
    return found


def deliver(page: Page, host: Host, push: Push) -> None:
    """Hand `push`'s plain text to the page's service worker, as its push service would."""
    cdp: CDPSession = page.context.new_cdp_session(page)
    registrations: list[dict[str, Any]] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda e: registrations.extend(e["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    deadline = time.monotonic() + 10
    while not registrations:  # the event comes while the connection is read: any call reads it
        assert time.monotonic() < deadline, "DevTools named no service worker registration"
        page.evaluate("0")
    registration = registrations[0]["registrationId"]
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": host.base, "registrationId": registration, "data": push.plain.decode()},
    )
    cdp.detach()


def test_the_page_subscribes_with_the_hosts_key_and_registers_for_its_person(
    open_inbox: OpenInbox, host: Host, service: FakePushService
) -> None:
    inbox = subscribed_inbox(open_inbox, host, service.subscribe())
    key = httpx.get(f"{host.base}/api/push/key").json()["publicKey"]
    assert bytes(inbox.page.evaluate("window.__subscribedWith")) == unb64(key)
    listed = httpx.get(f"{host.base}/api/push/subscriptions", headers=host.auth).json()
    assert [each["service"] for each in listed["subscriptions"]] == ["127.0.0.1"]
    inbox.page.get_by_role("button", name="Notifications on").click()  # off: unsubscribed
    expect(inbox.page.get_by_role("button", name="Notify me")).to_be_visible()  # after the DELETE
    listed = httpx.get(f"{host.base}/api/push/subscriptions", headers=host.auth).json()
    assert listed == {"subscriptions": []}


def test_the_worker_shows_a_push_with_a_button_per_choice_and_a_tap_answers(
    open_inbox: OpenInbox, host: Host, service: FakePushService, asker: Asker, session: str
) -> None:
    inbox = subscribed_inbox(open_inbox, host, service.subscribe())
    service.application_key = httpx.get(f"{host.base}/api/push/key").json()["publicKey"]
    asked = asker.ask(
        session,
        [{"id": "pick", "question": "Which one?", "options": [{"label": "a"}, {"label": "b"}]}],
    )
    (push,) = service.pushes.wait_for(1)
    assert service.refused.items == []
    tag = push.json["tag"]
    deliver(inbox.page, host, push)
    sw = worker(inbox.page.context)
    (shown,) = sw.evaluate(SHOWN, tag)
    assert shown == {
        "title": f"Question from {session}",
        "body": "Which one?",
        "actions": [["option-0", "a"], ["option-1", "b"]],
    }
    sw.evaluate(TAP, [tag, "option-1"])
    assert answer_of(asked) == {"answers": [{"id": "pick", "selected": ["b"]}]}
    settled = service.pushes.wait_for(2)[1]
    assert (settled.json["type"], settled.json["tag"]) == ("question/settled", tag)
    deliver(inbox.page, host, settled)
    assert sw.evaluate(CLOSED, tag) is True
    history = httpx.get(f"{host.base}/api/history", headers=host.auth).json()["items"]
    (item,) = [each for each in history if each["sessionId"] == session]
    assert (item["via"], item["by"]) == ("push", "owner")


def test_a_question_with_more_choices_than_buttons_shows_none(
    open_inbox: OpenInbox, host: Host, service: FakePushService, asker: Asker, session: str
) -> None:
    inbox = subscribed_inbox(open_inbox, host, service.subscribe())
    options = [{"label": label} for label in "abc"]  # three: this browser shows two buttons
    asker.ask(session, [{"id": "pick", "question": "Which of three?", "options": options}])
    (push,) = service.pushes.wait_for(1)
    assert len(push.json["choices"]) == 3
    deliver(inbox.page, host, push)
    (shown,) = worker(inbox.page.context).evaluate(SHOWN, push.json["tag"])
    assert (shown["body"], shown["actions"]) == ("Which of three?", [])
