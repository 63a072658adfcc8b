"""The HTTP API as scripts use it: the surface a client claims, answers without the session,
and where a request comes from, from the ask to every listing."""

from __future__ import annotations

import time
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.host.conftest import AUTH, PICK, answer_frame, ask_frame, dismiss_frame
from user_questions.host.stores import StoredQuestion

ORIGIN = {"client": "claude-code", "cwd": "/home/ada/src/shop"}


def ask(client: TestClient, rpc_id: str, **fields: Any) -> None:
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json({**ask_frame(rpc_id, PICK), **fields})
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}


def stored(client: TestClient, rpc_id: str) -> StoredQuestion:
    assert client.portal is not None
    record: StoredQuestion | None = client.portal.call(client.app.state.store.get, rpc_id)  # type: ignore[attr-defined]
    assert record is not None
    return record


@pytest.mark.parametrize(
    ("header", "via"),
    [
        ("terminal", "terminal"),
        ("editor", "editor"),
        (" Editor ", "editor"),
        (None, "api"),
        ("web", "api"),  # only a page's own socket is the web page
        ("host", "api"),
        ("link", "api"),  # an answer link is the host's to record, never a client's claim
        ("a-surface-from-the-future", "api"),
    ],
)
def test_a_client_may_claim_the_terminal_or_the_editor_and_nothing_else(
    client: TestClient, header: str | None, via: str
) -> None:
    ask(client, "r1")
    headers = AUTH if header is None else {**AUTH, "X-UQ-Surface": header}
    response = client.post("/api/respond", headers=headers, json=dismiss_frame("r1"))
    assert response.json() == {"accepted": True}
    (entry,) = client.get("/api/history", headers=AUTH).json()["items"]
    assert (entry["outcome"], entry["via"]) == ("dismissed", via)
    assert stored(client, "r1").settled_via == via


def test_an_answer_need_not_repeat_the_session_but_a_wrong_one_is_refused(
    client: TestClient,
) -> None:
    ask(client, "r1")
    wrong = client.post(
        "/api/respond",
        headers=AUTH,
        json=answer_frame("r1", "not-s", {"id": "pick", "selected": ["a"]}),
    )
    assert wrong.json() == {
        "accepted": False,
        "reason": "bad-response",
        "message": 'question "r1" belongs to session "s", not "not-s"',
    }
    assert [
        frame["rpcId"] for frame in client.get("/api/pending", headers=AUTH).json()["pending"]
    ] == ["r1"]
    without = {
        "type": "client-response",
        "rpcId": "r1",
        "result": {
            "ok": True,
            "value": {"answer": {"answers": [{"id": "pick", "selected": ["b"]}]}},
        },
    }
    assert client.post("/api/respond", headers=AUTH, json=without).json() == {"accepted": True}
    assert stored(client, "r1").answer is not None


def test_where_a_request_comes_from_goes_with_it_everywhere(client: TestClient) -> None:
    with client.websocket_connect("/ws", headers=AUTH) as page:
        ask(client, "r1", origin=ORIGIN)
        assert page.receive_json()["origin"] == ORIGIN
    ask(client, "r1", origin={"client": "someone-else"})  # a re-attachment changes nothing
    (listed,) = client.get("/api/pending", headers=AUTH).json()["pending"]
    assert listed["origin"] == ORIGIN
    client.post("/api/respond", headers=AUTH, json=dismiss_frame("r1"))
    (entry,) = client.get("/api/history", headers=AUTH).json()["items"]
    assert entry["origin"] == ORIGIN
    ask(client, "r2")
    (plain,) = client.get("/api/pending", headers=AUTH).json()["pending"]
    assert "origin" not in plain


@pytest.mark.parametrize(
    ("origin", "problem"),
    [
        ({"client": "x" * 129}, 'property "origin.client"'),
        ({"cwd": ""}, 'property "origin.cwd"'),
        ({"client": ["claude-code"]}, 'property "origin.client"'),
    ],
)
def test_an_origin_out_of_bounds_is_refused_with_a_clear_error(
    client: TestClient, origin: dict[str, Any], problem: str
) -> None:
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json({**ask_frame("r1", PICK), "origin": origin})
        reply = asker.receive_json()
    assert reply["rpcId"] == "r1"
    assert reply["payload"]["code"] == "BAD_REQUEST"
    assert problem in reply["payload"]["message"]
    assert client.get("/api/pending", headers=AUTH).json() == {"pending": []}


def test_listing_what_is_pending_records_it_as_shown(client: TestClient) -> None:
    ask(client, "r1")
    assert stored(client, "r1").shown_at is None
    client.get("/api/pending", headers=AUTH)
    deadline = time.monotonic() + 5
    while stored(client, "r1").shown_at is None:  # written in the background
        assert time.monotonic() < deadline, "the listing was never recorded as shown"
        time.sleep(0.01)
