"""`/api/rules` on the real app, and rules applied to the asks that come in: a person's rule
settles an approval before anyone sees it, in history, metrics and the rule's hits; an asker can
neither make nor read a rule."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.host.conftest import TOKEN
from user_questions.approvals import approval_of, approval_question
from user_questions.frames import Ask

ADMIN = {"Authorization": f"Bearer {TOKEN}"}
CARD = approval_question("Bash", {"command": "npm run test"}, agent="Codex")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def person(client: TestClient, name: str = "alice") -> dict[str, str]:
    made = client.post("/api/tokens", headers=ADMIN, json={"name": name, "role": "person"})
    assert made.status_code == 201
    return bearer(made.json()["token"])


def asker(client: TestClient) -> dict[str, str]:
    return bearer(client.app.state.asker_token)  # type: ignore[attr-defined]


def ask_frame(rpc_id: str, command: str, *, approval: bool = True) -> Ask:
    """Codex's card for `command`, with what it approves unless `approval` is false."""
    card = approval_question("Bash", {"command": command}, agent="Codex")
    return Ask(
        rpc_id=rpc_id,
        session_id="codex:1",
        questions=[card],
        approval=approval_of("Bash", {"command": command}, agent="codex", cwd="/home/dev/shop")
        if approval
        else None,
    )


def ask(client: TestClient, rpc_id: str, command: str, *, approval: bool = True) -> dict[str, Any]:
    """Ask the card for `command` as the agents' asker; the first reply's payload."""
    frame = ask_frame(rpc_id, command, approval=approval)
    with client.websocket_connect("/ws/ask", headers=asker(client)) as socket:
        socket.send_text(frame.model_dump_json(by_alias=True, exclude_none=True))
        reply: dict[str, Any] = json.loads(socket.receive_text())["payload"]
        return reply


def test_an_asker_is_refused_on_every_rules_route(client: TestClient) -> None:
    agents = asker(client)
    for method, path, body in (
        ("GET", "/api/rules", None),
        ("POST", "/api/rules", {"tool": "Bash", "command": "ls", "decision": "allow"}),
        ("DELETE", "/api/rules/1", None),
    ):
        refused = client.request(method, path, headers=agents, json=body)
        assert refused.status_code == 403, (method, path)
        assert refused.json()["error"]["code"] == "FORBIDDEN"
    assert client.get("/api/rules", headers=ADMIN).json() == {"rules": []}


def test_a_person_makes_lists_and_revokes_rules(client: TestClient) -> None:
    alice = person(client)
    made = client.post(
        "/api/rules",
        headers=alice,
        json={
            "tool": "Bash",
            "command": "npm  run test",
            "decision": "allow",
            "expires": "7d",
            "asker": "agents",  # a person's rule names an asker routed to them (issue 35)
        },
    )
    assert made.status_code == 201
    rule = made.json()
    assert (rule["command"], rule["createdBy"], rule["hits"]) == ("npm run test", "alice", 0)
    assert rule["text"] == "allow Bash npm run test for agents"
    assert rule["expiresAt"] is not None
    assert client.get("/api/rules", headers=ADMIN).json()["rules"] == [rule]
    revoked = client.delete(f"/api/rules/{rule['id']}", headers=alice)
    assert revoked.status_code == 200
    assert revoked.json()["revokedAt"] is not None
    again = client.delete(f"/api/rules/{rule['id']}", headers=alice)
    assert (again.status_code, again.json()["error"]["code"]) == (404, "NOT_FOUND")
    assert client.delete("/api/rules/x", headers=alice).status_code == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"tool": "*", "decision": "allow"}, "can only deny"),
        ({"tool": "Bash", "decision": "maybe"}, "decision"),
        ({"tool": "Bash", "decision": "allow", "expires": "soon"}, "invalid duration"),
        ({"tool": "Read", "decision": "allow", "path": "src/**"}, "absolute"),
    ],
)
def test_a_bad_rule_is_refused_with_a_code(
    client: TestClient, body: dict[str, str], message: str
) -> None:
    refused = client.post("/api/rules", headers=ADMIN, json=body)
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "BAD_REQUEST"
    assert message in refused.json()["error"]["message"]


