"""A quorum in Chromium: the real `uq hook claude` asks with an asker token made with
`uq token add deploy --role asker --approvals 2`; both cards say "0 of 2 approved"; alice allows
the call on her page and her card stays open, saying her approval is counted, while bob's card,
open on his page all along, says "1 of 2 approved: alice" without a reload (the hook still
waiting); bob's Allow settles it and the hook allows the call. "Allow and don't ask again" (a
rule carrying the quorum) is offered to the admin alone."""

from __future__ import annotations

import json
import secrets
import subprocess
from pathlib import Path

from playwright.sync_api import Browser, Locator, expect

from tests.e2e.conftest import start_hook
from tests.e2e.test_fair_share import accepted
from tests.e2e.test_host_cli import uq
from tests.e2e.test_uq_hook import UQ
from tests.e2e.web.conftest import Host, inboxes
from tests.e2e.web.test_web_hooks import HOOK_SECONDS, fixture_event

REMEMBER = "Allow and don't ask again"


def add_token(host: Host, name: str, *grants: str) -> str:
    made = uq("token", "add", name, *grants, "--store", str(host.db))
    assert made.returncode == 0, made.stderr
    token = made.stdout.splitlines()[0]
    accepted(host, token)
    return token


def approve(card: Locator) -> None:
    """A person's Allow on the card, sent."""
    card.locator(".option", has_text="Allow").first.click()
    card.get_by_role("button", name="Submit").click()


def assert_allowed(hook: subprocess.Popen[str]) -> None:
    """The waiting `uq hook claude` ends, allowing the call."""
    out, err = hook.communicate(timeout=HOOK_SECONDS)
    assert (hook.returncode, err) == (0, "")
    assert json.loads(out)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}


def test_the_first_approval_is_counted_on_the_page_and_the_second_allows(
    browser: Browser, host: Host, tmp_path: Path
) -> None:
    suffix = secrets.token_hex(3)  # the host is the module's: names of this test's own
    deploy = add_token(host, f"deploy-{suffix}", "--role", "asker", "--approvals", "2")
    alice = add_token(host, f"alice-{suffix}")
    bob = add_token(host, f"bob-{suffix}")
    event = fixture_event("claude_code", "permission_request_bash")
    hook = start_hook(
        [UQ, "hook", "claude", "--url", f"{host.base}/?token={deploy}"], json.dumps(event), tmp_path
    )
    session = f"claude-code:{event['session_id']}"
    try:
        with (
            inboxes(browser, f"{host.base}/?token={alice}") as open_alice,
            inboxes(browser, f"{host.base}/?token={bob}") as open_bob,
        ):
            alice_card, bob_card = open_alice().card(session), open_bob().card(session)
            for card in (alice_card, bob_card):
                expect(card.locator(".card-quorum")).to_have_text("0 of 2 approved")
                expect(card.locator(".option", has_text=REMEMBER)).to_have_count(0)
            with inboxes(browser, host.page_url) as open_admin:  # the host's own token
                admin_card = open_admin().card(session)
                expect(admin_card.locator(".option", has_text=REMEMBER)).to_have_count(1)
            approve(alice_card)
            counted = f"1 of 2 approved: alice-{suffix}"
            expect(alice_card.locator(".card-status")).to_contain_text("approval is counted")
            for card in (alice_card, bob_card):
                expect(card.locator(".card-quorum")).to_have_text(counted)
            assert hook.poll() is None
            approve(bob_card)
            assert_allowed(hook)
    finally:
        if hook.poll() is None:
            hook.kill()
            hook.communicate()
