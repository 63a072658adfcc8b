"""Quorum approvals through the host: an asker token made with `"approvals": 2` over
`/api/tokens` asks an approval; one person's Allow leaves it pending (the receipt says "1 of 2
approved: alice"), their second changes nothing, a second person settles it allowed, the first
Deny settles it denied at once, an approval with changes starts the count again for the changed
call; where it stands is told in the language of who approved (their `Accept-Language`); a bad
quorum is refused with `BAD_REQUEST`; and the asker hears only the settlement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from tests.host.conftest import AUTH, answer_frame, ask_frame
from user_questions.approvals import ALLOW, DENY, approval_question
from user_questions.host.rules.making import add_rule
from user_questions.host.stores import Decision, open_store

CALL = {"command": "kubectl apply -f prod.yaml"}
CARD = approval_question("Bash", CALL, agent="claude-code")
PEOPLE = {"alice": "person", "bob": "person", "carol": "admin"}


class Host:
    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.tokens: dict[str, str] = {}
        made = client.post(
            "/api/tokens", headers=AUTH, json={"name": "deploy", "role": "asker", "approvals": 2}
        )
        assert made.status_code == 201, made.text
        self.tokens["deploy"] = made.json()["token"]
        for name, role in PEOPLE.items():
            made = client.post("/api/tokens", headers=AUTH, json={"name": name, "role": role})
            self.tokens[name] = made.json()["token"]

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def answer(
        self, name: str, rpc_id: str, languages: str | None = None, **item: Any
    ) -> dict[str, Any]:
        """`name`'s answer over `POST /api/respond`, reading `languages` (`Accept-Language`)."""
        frame = answer_frame(rpc_id, "claude-code:1", {"id": "approval", **item})
        accepted = {} if languages is None else {"Accept-Language": languages}
        headers = {**self.auth(name), **accepted}
        response = self.client.post("/api/respond", json=frame, headers=headers)
        assert response.status_code == 200, response.text
        receipt: dict[str, Any] = response.json()
        return receipt

    def pending(self) -> list[str]:
        response = self.client.get("/api/pending", headers=AUTH)
        return [frame["rpcId"] for frame in response.json()["pending"]]


@pytest.fixture
def host(client: TestClient) -> Host:
    return Host(client)


def approval_frame(rpc_id: str) -> dict[str, Any]:
    approval = {"tool": "Bash", "input": CALL, "agent": "claude-code", "editable": True}
    return {**ask_frame(rpc_id, CARD, session="claude-code:1"), "approval": approval}


def test_the_token_shows_its_quorum_and_refuses_one_out_of_bounds(host: Host) -> None:
    listed = host.client.get("/api/tokens", headers=AUTH).json()
    shown = {token["name"]: token.get("approvals") for token in listed["tokens"]}
    assert shown["deploy"] == 2
    assert shown["alice"] is None
    for bad in (0, 11, "2"):
        refused = host.client.patch("/api/tokens/deploy", headers=AUTH, json={"approvals": bad})
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == "BAD_REQUEST"
    changed = host.client.patch("/api/tokens/deploy", headers=AUTH, json={"approvals": 3})
    assert changed.json()["approvals"] == 3


def test_two_people_allow_it_the_same_person_twice_does_not(host: Host) -> None:
    with host.client.websocket_connect("/ws/ask", headers=host.auth("deploy")) as asker:
        asker.send_json(approval_frame("apply"))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        first = host.answer("alice", "apply", selected=[ALLOW])
        assert first == {"accepted": True, "message": "1 of 2 approved: alice"}
        again = host.answer("alice", "apply", selected=[ALLOW])
        assert again["message"] == "your approval was counted already; 1 of 2 approved: alice"
        assert host.pending() == ["apply"]
        [listed] = host.client.get("/api/pending", headers=host.auth("bob")).json()["pending"]
        assert listed["quorum"] == {"needed": 2, "approvedBy": ["alice"]}
        second = host.answer("carol", "apply", selected=[ALLOW])
        assert (second["accepted"], second.get("message")) == (True, None)
        settled = asker.receive_json()  # the asker hears the settlement, and only it
    assert settled["payload"]["outcome"] == "answered"
    assert settled["payload"]["answer"]["answers"][0]["selected"] == [ALLOW]
    assert host.pending() == []
    entry = host.client.get("/api/history", headers=AUTH).json()["items"][0]
    assert (entry["rpcId"], entry["by"]) == ("apply", "carol")