def test_an_allow_rule_answers_the_approval_before_anyone_sees_it(client: TestClient) -> None:
    alice = person(client)
    rule = client.post(
        "/api/rules",
        headers=alice,
        json={"tool": "Bash", "command": "npm run test", "decision": "allow", "asker": "agents"},
    ).json()
    reply = ask(client, "r1", "npm run test -- --ci")
    assert reply["type"] == "ask/settled"
    assert reply["outcome"] == "answered"
    assert reply["answer"] == {"answers": [{"id": "approval", "selected": ["Allow"]}]}
    assert client.get("/api/pending", headers=ADMIN).json()["pending"] == []
    (entry,) = client.get("/api/history", headers=alice).json()["items"]
    assert (entry["via"], entry["by"], entry.get("shownAt")) == ("rule", f"rule:{rule['id']}", None)
    assert entry["approval"]["input"] == {"command": "npm run test -- --ci"}
    (listed,) = client.get("/api/rules", headers=alice).json()["rules"]
    assert listed["hits"] == 1
    assert listed["lastUsedAt"] is not None
    metrics = client.get("/metrics", headers=ADMIN).text
    assert 'uq_requests_settled_total{outcome="answered",surface="rule"} 1.0' in metrics


def test_a_deny_rule_denies_with_its_reason_and_beats_an_allow(client: TestClient) -> None:
    client.post(
        "/api/rules", headers=ADMIN, json={"tool": "Bash", "command": "npm", "decision": "allow"}
    )
    deny = client.post(
        "/api/rules",
        headers=ADMIN,
        json={"tool": "*", "command": "npm publish", "decision": "deny"},
    ).json()
    reply = ask(client, "r2", "npm publish --tag next")
    assert reply["outcome"] == "answered"
    (item,) = reply["answer"]["answers"]
    assert item == {
        "id": "approval",
        "selected": [],
        "custom": f"denied by rule {deny['id']}: npm publish",
    }


def test_a_compound_command_and_a_plain_question_are_left_to_a_person(client: TestClient) -> None:
    client.post(
        "/api/rules", headers=ADMIN, json={"tool": "Bash", "command": "npm", "decision": "allow"}
    )
    assert ask(client, "r3", "npm test && curl x | sh")["type"] == "ask/pending"
    assert ask(client, "r4", "npm test", approval=False)["type"] == "ask/pending"
    pending = client.get("/api/pending", headers=ADMIN).json()["pending"]
    assert {frame["rpcId"] for frame in pending} == {"r3", "r4"}


def test_a_rule_with_a_quorum_is_made_and_listed_with_its_approvals(client: TestClient) -> None:
    body = {"tool": "Bash", "command": "kubectl apply", "decision": "allow", "approvals": 2}
    made = client.post("/api/rules", headers=ADMIN, json=body)
    assert made.status_code == 201, made.text
    assert made.json()["approvals"] == 2
    assert made.json()["text"].endswith("once 2 people approve")
    [listed] = client.get("/api/rules", headers=ADMIN).json()["rules"]
    assert (listed["id"], listed["approvals"]) == (made.json()["id"], 2)
    plain = {"tool": "Bash", "command": "ls", "decision": "allow"}
    assert "approvals" not in client.post("/api/rules", headers=ADMIN, json=plain).json()
    # the rule asks instead of allowing: the call waits for two people
    assert ask(client, "apply", "kubectl apply -f prod.yaml") == {"type": "ask/pending"}
    [pending] = client.get("/api/pending", headers=ADMIN).json()["pending"]
    assert pending["quorum"] == {"needed": 2, "approvedBy": []}
    for bad in (0, 11, "2"):
        refused = client.post("/api/rules", headers=ADMIN, json={**body, "approvals": bad})
        assert refused.status_code == 400, bad
        assert refused.json()["error"]["code"] == "BAD_REQUEST"
    deny = {**body, "decision": "deny"}
    assert client.post("/api/rules", headers=ADMIN, json=deny).status_code == 400
    alice = person(client)
    mine = {**body, "asker": "agents"}
    refused = client.post("/api/rules", headers=alice, json=mine)
    assert refused.status_code == 403
    assert "quorum" in refused.json()["error"]["message"]
