"""A runaway agent in Chromium: 500 identical asks of one asker token are one card that says
"asked 500 times" ("500번 질문함" on a Korean page; `uq pending` says so too); the count follows
new asks on the open page; one answer settles all of them, and every ask is told the answer
exactly once."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import expect
from websockets.sync.client import connect

from tests.e2e.test_fair_share import accepted, add_asker
from tests.e2e.test_host_cli import uq
from tests.e2e.web.conftest import Host, OpenInbox

ASKS = 500
QUESTION = {
    "id": "again",
    "question": "Run the migration again?",
    "options": [{"label": "Yes"}, {"label": "No"}],
}
WAIT = 60.0
"""Generous: 500 asks and their settlements on a loaded 2-core machine."""


def ask_frame(rpc_id: str) -> str:
    return json.dumps(
        {"type": "ask", "rpcId": rpc_id, "sessionId": "loop", "questions": [QUESTION]}
    )


def test_identical_asks_are_one_card_with_a_count_and_one_answer_settles_them_all(
    host: Host, open_inbox: OpenInbox
) -> None:
    assert host.db is not None
    token = add_asker(host.db, "runaway", "--max-pending", "1000", "--rate", "1000:1000")
    accepted(host, token)
    address = host.base.replace("http", "ws", 1) + "/ws/ask"
    with connect(address, additional_headers={"Authorization": f"Bearer {token}"}) as agent:
        for number in range(ASKS):
            agent.send(ask_frame(f"loop-{number}"))
        replies = [json.loads(agent.recv(timeout=WAIT)) for _ in range(ASKS)]
        assert {reply["payload"]["type"] for reply in replies} == {"ask/pending"}
        (card,) = host.pending()
        assert (card["rpcId"], card["group"]) == ("loop-0", {"count": ASKS})
        listed = uq("pending", "--url", host.base, "--token", host.token)
        assert listed.returncode == 0, listed.stderr
        (line,) = listed.stdout.splitlines()
        assert line.startswith("loop-0")
        assert line.endswith(f"(asked {ASKS} times)")

        page = open_inbox().page
        expect(page.locator(".card")).to_have_count(1)
        shown = page.locator(".card", has_text="Run the migration again?")
        expect(shown.locator(".times")).to_have_text(f"asked {ASKS} times")
        korean = open_inbox(locale="ko-KR").page.locator(".card .times")  # in its language
        expect(korean).to_have_text(f"{ASKS}번 질문함")
        said = "이 요청자의 같은 요청들: 한 번 답하면 모두 처리됩니다"
        expect(korean).to_have_attribute("title", said)
        agent.send(ask_frame("loop-late"))  # one more while the page is open: its count
        assert json.loads(agent.recv(timeout=WAIT))["payload"]["type"] == "ask/pending"
        expect(shown.locator(".times")).to_have_text(f"asked {ASKS + 1} times")
        expect(page.locator(".card")).to_have_count(1)

        shown.get_by_role("radio", name="Yes").check()
        shown.get_by_role("button", name="Submit").click()
        told: dict[str, dict[str, Any]] = {}
        while len(told) < ASKS + 1:
            reply = json.loads(agent.recv(timeout=WAIT))
            assert reply["rpcId"] not in told, f"{reply['rpcId']} was told twice"
            told[reply["rpcId"]] = reply["payload"]
        expected = {"type": "ask/settled", "outcome": "answered"}
        answered = {"answers": [{"id": "again", "selected": ["Yes"]}]}
        assert all(payload == {**expected, "answer": answered} for payload in told.values())
        assert set(told) == {f"loop-{number}" for number in range(ASKS)} | {"loop-late"}
        expect(page.locator(".card")).to_have_count(0)
        assert host.pending() == []
