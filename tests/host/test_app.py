"""The host app in process: the page route, the HTTP API, and both WebSocket protocols."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect

from tests.host.conftest import (
    AUTH,
    MANY,
    PICK,
    PLAN,
    TOKEN,
    answer_frame,
    ask,
    ask_frame,
    dismiss_frame,
)
from user_questions import ErrorCode, UserQuestionError
from user_questions.frames import MAX_FRAME_BYTES
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.endpoints import page as page_connection
from user_questions.host.endpoints.page import REPLAY_BATCH, replay_batches
from user_questions.host.gate.security import CONTENT_SECURITY_POLICY
from user_questions.host.stores import Settlement, StoredQuestion
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.host.web import pages

# -- HTTP -----------------------------------------------------------------------------------


def test_healthz_answers_without_a_token_and_reveals_nothing(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"ok": True}


def test_without_the_token_everything_with_data_is_401_with_a_code(client: TestClient) -> None:
    for path in ("/history", "/rules", "/api/pending", "/api/history"):
        response = client.get(path)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert client.post("/api/respond", json=dismiss_frame("x")).status_code == 401
    for path in ("/ws", "/ws/ask"):
        with pytest.raises(WebSocketDenialResponse) as caught, client.websocket_connect(path):
            pass
        assert caught.value.status_code == 401


def test_the_page_is_served_with_its_cookie_and_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    static = tmp_path / "static"
    static.mkdir()
    (static / "index.html").write_text("<!doctype html><title>uq</title>")
    (static / "app.js").write_text("export {};")
    monkeypatch.setattr(pages, "STATIC_DIR", static)
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))) as client:
        page = client.get(f"/?token={TOKEN}")
        assert page.status_code == 200
        assert page.text == "<!doctype html><title>uq</title>"
        assert page.headers["content-type"].startswith("text/html")
        assert page.headers["set-cookie"] == (
            f"uq_token={TOKEN}; HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000"
        )
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        # From now on the cookie carries the token.
        assert client.get("/static/app.js").text == "export {};"
        assert client.get("/api/pending").json() == {"pending": []}
        assert client.get("/static/missing.js").json()["error"]["code"] == "NOT_FOUND"


def test_the_inbox_shell_is_public_and_only_an_accepted_token_becomes_a_cookie(
    client: TestClient,
) -> None:
    shell = client.get("/")
    assert shell.status_code == 200
    assert "set-cookie" not in shell.headers
    assert client.get("/?token=wrong-token-1").headers.get("set-cookie") is None
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/api/pending").status_code == 401  # the shell shows nothing by itself
    assert "uq_token=" in client.get(f"/?token={TOKEN}").headers["set-cookie"]
    assert client.get("/api/pending").json() == {"pending": []}


def test_a_page_signs_in_with_a_token_in_the_body_and_gets_the_cookie(
    client: TestClient,
) -> None:
    refused = client.post("/session", content="wrong-token-1")
    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "UNAUTHORIZED")
    assert "set-cookie" not in refused.headers
    assert client.get("/api/pending").status_code == 401
    signed_in = client.post("/session", content=f" {TOKEN}\n")
    assert signed_in.status_code == 204
    assert signed_in.headers["set-cookie"].startswith(f"uq_token={TOKEN}; HttpOnly;")
    assert client.get("/api/pending").json() == {"pending": []}
    other_site = client.post("/session", content=TOKEN, headers={"Origin": "https://evil.test"})
    assert other_site.status_code == 403


def test_a_question_link_sends_the_browser_to_the_inbox_on_that_card(client: TestClient) -> None:
    moved = client.get("/q/0fa1%2Fb", follow_redirects=False)
    assert moved.status_code == 303
    assert moved.headers["location"] == "../?q=0fa1%2Fb"
    assert "set-cookie" not in moved.headers


def test_a_missing_page_is_a_clear_500_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "STATIC_DIR", tmp_path / "nothing-here")
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))) as client:
        page = client.get("/", headers=AUTH)
        assert page.status_code == 500
        assert page.json()["error"]["code"] == "PAGE_MISSING"
        assert "index.html is missing" in page.json()["error"]["message"]
        assert client.get("/static/app.js", headers=AUTH).json()["error"]["code"] == "PAGE_MISSING"


def test_unknown_routes_and_methods_are_json_errors(client: TestClient) -> None:
    missing = client.get("/nope", headers=AUTH)
    assert missing.status_code == 404
    assert missing.json() == {"error": {"code": "NOT_FOUND", "message": "nothing at /nope"}}
    wrong = client.get("/api/respond", headers=AUTH)
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_api_pending_lists_the_question_requested_frames(client: TestClient) -> None:
    ask(client, "r1", PICK)
    ask(client, "r2", PLAN)
    pending = client.get("/api/pending", headers=AUTH).json()["pending"]
    assert [frame["rpcId"] for frame in pending] == ["r1", "r2"]
    assert pending[0]["payload"] == {
        "type": "question/requested",
        "sessionId": "s",
        "questions": [PICK.model_dump(mode="json")],
    }
    assert pending[1]["rendered"]["plan-review"].startswith("<h1>Plan</h1>")


def test_api_respond_returns_the_receipt_exactly(client: TestClient) -> None:
    ask(client, "r1", PICK)
    first = client.post(
        "/api/respond",
        headers=AUTH,
        json=answer_frame("r1", "s", {"id": "pick", "selected": ["a"]}),
    )
    assert first.status_code == 200
    assert first.text == '{"accepted":true}'
    again = client.post("/api/respond", headers=AUTH, json=dismiss_frame("r1"))
    assert again.status_code == 200
    assert again.json() == {
        "accepted": False,
        "reason": "not-pending",
        "message": 'no pending question has rpcId "r1"',
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "invalid frame: not valid JSON"),
        (b"[]", "invalid client-response: the document"),
        (b'{"rpcId": "r1"}', 'invalid client-response: missing required property "result"'),
        (
            b'{"rpcId": 5, "result": {"ok": false, "error": {"code": "cancelled"}}}',
            'invalid client-response: property "rpcId" must be a string',
        ),
    ],
)
def test_api_respond_refuses_a_malformed_body_with_400(
    client: TestClient, body: bytes, message: str
) -> None:
    response = client.post("/api/respond", headers=AUTH, content=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "BAD_REQUEST"
    assert error["message"].startswith(message)


def test_api_respond_refuses_a_body_over_the_limit_with_413(client: TestClient) -> None:
    response = client.post("/api/respond", headers=AUTH, content=b" " * (1024 * 1024 + 1))
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "REQUEST_TOO_LARGE"


# -- the page's WebSocket -------------------------------------------------------------------


def test_a_page_gets_pending_requests_replayed_then_pushed(client: TestClient) -> None:
    ask(client, "r1", PICK)
    with client.websocket_connect("/ws", headers=AUTH) as page:
        replayed = page.receive_json()
        assert replayed["rpcId"] == "r1"
        ask(client, "r2", MANY)
        pushed = page.receive_json()
        assert pushed["rpcId"] == "r2"
        assert pushed["payload"]["questions"] == [MANY.model_dump(mode="json")]
    with client.websocket_connect("/ws", headers=AUTH) as again:
        assert [again.receive_json()["rpcId"], again.receive_json()["rpcId"]] == ["r1", "r2"]


def test_a_page_asking_for_batches_gets_the_replay_in_question_replay_frames(
    client: TestClient,
) -> None:
    with client.websocket_connect("/ws?replay=batch", headers=AUTH) as empty:
        nothing = empty.receive_json()
        assert nothing == {"payload": {"type": "question/replay", "pending": 0, "requests": []}}
    ask(client, "r1", PICK)
    ask(client, "r2", PLAN)
    one_by_one = client.get("/api/pending", headers=AUTH).json()["pending"]
    with client.websocket_connect("/ws?replay=batch", headers=AUTH) as page:
        batch = page.receive_json()
        assert batch["payload"]["type"] == "question/replay"
        assert batch["payload"]["pending"] == 2
        assert batch["payload"]["requests"] == one_by_one
        ask(client, "r3", MANY)
        pushed = page.receive_json()  # what comes after the replay is pushed one by one
        assert (pushed["rpcId"], pushed["payload"]["type"]) == ("r3", "question/requested")


def test_a_paced_replay_waits_for_the_pages_pings_and_never_holds_a_receipt_behind_it(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page_connection, "_FIRST_BATCH", 1)
    monkeypatch.setattr(page_connection, "REPLAY_BATCH", 1)
    for rpc_id in ("r1", "r2", "r3", "r4"):
        ask(client, rpc_id, PICK)

    def replayed(frame: dict[str, Any]) -> list[str]:
        assert frame["payload"]["type"] == "question/replay"
        return [request["rpcId"] for request in frame["payload"]["requests"]]

    with client.websocket_connect("/ws?replay=paced", headers=AUTH) as page:
        assert [replayed(page.receive_json()), replayed(page.receive_json())] == [["r1"], ["r2"]]
        # Two batches ahead of the page's pings, then nothing: an answer's receipt comes next.
        page.send_json(answer_frame("r4", "s", {"id": "pick", "selected": ["a"]}))
        receipt = page.receive_json()
        assert (receipt["rpcId"], receipt["payload"]["accepted"]) == ("r4", True)
        for expected in ("r3", "r4"):
            page.send_json({"type": "ping"})  # the page has read a batch: the next one comes
            frames = [page.receive_json(), page.receive_json()]
            pongs = [frame for frame in frames if frame["payload"]["type"] == "pong"]
            batches = [replayed(frame) for frame in frames if frame not in pongs]
            assert (len(pongs), batches) == (1, [[expected]])
        resolved = page.receive_json()  # what happened during the replay comes after it
        assert resolved["payload"]["type"] == "question/resolved"
        assert resolved["payload"]["questionRpcId"] == "r4"


def test_replay_batches_start_small_and_carry_every_request_once_in_order() -> None:
    frames = [json.dumps({"rpcId": f"r{index}", "payload": {}}) for index in range(2_500)]
    batches = [json.loads(batch)["payload"] for batch in replay_batches(frames)]
    assert [len(batch["requests"]) for batch in batches] == [50, REPLAY_BATCH, REPLAY_BATCH, 450]
    assert {batch["pending"] for batch in batches} == {2_500}
    replayed = [request["rpcId"] for batch in batches for request in batch["requests"]]
    assert replayed == [f"r{index}" for index in range(2_500)]
    large = [json.dumps({"rpcId": f"big{index}", "text": "x" * 400_000}) for index in range(4)]
    sizes = [len(json.loads(batch)["payload"]["requests"]) for batch in replay_batches(large)]
    assert sizes == [3, 1]  # a batch closes once its frames pass 1 MiB


def test_answers_over_the_socket_get_receipts_and_every_page_drops_the_card(
    client: TestClient,
) -> None:
    ask(client, "r1", PICK)
    with (
        client.websocket_connect("/ws", headers=AUTH) as first,
        client.websocket_connect("/ws", headers=AUTH) as second,
    ):
        assert first.receive_json()["rpcId"] == second.receive_json()["rpcId"] == "r1"
        first.send_json(answer_frame("r1", "s", {"id": "pick", "selected": ["c"]}))
        bad = first.receive_json()
        assert bad["rpcId"] == "r1"
        assert bad["payload"]["type"] == "client-response/receipt"
        assert bad["payload"]["accepted"] is False
        assert bad["payload"]["reason"] == "bad-response"
        second.send_json(answer_frame("r1", "s", {"id": "pick", "selected": ["b"]}))
        replies = [second.receive_json(), second.receive_json()]
        resolved = {
            "payload": {
                "type": "question/resolved",
                "sessionId": "s",
                "questionRpcId": "r1",
                "outcome": "answered",
                "settled": "answered",
            }
        }
        receipt = {"rpcId": "r1", "payload": {"type": "client-response/receipt", "accepted": True}}
        assert sorted(replies, key=json.dumps) == sorted([resolved, receipt], key=json.dumps)
        assert first.receive_json() == resolved
        first.send_json(dismiss_frame("r1"))
        late = first.receive_json()
        assert late["payload"]["reason"] == "not-pending"


def test_a_dismissal_over_the_socket_resolves_as_cancelled_and_dismissed(
    client: TestClient,
) -> None:
    ask(client, "r1", PICK)
    with client.websocket_connect("/ws", headers=AUTH) as page:
        page.receive_json()
        page.send_json(dismiss_frame("r1"))
        replies = [page.receive_json(), page.receive_json()]
    resolved = [reply["payload"] for reply in replies if "outcome" in reply["payload"]]
    assert [(payload["outcome"], payload["settled"]) for payload in resolved] == [
        ("cancelled", "dismissed")
    ]


def test_a_page_may_ping(client: TestClient) -> None:
    with client.websocket_connect("/ws", headers=AUTH) as page:
        page.send_json({"type": "ping"})
        assert page.receive_json() == {"payload": {"type": "pong"}}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("not json", {"type": "error", "code": "BAD_REQUEST"}),
        ('{"type": "subscribe"}', {"type": "error", "code": "BAD_REQUEST"}),
        (
            '{"type": "client-response", "rpcId": "r9"}',
            {"type": "client-response/receipt", "reason": "bad-response"},
        ),
    ],
)
def test_a_frame_the_host_cannot_read_gets_a_one_line_error(
    client: TestClient, text: str, expected: dict[str, str]
) -> None:
    with client.websocket_connect("/ws", headers=AUTH) as page:
        page.send_text(text)
        reply = page.receive_json()
    for key, value in expected.items():
        assert reply["payload"][key] == value
    assert "\n" not in reply["payload"]["message"]


def test_an_oversized_frame_closes_the_socket(client: TestClient) -> None:
    with client.websocket_connect("/ws", headers=AUTH) as page:
        page.send_text("x" * (MAX_FRAME_BYTES + 1))
        with pytest.raises(WebSocketDisconnect) as caught:
            page.receive_json()
    assert caught.value.code == 1009


@pytest.mark.parametrize("path", ["/ws", "/ws/ask"])
def test_the_frame_limit_counts_bytes_not_characters(client: TestClient, path: str) -> None:
    # Fewer characters than the limit, more bytes: as the asker counts what it sends.
    euros = "€" * (MAX_FRAME_BYTES // 3 + 1)
    assert len(euros) < MAX_FRAME_BYTES < len(euros.encode())
    with client.websocket_connect(path, headers=AUTH) as socket:
        socket.send_text(euros)
        with pytest.raises(WebSocketDisconnect) as caught:
            socket.receive_json()
    assert caught.value.code == 1009
    with client.websocket_connect(path, headers=AUTH) as socket:
        socket.send_text("€" * (MAX_FRAME_BYTES // 3 - 1))  # within the limit: read, and refused
        assert socket.receive_json()["payload"]["code"] == "BAD_REQUEST"


# -- the asker's WebSocket ------------------------------------------------------------------


def test_an_asker_gets_the_answer_given_in_a_page(client: TestClient) -> None:
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(ask_frame("r1", PICK, MANY, session="agent-1"))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        receipt = client.post(
            "/api/respond",
            headers=AUTH,
            json=answer_frame(
                "r1",
                "agent-1",
                {"id": "pick", "selected": ["b"]},
                {"id": "many", "selected": ["y", "x"]},
            ),
        )
        assert receipt.json() == {"accepted": True}
        assert asker.receive_json() == {
            "rpcId": "r1",
            "payload": {
                "type": "ask/settled",
                "outcome": "answered",
                "answer": {
                    "answers": [
                        {"id": "pick", "selected": ["b"]},
                        {"id": "many", "selected": ["x", "y"]},
                    ]
                },
            },
        }


def test_an_asker_reattaching_gets_the_answer_given_while_it_was_away(client: TestClient) -> None:
    ask(client, "r1", PICK)
    client.post(
        "/api/respond",
        headers=AUTH,
        json=answer_frame("r1", "s", {"id": "pick", "selected": ["a"]}),
    )
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(ask_frame("r1", PICK))
        settled = asker.receive_json()
    assert settled["payload"]["outcome"] == "answered"
    assert settled["payload"]["answer"] == {"answers": [{"id": "pick", "selected": ["a"]}]}


def test_withdrawing_takes_the_request_off_every_page(client: TestClient) -> None:
    with (
        client.websocket_connect("/ws", headers=AUTH) as page,
        client.websocket_connect("/ws/ask", headers=AUTH) as asker,
    ):
        asker.send_json(ask_frame("r1", PICK))
        assert asker.receive_json()["payload"]["type"] == "ask/pending"
        assert page.receive_json()["rpcId"] == "r1"
        asker.send_json({"type": "withdraw", "rpcId": "r1"})
        assert asker.receive_json() == {
            "rpcId": "r1",
            "payload": {"type": "ask/settled", "outcome": "withdrawn"},
        }
        assert page.receive_json()["payload"] == {
            "type": "question/resolved",
            "sessionId": "s",
            "questionRpcId": "r1",
            "outcome": "cancelled",
            "settled": "withdrawn",
        }
        asker.send_json({"type": "withdraw", "rpcId": "never-asked"})
        assert asker.receive_json()["payload"]["code"] == "NOT_FOUND"
    assert client.get("/api/pending", headers=AUTH).json() == {"pending": []}


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (
            ask_frame("r1", *[PICK.model_copy(update={"id": f"q{i}"}) for i in range(33)]),
            "TOO_MANY_QUESTIONS",
        ),
        (ask_frame("r1"), "EMPTY_QUESTIONS"),
        (ask_frame("r1", PICK, PICK), "BAD_QUESTION"),
        ({**ask_frame("r1", PICK), "questions": [{"id": "q"}]}, "BAD_REQUEST"),
        ({"type": "ask", "rpcId": "r1"}, "BAD_REQUEST"),
    ],
)
def test_a_request_the_host_refuses_gets_an_error_with_its_code(
    client: TestClient, frame: dict[str, Any], code: str
) -> None:
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(frame)
        reply = asker.receive_json()
    assert reply["rpcId"] == "r1"
    assert reply["payload"]["type"] == "ask/error"
    assert reply["payload"]["code"] == code
    assert client.get("/api/pending", headers=AUTH).json() == {"pending": []}


# -- the token ------------------------------------------------------------------------------


def test_the_token_is_kept_with_the_store(tmp_path: Path) -> None:
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db"))) as client:
        generated = client.app.state.token  # type: ignore[attr-defined]
    assert len(generated) >= 32
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db"))) as client:
        assert client.app.state.token == generated  # type: ignore[attr-defined]
        assert (
            client.get("/api/pending", headers={"Authorization": f"Bearer {generated}"}).status_code
            == 200
        )
    with TestClient(
        create_app(HostConfig(store=tmp_path / "host.db", token="chosen-token"))
    ) as client:
        pass
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db"))) as client:
        assert client.app.state.token == "chosen-token"  # type: ignore[attr-defined]


def test_a_token_that_cannot_travel_in_a_url_is_refused(tmp_path: Path) -> None:
    for bad in ("short", "has space inside", "semi;colon-token", "x" * 513):
        with pytest.raises(UserQuestionError) as caught:
            create_app(HostConfig(store=tmp_path / "host.db", token=bad))
        assert caught.value.code == ErrorCode.BAD_TOKEN


def test_a_store_failure_while_answering_is_an_error_frame_and_nothing_is_lost(
    tmp_path: Path,
) -> None:
    class FlakyStore(SQLiteStore):
        failures = 1

        async def settle(
            self, rpc_id: str, settlement: Settlement, *, pending: StoredQuestion | None = None
        ) -> StoredQuestion | None:
            if self.failures:
                self.failures -= 1
                raise UserQuestionError("the store is unavailable", ErrorCode.STORE_UNAVAILABLE)
            return await super().settle(rpc_id, settlement, pending=pending)

    with TestClient(
        create_app(HostConfig(store=FlakyStore(tmp_path / "host.db"), token=TOKEN))
    ) as client:
        ask(client, "r1", PICK)
        with client.websocket_connect("/ws", headers=AUTH) as page:
            page.receive_json()
            page.send_json(answer_frame("r1", "s", {"id": "pick", "selected": ["a"]}))
            assert page.receive_json()["payload"] == {
                "type": "error",
                "code": "STORE_UNAVAILABLE",
                "message": "the store is unavailable",
            }
            page.send_json(answer_frame("r1", "s", {"id": "pick", "selected": ["a"]}))
            replies = [page.receive_json(), page.receive_json()]
            assert {reply["payload"]["type"] for reply in replies} == {
                "client-response/receipt",
                "question/resolved",
            }
        unavailable = client.post("/api/respond", headers=AUTH, json=dismiss_frame("r1"))
        assert unavailable.json()["accepted"] is False
