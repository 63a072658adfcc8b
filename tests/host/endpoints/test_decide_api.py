"""`POST /api/decide` on the real app: an asker's approval that a rule settles at once (as the
asker protocol would have stored it), or, with no rule, nothing stored and 204; never for a
token that can answer, never for a plain question."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from tests.host.endpoints.test_rules_api import ADMIN, ask_frame, asker, person


def body(rpc_id: str, command: str, *, approval: bool = True) -> dict[str, Any]:
    frame = ask_frame(rpc_id, command, approval=approval)
    payload: dict[str, Any] = frame.model_dump(mode="json", by_alias=True, exclude_none=True)
    return payload


def rule(client: TestClient, command: str, decision: str) -> int:
    made = client.post(
        "/api/rules",
        headers=person(client),
        # A person's rule names an asker routed to them (issue 35): the host's agents here.
        json={"tool": "Bash", "command": command, "decision": decision, "asker": "agents"},
    )
    assert made.status_code == 201
    rule_id: int = made.json()["id"]
    return rule_id


def test_a_rule_settles_the_approval_and_it_is_in_history_as_the_asker_protocol_stores_it(
    client: TestClient,
) -> None:
    rule_id = rule(client, "npm run test", "allow")
    decided = client.post("/api/decide", headers=asker(client), json=body("r1", "npm run test"))
    assert decided.status_code == 200
    assert decided.headers["cache-control"] == "no-store"
    reply = decided.json()
    assert reply["rpcId"] == "r1"
    assert reply["payload"]["type"] == "ask/settled"
    assert reply["payload"]["outcome"] == "answered"
    assert reply["payload"]["answer"]["answers"][0]["selected"] == ["Allow"]
    (entry,) = client.get("/api/history", headers=ADMIN).json()["items"]
    assert (entry["rpcId"], entry["via"], entry["by"]) == ("r1", "rule", f"rule:{rule_id}")
    assert entry["askedBy"] == "agents"
    (listed,) = client.get("/api/rules", headers=ADMIN).json()["rules"]
    assert listed["hits"] == 1
    metrics = client.get("/metrics", headers=ADMIN).text
    assert 'uq_requests_settled_total{outcome="answered",surface="rule"} 1.0' in metrics


def test_a_deny_rule_answers_with_its_reason(client: TestClient) -> None:
    rule_id = rule(client, "rm -rf", "deny")
    reply = client.post("/api/decide", headers=asker(client), json=body("r1", "rm -rf /")).json()
    (answer,) = reply["payload"]["answer"]["answers"]
    assert answer["custom"] == f"denied by rule {rule_id}: rm -rf"


def test_with_no_rule_nothing_is_stored_and_the_asker_is_told_to_ask(client: TestClient) -> None:
    rule(client, "npm run test", "allow")
    undecided = client.post("/api/decide", headers=asker(client), json=body("r1", "git push"))
    assert (undecided.status_code, undecided.content) == (204, b"")
    assert client.get("/api/pending", headers=ADMIN).json() == {"pending": []}
    assert client.get("/api/history", headers=ADMIN).json()["items"] == []
    # The rpcId is free: asking it on /ws/ask afterwards is a new request, as the hook does.
    with client.websocket_connect("/ws/ask", headers=asker(client)) as socket:
        socket.send_json(body("r1", "git push"))
        assert socket.receive_json()["payload"]["type"] == "ask/pending"


def test_only_an_askers_token_asks_the_rules(client: TestClient) -> None:
    rule(client, "npm run test", "allow")
    for headers in (ADMIN, person(client, "bob")):
        refused = client.post("/api/decide", headers=headers, json=body("r1", "npm run test"))
        assert refused.status_code == 403
        assert refused.json()["error"] == {
            "code": "FORBIDDEN",
            "message": "only an asker's token asks the rules to decide: this one can answer",
        }
    assert client.get("/api/history", headers=ADMIN).json()["items"] == []
    assert client.post("/api/decide", json=body("r1", "npm run test")).status_code == 401


def test_a_plain_question_or_a_bad_body_is_refused_with_its_code(client: TestClient) -> None:
    rule(client, "npm run test", "allow")
    agents = asker(client)
    plain = client.post("/api/decide", headers=agents, json=body("r1", "x", approval=False))
    assert (plain.status_code, plain.json()["error"]["code"]) == (400, "BAD_REQUEST")
    assert "only an approval" in plain.json()["error"]["message"]
    broken = client.post("/api/decide", headers=agents, content=b"{not json")
    assert (broken.status_code, broken.json()["error"]["code"]) == (400, "BAD_REQUEST")
    client.post("/api/decide", headers=agents, json=body("r1", "npm run test"))
    again = client.post("/api/decide", headers=agents, json=body("r1", "npm run test"))
    assert (again.status_code, again.json()["error"]["code"]) == (400, "BAD_REQUEST")
    assert "already asked" in again.json()["error"]["message"]
