"""Every malformed input gets its documented error with a code, on SQLite and PostgreSQL alike:
the reproductions of what an attacker with a valid token tried, each refused where the protocol
says, the socket kept open, and nothing a store cannot keep ever reaching it."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from tests.host.conftest import AUTH, PICK, TOKEN, answer_frame, ask, ask_frame, dismiss_frame
from user_questions import UserQuestionError
from user_questions.frames import MAX_MESSAGE_LENGTH
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.gate.security import CONTENT_SECURITY_POLICY
from user_questions.host.hub import Hub
from user_questions.host.markdown import _parser as _markdown_parser
from user_questions.host.markdown import plain_html
from user_questions.types import AskUserQuestionItem

DEEP = "[" * 1100 + "]" * 1100
SLOW_DETAIL = "[" * 100_000
"""A detail within the limit that markdown-it takes seconds to parse."""


@pytest.fixture(params=["sqlite", "postgresql"])
def client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    store = request.getfixturevalue("pg_url") if request.param == "postgresql" else None
    with TestClient(
        create_app(HostConfig(store=store or tmp_path / "host.db", token=TOKEN))
    ) as test_client:
        yield test_client


@pytest.fixture
def sqlite_client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))) as test_client:
        yield test_client


def asker_reply(client: TestClient, frame: object) -> dict[str, Any]:
    """What the host answers one asker frame (sent as JSON text, or as the text given)."""
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_text(frame if isinstance(frame, str) else json.dumps(frame))
        reply: dict[str, Any] = asker.receive_json()
        asker.send_json({"type": "ping"})  # the socket outlives the refusal
        assert asker.receive_json() == {"payload": {"type": "pong"}}
    return reply


def page_reply(client: TestClient, frame: object) -> dict[str, Any]:
    """What the host answers one page frame, the pushed requests aside."""
    with client.websocket_connect("/ws", headers=AUTH) as page:
        page.send_text(frame if isinstance(frame, str) else json.dumps(frame))
        page.send_json({"type": "ping"})
        replies = []
        while (reply := page.receive_json()) != {"payload": {"type": "pong"}}:
            replies.append(reply)
    answers = [r for r in replies if r["payload"]["type"] != "question/requested"]
    assert len(answers) == 1, replies
    answer: dict[str, Any] = answers[0]
    return answer


def refused(reply: dict[str, Any], code: str, message: str, rpc_id: str | None = None) -> None:
    assert reply.get("rpcId") == rpc_id
    assert reply["payload"]["code"] == code
    assert reply["payload"]["message"].startswith(message)


def still_serves(client: TestClient) -> None:
    """A real ask is asked, answered and listed in the history."""
    ask(client, "still-serving", PICK)
    body = answer_frame("still-serving", "s", {"id": "pick", "selected": ["b"]})
    assert client.post("/api/respond", headers=AUTH, json=body).json() == {"accepted": True}
    history = client.get("/api/history", headers=AUTH).json()["items"]
    assert history[0]["answer"] == {"answers": [{"id": "pick", "selected": ["b"]}]}


def test_a_frame_type_of_another_json_type_is_an_error_and_the_socket_stays(
    sqlite_client: TestClient,
) -> None:
    kinds: list[object] = [[], {}, 1, None]
    for kind in kinds:
        frame = {"type": kind, "rpcId": "r1"}
        refused(asker_reply(sqlite_client, frame), "BAD_REQUEST", 'invalid frame: property "type"')
        error = page_reply(sqlite_client, frame)["payload"]
        assert (error["type"], error["code"]) == ("error", "BAD_REQUEST")


def test_a_binary_frame_must_be_utf_8_like_every_body(sqlite_client: TestClient) -> None:
    with sqlite_client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_bytes(json.dumps(ask_frame("r1", PICK)).encode())
        assert asker.receive_json() == {"rpcId": "r1", "payload": {"type": "ask/pending"}}
        asker.send_bytes(b'{"type": "ping", "x": "\xff"}')
        refused(asker.receive_json(), "BAD_REQUEST", "invalid frame: not valid JSON (not UTF-8")


def test_json_nested_deeper_than_the_limit_is_a_bad_request_on_every_channel(
    sqlite_client: TestClient,
) -> None:
    message = "invalid frame: nested deeper than 64 levels"
    refused(asker_reply(sqlite_client, DEEP), "BAD_REQUEST", message)
    refused(page_reply(sqlite_client, DEEP), "BAD_REQUEST", message)
    response = sqlite_client.post("/api/respond", headers=AUTH, content=DEEP)
    assert (response.status_code, response.json()["error"]["message"]) == (400, message)
    still_serves(sqlite_client)


def test_a_lone_surrogate_is_refused_naming_the_field_and_answering_the_rpc_id(
    client: TestClient,
) -> None:
    asked = ask_frame("r1", PICK)
    asked["questions"][0]["question"] = "Which\ud800?"
    refused(
        asker_reply(client, asked),
        "BAD_REQUEST",
        'invalid frame: property "questions[0].question" holds a lone surrogate (U+D800)',
        rpc_id="r1",
    )
    refused(
        asker_reply(client, {**ask_frame("r1", PICK), "sessionId": "\udfff"}),
        "BAD_REQUEST",
        'invalid frame: property "sessionId" holds a lone surrogate (U+DFFF)',
        rpc_id="r1",
    )
    refused(asker_reply(client, ask_frame("\ud800", PICK)), "BAD_REQUEST", "invalid frame")
    ask(client, "r2", PICK)
    typed = answer_frame("r2", "s", {"id": "pick", "selected": [], "custom": "\udc00"})
    receipt = page_reply(client, typed)
    assert receipt["rpcId"] == "r2"
    assert receipt["payload"]["reason"] == "bad-response"
    assert "holds a lone surrogate (U+DC00)" in receipt["payload"]["message"]
    dismissal = dismiss_frame("r2")
    dismissal["result"]["error"]["code"] = "\ud800"
    response = client.post("/api/respond", headers=AUTH, content=json.dumps(dismissal))
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        'invalid frame: property "result.error.code" holds a lone surrogate (U+D800), '
        "which is not text"
    )
    still_serves(client)


def test_a_nul_never_reaches_the_store_and_history_refuses_to_search_for_one(
    client: TestClient,
) -> None:
    bad_question = ask_frame("r1", PICK.model_copy(update={"question": "Which\x00?"}))
    refused(
        asker_reply(client, bad_question),
        "BAD_QUESTION",
        'property "questions[0].question" holds a NUL character (U+0000)',
        rpc_id="r1",
    )
    refused(asker_reply(client, ask_frame("r\x00", PICK)), "BAD_REQUEST", "rpcId holds a NUL")
    refused(
        asker_reply(client, {**ask_frame("r1", PICK), "origin": {"cwd": "/srv/\x00"}}),
        "BAD_REQUEST",
        "origin.cwd holds a NUL",
        rpc_id="r1",
    )
    refused(asker_reply(client, {"type": "withdraw", "rpcId": "r\x00"}), "NOT_FOUND", "no request")
    ask(client, "r2", PICK)
    typed = answer_frame("r2", "s", {"id": "pick", "selected": [], "custom": "a\x00b"})
    receipt = client.post("/api/respond", headers=AUTH, json=typed).json()
    assert receipt["reason"] == "bad-response"
    assert receipt["message"].endswith("custom text holds a NUL character (U+0000)")
    nobody = client.post("/api/respond", headers=AUTH, json=dismiss_frame("\x00")).json()
    assert nobody["reason"] == "not-pending"
    for parameter in ("q", "session", "by"):
        search = client.get("/api/history", headers=AUTH, params={parameter: "a\x00b"})
        assert search.status_code == 400
        assert search.json()["error"]["message"].endswith("holds a NUL character (U+0000)")
    still_serves(client)


def test_questions_and_answers_of_the_wrong_shape_are_told_as_if_read_alone(
    sqlite_client: TestClient,
) -> None:
    """The frames carry the vocabulary's models, read with the frame; a problem inside them is
    still told as `parse_questions` and `parse_answer` tell it, after the frame's own."""
    asked = ask_frame("r1", PICK)
    asked["questions"][0]["question"] = 7
    message = 'invalid request: property "questions[0].question" must be a string, got integer'
    refused(asker_reply(sqlite_client, asked), "BAD_REQUEST", message, rpc_id="r1")
    asked["sessionId"] = 8
    message = 'invalid ask: property "sessionId" must be a string, got integer'
    refused(asker_reply(sqlite_client, asked), "BAD_REQUEST", message, rpc_id="r1")
    not_an_object = {**ask_frame("r1", PICK), "questions": [9]}
    message = 'invalid ask: property "questions[0]" must be an object, got integer'
    refused(asker_reply(sqlite_client, not_an_object), "BAD_REQUEST", message, rpc_id="r1")
    ask(sqlite_client, "r2", PICK)
    typed = answer_frame("r2", "s", {"id": "pick", "selected": "a"})
    message = 'invalid answer: property "answers[0].selected" must be an array, got string'
    receipt = {"accepted": False, "reason": "bad-response", "message": message}
    assert page_reply(sqlite_client, typed) == {
        "rpcId": "r2",
        "payload": {"type": "client-response/receipt", **receipt},
    }
    response = sqlite_client.post("/api/respond", headers=AUTH, json=typed)
    assert (response.status_code, response.json()) == (200, receipt)
    typed["result"]["value"]["answer"] = []
    message = 'invalid client-response: property "result[1].value.answer" must be an object'
    response = sqlite_client.post("/api/respond", headers=AUTH, json=typed)
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(message)
    still_serves(sqlite_client)


