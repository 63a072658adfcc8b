"""Two `uq serve` nodes on one PostgreSQL database, in real browsers: a question an agent asks
through node A is answered in a browser on node B, and the browser on node A drops its card; a
quorum's approval given on node A is counted on node B's page."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from anyio.from_thread import BlockingPortal
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import start_hook
from tests.e2e.host_process import free_port
from tests.e2e.test_fair_share import accepted
from tests.e2e.test_uq_hook import UQ
from tests.e2e.web.conftest import DESKTOP, RESULTS, Asker, Host, OpenInbox, answer_of, inboxes
from tests.e2e.web.test_web_hooks import fixture_event
from tests.e2e.web.test_web_quorum import approve, assert_allowed
from tests.pg import PostgresCluster

DATABASE = {
    "id": "db",
    "question": "Which database?",
    "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}],
}


@pytest.fixture(scope="module")
def nodes(pg_cluster: PostgresCluster) -> Iterator[tuple[Host, Host]]:
    """Node A and node B on one fresh database; B reads the token A stored."""
    database = pg_cluster.create_database()
    started: list[Host] = []
    try:
        for _ in range(2):
            node = Host(None, port=free_port(), args=("--store", pg_cluster.url(database)))
            node.start()
            started.append(node)
        yield started[0], started[1]
    finally:
        for node in started:
            node.stop()
        pg_cluster.drop_database(database)


@pytest.fixture(scope="module")
def host(nodes: tuple[Host, Host]) -> Host:
    """The node `open_inbox` opens: node B."""
    return nodes[1]


def test_a_question_asked_through_one_node_is_answered_in_a_browser_on_another(
    nodes: tuple[Host, Host],
    open_inbox: OpenInbox,
    browser: Browser,
    portal: BlockingPortal,
    session: str,
) -> None:
    node_a, node_b = nodes
    assert node_a.token == node_b.token
    on_b = open_inbox()
    context_a = browser.new_context(
        viewport={"width": DESKTOP["width"], "height": DESKTOP["height"]}
    )
    page_a = context_a.new_page()
    page_a.goto(node_a.page_url)
    agents = Asker(portal, node_a)
    try:
        asked = agents.ask(session, [DATABASE])
        card_a = page_a.locator(".card", has_text=session)
        expect(card_a).to_be_visible()
        card_b = on_b.card(session)
        card_b.get_by_role("radio", name="SQLite").check()
        RESULTS.mkdir(parents=True, exist_ok=True)
        on_b.page.screenshot(path=RESULTS / "multinode-node-b.png")
        card_b.get_by_role("button", name="Submit").click()
        assert answer_of(asked) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
        expect(card_a).to_have_count(0)
        expect(page_a.locator("#notices")).to_contain_text("Answered elsewhere")
    finally:
        agents.withdraw_all()
        context_a.close()


def test_an_approval_on_one_node_is_counted_on_the_other_nodes_page(
    nodes: tuple[Host, Host], browser: Browser, tmp_path: Path
) -> None:
    """A quorum of two: alice allows on node A's page, bob's page on node B says "1 of 2
    approved: alice" without a reload, and bob's Allow there lets the hook's call run."""
    node_a, node_b = nodes
    suffix = secrets.token_hex(3)
    tokens = {}
    for name, grants in (
        (f"deploy-{suffix}", {"role": "asker", "approvals": 2}),
        (f"alice-{suffix}", {}),
        (f"bob-{suffix}", {}),
    ):
        made = httpx.post(
            f"{node_a.base}/api/tokens", headers=node_a.auth, json={"name": name, **grants}
        )
        assert made.status_code == 201, made.text
        tokens[name.split("-")[0]] = made.json()["token"]
        for node in nodes:
            accepted(node, tokens[name.split("-")[0]])
    event = fixture_event("claude_code", "permission_request_bash")
    hook = start_hook(
        [UQ, "hook", "claude", "--url", f"{node_a.base}/?token={tokens['deploy']}"],
        json.dumps(event),
        tmp_path,
    )
    session = f"claude-code:{event['session_id']}"
    try:
        with (
            inboxes(browser, f"{node_a.base}/?token={tokens['alice']}") as open_alice,
            inboxes(browser, f"{node_b.base}/?token={tokens['bob']}") as open_bob,
        ):
            alice_card, bob_card = open_alice().card(session), open_bob().card(session)
            expect(bob_card.locator(".card-quorum")).to_have_text("0 of 2 approved")
            approve(alice_card)
            expect(bob_card.locator(".card-quorum")).to_have_text(
                f"1 of 2 approved: alice-{suffix}"
            )
            assert hook.poll() is None
            approve(bob_card)
            assert_allowed(hook)
    finally:
        if hook.poll() is None:
            hook.kill()
            hook.communicate()
