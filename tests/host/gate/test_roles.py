"""Who may do what: a token's role decides, and a request's audience decides who sees it.

A host in process with its admin (`owner`), its agents' asker token and named tokens made
through the admin's HTTP API: people in groups, an admin, askers routed to a person or a group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from tests.host.conftest import AUTH, PICK, TOKEN, answer_frame, ask_frame

ALLOW = answer_frame("approve", "agent", {"id": "pick", "selected": ["a"]})["result"]


@dataclass
class Host:
    client: TestClient
    tokens: dict[str, str]
    """Each name's token; `agents` is the host's own asker token."""

    def auth(self, name: str) -> dict[str, str]:
        token = TOKEN if name == "owner" else self.tokens[name]
        return {"Authorization": f"Bearer {token}"}

    def ask(self, name: str, rpc_id: str, session: str = "agent") -> dict[str, Any]:
        with self.client.websocket_connect("/ws/ask", headers=self.auth(name)) as asker:
            asker.send_json(ask_frame(rpc_id, PICK, session=session))
            reply: dict[str, Any] = asker.receive_json()
        return reply

    def pending(self, name: str) -> list[str]:
        response = self.client.get("/api/pending", headers=self.auth(name))
        assert response.status_code == 200, response.text
        return [frame["rpcId"] for frame in response.json()["pending"]]

    def answer(self, name: str, rpc_id: str, session: str = "agent") -> dict[str, Any]:
        frame = answer_frame(rpc_id, session, {"id": "pick", "selected": ["a"]})
        response = self.client.post("/api/respond", json=frame, headers=self.auth(name))
        assert response.status_code == 200, response.text
        receipt: dict[str, Any] = response.json()
        return receipt


PEOPLE: dict[str, dict[str, Any]] = {
    "alice": {"role": "person", "groups": ["oncall"]},
    "bob": {"role": "person"},
    "carol": {"role": "admin"},
    "pager": {"role": "asker", "routes": ["@oncall"]},
    "mailer": {"role": "asker", "routes": ["bob"]},
}


@pytest.fixture
def host(client: TestClient) -> Host:
    tokens = {"agents": client.app.state.asker_token}  # type: ignore[attr-defined]
    for name, grants in PEOPLE.items():
        made = client.post("/api/tokens", json={"name": name, **grants}, headers=AUTH)
        assert made.status_code == 201, made.text
        tokens[name] = made.json()["token"]
    return Host(client, tokens)


@pytest.mark.parametrize(
    ("method", "path", "says"),
    [
        ("POST", "/api/respond", "this token can ask but not answer"),
        ("GET", "/api/history", "this token can ask but not read the history"),
        ("GET", "/history", "this token can ask but not read the history"),
        ("GET", "/rules", "this token can ask but not make or read rules"),
        ("GET", "/metrics", "this token can ask but not read the host's metrics"),
        ("GET", "/api/tokens", "this token can ask but not manage tokens"),
        ("POST", "/api/tokens", "this token can ask but not manage tokens"),
        ("DELETE", "/api/tokens/alice", "this token can ask but not manage tokens"),
    ],
)
@pytest.mark.parametrize("asker", ["agents", "pager"])
def test_an_asker_token_is_refused_everywhere_but_asking(
    host: Host, asker: str, method: str, path: str, says: str
) -> None:
    response = host.client.request(method, path, headers=host.auth(asker), json={})
    assert response.status_code == 403
    assert response.json() == {"error": {"code": "FORBIDDEN", "message": says}}


def test_an_asker_cannot_open_the_page_nor_sign_one_in(host: Host) -> None:
    page = host.client.websocket_connect("/ws", headers=host.auth("agents"))
    with pytest.raises(WebSocketDenialResponse) as refused, page:
        pass
    assert refused.value.status_code == 403
    signed_in = host.client.post("/session", content=host.tokens["agents"])
    assert signed_in.status_code == 403
    assert signed_in.json()["error"]["code"] == "FORBIDDEN"
    shell = host.client.get("/", params={"token": host.tokens["agents"]})
    assert shell.status_code == 200
    assert "set-cookie" not in shell.headers  # only a token that can answer becomes a cookie


def test_an_agent_cannot_approve_its_own_request_and_a_person_can(host: Host) -> None:
    """The hole this closes: the token an agent asks with, in its own environment, used to
    answer its own permission prompt."""
    with host.client.websocket_connect("/ws/ask", headers=host.auth("agents")) as asker:
        asker.send_json(ask_frame("approve", PICK, session="agent"))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        assert host.pending("agents") == ["approve"]  # it may read its own request's state
        frame = {"type": "client-response", "rpcId": "approve", "result": ALLOW}
        refused = host.client.post("/api/respond", json=frame, headers=host.auth("agents"))
        assert refused.status_code == 403
        assert refused.json()["error"]["message"] == "this token can ask but not answer"
        assert host.pending("owner") == ["approve"]  # nothing was answered
        assert host.answer("alice", "approve")["accepted"] is True
        settled = asker.receive_json()
    assert settled["payload"]["outcome"] == "answered"
    entry = host.client.get("/api/history", headers=AUTH).json()["items"][0]
    assert (entry["rpcId"], entry["by"], entry["askedBy"]) == ("approve", "alice", "agents")


def test_each_person_sees_what_is_routed_to_them_or_their_group(host: Host) -> None:
    host.ask("pager", "to-oncall")
    host.ask("mailer", "to-bob")
    host.ask("agents", "to-everyone")
    assert host.pending("alice") == ["to-oncall", "to-everyone"]
    assert host.pending("bob") == ["to-bob", "to-everyone"]
    every = ["to-oncall", "to-bob", "to-everyone"]
    assert host.pending("carol") == every
    assert host.pending("owner") == every
    # An asker reads the state of its own requests only.
    assert host.pending("pager") == ["to-oncall"]
    assert host.pending("agents") == ["to-everyone"]


def test_a_page_is_replayed_and_pushed_only_what_its_person_may_see(host: Host) -> None:
    host.ask("mailer", "to-bob")
    host.ask("pager", "to-oncall")
    with host.client.websocket_connect("/ws", headers=host.auth("alice")) as page:
        first = page.receive_json()
        assert (first["payload"]["type"], first["rpcId"]) == ("question/requested", "to-oncall")
        host.ask("mailer", "to-bob-again")  # not for alice: never pushed to her page
        host.ask("agents", "to-everyone")
        pushed = page.receive_json()
        assert (pushed["payload"]["type"], pushed["rpcId"]) == ("question/requested", "to-everyone")
        assert host.answer("bob", "to-bob")["accepted"] is True  # settles unseen by her
        assert host.answer("owner", "to-oncall")["accepted"] is True
        resolved = page.receive_json()["payload"]
        assert (resolved["type"], resolved["questionRpcId"]) == ("question/resolved", "to-oncall")


def test_answering_a_request_one_may_not_see_is_refused_as_if_it_did_not_exist(
    host: Host,
) -> None:
    host.ask("mailer", "to-bob")
    unseen = host.answer("alice", "to-bob")
    absent = host.answer("alice", "no-such-request")
    assert unseen["accepted"] is absent["accepted"] is False
    assert unseen["reason"] == absent["reason"]
    assert unseen["message"].replace("to-bob", "X") == absent["message"].replace(
        "no-such-request", "X"
    )
    assert host.pending("bob") == ["to-bob"]
    with host.client.websocket_connect("/ws", headers=host.auth("alice")) as page:
        page.send_json(answer_frame("to-bob", "agent", {"id": "pick", "selected": ["a"]}))
        receipt = page.receive_json()
    assert receipt["payload"]["accepted"] is False
    assert host.pending("bob") == ["to-bob"]


def test_history_lists_what_each_person_may_see(host: Host) -> None:
    host.ask("pager", "to-oncall")
    host.ask("mailer", "to-bob")
    assert host.answer("alice", "to-oncall")["accepted"] is True
    assert host.answer("bob", "to-bob")["accepted"] is True

    def listed(name: str) -> list[str]:
        items = host.client.get("/api/history", headers=host.auth(name)).json()["items"]
        return sorted(item["rpcId"] for item in items)

    assert listed("alice") == ["to-oncall"]
    assert listed("bob") == ["to-bob"]
    assert listed("carol") == ["to-bob", "to-oncall"]


def test_an_asker_withdraws_and_re_attaches_to_its_own_requests_only(host: Host) -> None:
    """rpcIds are each asking token's own: another token's rpcId is treated exactly as an
    unknown one (issue 35: before, an ask said "already names another request", which told an
    asker that another's request existed)."""
    host.ask("pager", "paged")
    with host.client.websocket_connect("/ws/ask", headers=host.auth("mailer")) as other:
        other.send_json({"type": "withdraw", "rpcId": "paged"})
        refused = other.receive_json()["payload"]
        assert (refused["type"], refused["code"]) == ("ask/error", "NOT_FOUND")
        other.send_json(ask_frame("paged", PICK, session="agent"))
        reply = other.receive_json()
        assert (reply["rpcId"], reply["payload"]) == ("paged", {"type": "ask/pending"})
        assert host.pending("mailer") == ["paged"]  # its own, under the rpcId it knows
        other.send_json({"type": "withdraw", "rpcId": "paged"})
        withdrawn = other.receive_json()
        assert (withdrawn["rpcId"], withdrawn["payload"]["outcome"]) == ("paged", "withdrawn")
    assert host.pending("owner") == ["paged"]  # the pager's, untouched
    assert host.ask("pager", "paged")["payload"] == {"type": "ask/pending"}  # its own, again


def test_a_role_change_closes_the_sockets_of_what_the_token_was(host: Host) -> None:
    with host.client.websocket_connect("/ws", headers=host.auth("alice")) as page:
        changed = host.client.patch("/api/tokens/alice", json={"role": "asker"}, headers=AUTH)
        assert changed.status_code == 200
        assert changed.json()["role"] == "asker"
        with pytest.raises(WebSocketDisconnect) as closed:
            _read_until_closed(page)
    assert closed.value.code == 4401
    page = host.client.websocket_connect("/ws", headers=host.auth("alice"))
    with pytest.raises(WebSocketDenialResponse) as refused, page:
        pass
    assert refused.value.status_code == 403


def _read_until_closed(page: Any) -> None:
    while True:
        page.receive_json()


def test_only_an_admin_manages_tokens_and_never_sees_one(host: Host) -> None:
    person = host.client.get("/api/tokens", headers=host.auth("bob"))
    assert person.status_code == 403
    assert person.json()["error"]["message"] == (
        "this token can answer but not manage tokens: that needs an admin's token"
    )
    listed = host.client.get("/api/tokens", headers=host.auth("carol")).json()["tokens"]
    assert {token["name"]: token["role"] for token in listed} == {
        name: grants["role"] for name, grants in PEOPLE.items()
    }
    assert not any(value in str(listed) for value in host.tokens.values())
    revoked = host.client.delete("/api/tokens/bob", headers=host.auth("carol"))
    assert revoked.status_code == 200
    assert "revokedAt" in revoked.json()
    assert host.client.get("/api/pending", headers=host.auth("bob")).status_code == 401


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"name": "x", "role": "asker", "groups": ["oncall"]}, "an asker is in no group"),
        ({"name": "x", "role": "person", "routes": ["bob"]}, "only an asker's questions"),
        ({"name": "x", "role": "asker", "routes": ["bad name!"]}, "a route must be"),
        ({"name": "owner"}, "start-up token"),
        ({"name": "agents"}, "agents' token"),
        ({"name": "x", "role": "root"}, "role"),
    ],
)
def test_a_token_that_cannot_be_made_is_refused_with_why(
    host: Host, body: dict[str, Any], says: str
) -> None:
    response = host.client.post("/api/tokens", json=body, headers=AUTH)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "BAD_REQUEST"
    assert says in response.json()["error"]["message"]


def test_a_token_says_who_it_is(host: Host) -> None:
    def me(name: str) -> dict[str, Any]:
        response = host.client.get("/api/me", headers=host.auth(name))
        assert response.status_code == 200
        body: dict[str, Any] = response.json()
        return body

    assert me("owner") == {"name": "owner", "role": "admin"}
    assert me("agents") == {"name": "agents", "role": "asker"}
    assert me("alice") == {"name": "alice", "role": "person", "groups": ["oncall"]}
    assert me("pager") == {"name": "pager", "role": "asker", "routes": ["@oncall"]}