def test_where_the_quorum_stands_is_told_in_the_language_of_who_approved(host: Host) -> None:
    with host.client.websocket_connect("/ws/ask", headers=host.auth("deploy")) as asker:
        asker.send_json(approval_frame("apply"))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        first = host.answer("alice", "apply", "ko-KR,ko;q=0.9", selected=[ALLOW])
        assert first == {"accepted": True, "message": "2명 중 1명 승인: alice"}
        again = host.answer("alice", "apply", "zh-CN", selected=[ALLOW])
        assert again["message"] == "你的批准已计入；已批准 1/2：alice"
        headers = {**host.auth("bob"), "Accept-Language": "ja-JP"}
        with host.client.websocket_connect("/ws", headers=headers) as page:
            assert page.receive_json()["rpcId"] == "apply"  # the card, shown
            item = {"id": "approval", "selected": [ALLOW], "edited": {"command": "true"}}
            page.send_json(answer_frame("apply", "claude-code:1", item))
            receipt = page.receive_json()["payload"]
        assert receipt["message"] == "2 人中 1 人が承認：bob"  # a changed call counts apart
        assert host.pending() == ["apply"]


def test_a_deny_after_one_approval_settles_it_denied(host: Host) -> None:
    with host.client.websocket_connect("/ws/ask", headers=host.auth("deploy")) as asker:
        asker.send_json(approval_frame("apply"))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        assert host.answer("alice", "apply", selected=[ALLOW])["accepted"] is True
        assert host.answer("bob", "apply", selected=[DENY])["accepted"] is True
        settled = asker.receive_json()
    assert settled["payload"]["answer"]["answers"][0]["selected"] == [DENY]
    assert host.pending() == []


def test_an_approval_with_changes_starts_the_count_again(host: Host) -> None:
    changed = {"command": "kubectl apply -f prod.yaml --dry-run=server"}
    with host.client.websocket_connect("/ws/ask", headers=host.auth("deploy")) as asker:
        asker.send_json(approval_frame("apply"))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        host.answer("alice", "apply", selected=[ALLOW])
        editing = host.answer("bob", "apply", selected=[ALLOW], edited=changed)
        assert editing["message"] == "1 of 2 approved: bob"
        host.answer("alice", "apply", selected=[ALLOW], edited=changed)
        settled = asker.receive_json()
    assert settled["payload"]["answer"]["answers"][0]["edited"] == changed


def test_an_allow_rule_with_a_quorum_asks_that_many_people(host: Host, tmp_path: Path) -> None:
    async def make_rule() -> None:
        async with open_store(tmp_path / "host.db", host=False) as store:
            await add_rule(store, "Bash", Decision.ALLOW, command="kubectl apply", approvals=2)

    anyio.run(make_rule)
    agents = {"Authorization": f"Bearer {host.client.app.state.asker_token}"}  # type: ignore[attr-defined]
    with host.client.websocket_connect("/ws/ask", headers=agents) as asker:
        asker.send_json(approval_frame("apply"))  # the rule alone would have allowed it
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        assert host.answer("alice", "apply", selected=[ALLOW])["message"] == (
            "1 of 2 approved: alice"
        )
        assert host.answer("bob", "apply", selected=[ALLOW])["accepted"] is True
        settled = asker.receive_json()
    assert settled["payload"]["outcome"] == "answered"


def test_only_an_admin_remembers_a_quorum_and_the_rule_keeps_it(host: Host) -> None:
    with host.client.websocket_connect("/ws/ask", headers=host.auth("deploy")) as asker:
        asker.send_json(approval_frame("apply"))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        frame = answer_frame("apply", "claude-code:1", {"id": "approval", "selected": [ALLOW]})
        frame["result"]["value"]["remember"] = True
        refused = host.client.post("/api/respond", json=frame, headers=host.auth("alice")).json()
        assert refused["accepted"] is False
        assert "a rule that asks for a quorum of approvals is an admin's" in refused["message"]
        assert host.answer("alice", "apply", selected=[ALLOW])["message"] == (
            "1 of 2 approved: alice"
        )
        settled = host.client.post("/api/respond", json=frame, headers=host.auth("carol")).json()
        assert settled == {"accepted": True}
        asker.receive_json()
    (rule,) = host.client.get("/api/rules", headers=AUTH).json()["rules"]
    assert rule["text"].endswith("once 2 people approve")