def test_a_malformed_answer_is_a_bad_response_whether_or_not_its_request_is_pending(
    sqlite_client: TestClient,
) -> None:
    """Like any other part of a client-response, its answer is read before the hub is asked:
    a malformed one is refused as such, even for a request that has settled or never was."""
    still_serves(sqlite_client)  # asks "still-serving", and answers it
    message = 'invalid answer: property "answers[0].selected" must be an array, got string'
    for rpc_id in ("never-asked", "still-serving"):
        typed = answer_frame(rpc_id, "s", {"id": "pick", "selected": "b"})
        response = sqlite_client.post("/api/respond", headers=AUTH, json=typed)
        assert response.json() == {"accepted": False, "reason": "bad-response", "message": message}
        assert page_reply(sqlite_client, typed)["payload"]["reason"] == "bad-response"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"options": [{"label": str(n)} for n in range(10_000)]}, '"questions[0].options" holds'),
        ({"options": [{"label": "x" * 10_240}]}, '"questions[0].options[0].label" is 10240 '),
        ({"id": "x" * 10_240}, 'property "questions[0].id" is 10240 characters long'),
        ({"detail": "[" * 200_000}, 'property "questions[0].detail" is 200000 characters long'),
    ],
)
def test_oversized_fields_are_refused_with_a_code_before_anything_is_stored(
    sqlite_client: TestClient, fields: dict[str, Any], message: str
) -> None:
    frame = ask_frame("r1", PICK)
    frame["questions"][0].update(fields)
    reply = asker_reply(sqlite_client, frame)
    assert (reply["rpcId"], reply["payload"]["code"]) == ("r1", "LIMIT_EXCEEDED")
    assert message in reply["payload"]["message"]
    assert sqlite_client.get("/api/pending", headers=AUTH).json() == {"pending": []}


