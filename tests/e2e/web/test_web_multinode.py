"""Two `uq serve` nodes on one PostgreSQL database, in real browsers: a question an agent asks
through node A is answered in a browser on node B, and the browser on node A drops its card."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from anyio.from_thread import BlockingPortal
from playwright.sync_api import Browser, expect

from tests.e2e.host_process import free_port
from tests.e2e.web.conftest import DESKTOP, RESULTS, Asker, Host, OpenInbox, answer_of
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