def test_a_detail_that_cannot_render_in_time_is_kept_as_plain_text_and_never_rendered_again(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = AskUserQuestionItem(id="slow", question="Look?", detail=SLOW_DETAIL)
    ask(client, "r1", slow)

    def never(text: str) -> str:
        raise AssertionError("a stored detail was rendered again")

    monkeypatch.setattr(_markdown_parser._PARSER, "render", never)
    (pending,) = client.get("/api/pending", headers=AUTH).json()["pending"]
    assert pending["rendered"] == {"slow": plain_html(SLOW_DETAIL)}
    with client.websocket_connect("/ws", headers=AUTH) as page:
        assert page.receive_json()["rendered"] == {"slow": plain_html(SLOW_DETAIL)}
    client.post("/api/respond", headers=AUTH, json=dismiss_frame("r1"))
    (entry,) = client.get("/api/history", headers=AUTH).json()["items"]
    assert entry["rendered"] == {"slow": plain_html(SLOW_DETAIL)}


def test_a_request_whose_frame_would_pass_the_frame_limit_is_refused(
    sqlite_client: TestClient,
) -> None:
    """Each detail is within its limit, but their HTML would not fit in one frame to a page."""
    hub: Hub = sqlite_client.app.state.hub  # type: ignore[attr-defined]
    questions = [
        AskUserQuestionItem(id=f"q{index}", question="?", detail="&" * 100_000)
        for index in range(3)
    ]
    with pytest.raises(UserQuestionError) as caught:
        sqlite_client.portal.call(hub.submit, "r1", "s", questions)  # type: ignore[union-attr]
    assert caught.value.code == "REQUEST_TOO_LARGE"
    assert "more than the 1048576 a frame may hold" in str(caught.value)


def test_a_failing_route_is_the_documented_json_500_with_every_security_header(
    sqlite_client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(self: Hub, *args: object) -> list[str]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Hub, "pending_frames", broken)
    with caplog.at_level(logging.ERROR, "user_questions.host"):
        response = sqlite_client.get("/api/pending", headers=AUTH)
    assert response.status_code == 500
    assert response.json() == {
        "error": {
            "code": "INTERNAL_ERROR",
            "message": "the host failed to handle this request; its log says why",
        }
    }
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"
    failures = [record for record in caplog.records if record.exc_info]
    assert [str(record.exc_info[1]) for record in failures if record.exc_info] == ["a bug"]


def test_a_frame_that_makes_a_handler_fail_is_answered_and_the_socket_stays(
    sqlite_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: Hub, *args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Hub, "submit", broken)
    monkeypatch.setattr(Hub, "respond", broken)
    refused(
        asker_reply(sqlite_client, ask_frame("r1", PICK)),
        "INTERNAL_ERROR",
        "the host failed",
        rpc_id="r1",
    )
    refused(page_reply(sqlite_client, dismiss_frame("r1")), "INTERNAL_ERROR", "the host failed")


def test_a_refusal_quotes_at_most_a_bounded_message(sqlite_client: TestClient) -> None:
    ask(sqlite_client, "r1", PICK)
    dismissal = dismiss_frame("r1")
    dismissal["result"]["error"]["code"] = '"' * 500_000
    receipt = sqlite_client.post("/api/respond", headers=AUTH, json=dismissal).json()
    assert receipt["reason"] == "bad-response"
    assert len(receipt["message"]) == MAX_MESSAGE_LENGTH
    assert receipt["message"].endswith("…")


def test_an_oversized_frame_closes_only_its_own_socket(sqlite_client: TestClient) -> None:
    with sqlite_client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_text(" " * (1024 * 1024 + 1))
        with pytest.raises(WebSocketDisconnect) as closed:
            asker.receive_json()
    assert closed.value.code == 1009
    still_serves(sqlite_client)
