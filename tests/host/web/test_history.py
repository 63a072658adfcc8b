"""History: the filters people and scripts give, the entries they get, and `GET /api/history`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.host.conftest import AUTH, PICK, PLAN, TOKEN, answer_frame, ask, ask_frame, dismiss_frame
from user_questions import AskUserQuestionAnswer, ErrorCode, UserQuestionError
from user_questions.host.stores import HistoryQuery, StoredQuestion
from user_questions.host.web.history import (
    MAX_LIMIT,
    MAX_SEARCH_LENGTH,
    entry_of,
    history_query,
    query_of,
)
from user_questions.outcomes import Outcome, RequestState, Surface

ASKED = datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


# -- filters ----------------------------------------------------------------------------------


def test_filters_become_a_store_query_and_empty_ones_are_no_filter() -> None:
    assert history_query() == HistoryQuery()
    assert history_query(session="", outcome="", search="  ", by="", before="") == HistoryQuery()
    assert history_query(
        session="agent-1", outcome="dismissed", search="Rate  LIMIT rate", by="alice", limit=5
    ) == HistoryQuery(
        session="agent-1",
        outcome=Outcome.DISMISSED,
        by="alice",
        terms=("rate", "limit"),
        limit=5,
    )


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        (
            {"outcome": "cancelled"},
            'unknown outcome "cancelled"; use one of answered, dismissed, withdrawn, timed-out',
        ),
        ({"limit": 0}, f"limit must be 1 to {MAX_LIMIT}, got 0"),
        ({"limit": MAX_LIMIT + 1}, f"limit must be 1 to {MAX_LIMIT}, got {MAX_LIMIT + 1}"),
        ({"search": "x" * (MAX_SEARCH_LENGTH + 1)}, "a search holds at most 200 characters"),
        ({"search": " ".join("abcdefghijk")}, "a search holds at most 200 characters"),
    ],
)
def test_a_filter_that_cannot_be_used_is_a_clear_bad_request(
    filters: dict[str, Any], message: str
) -> None:
    with pytest.raises(UserQuestionError) as caught:
        history_query(**filters)
    assert caught.value.code == ErrorCode.BAD_REQUEST
    assert str(caught.value).startswith(message)


def test_url_parameters_are_read_and_the_token_is_no_filter() -> None:
    query = query_of({"q": "deploy", "outcome": "answered", "limit": "10", "token": "secret"})
    assert query == HistoryQuery(outcome=Outcome.ANSWERED, terms=("deploy",), limit=10)
    for limit in ("ten", "-1", "²", "9" * 20):
        with pytest.raises(UserQuestionError) as caught:
            query_of({"limit": limit})
        assert caught.value.code == ErrorCode.BAD_REQUEST


# -- entries ----------------------------------------------------------------------------------


def test_an_entry_names_the_outcome_and_leaves_out_what_is_unknown() -> None:
    record = StoredQuestion(
        rpc_id="r1",
        session_id="agent-1",
        questions=(PICK,),
        asked_at=ASKED,
        state=RequestState.DISMISSED,
        settled_at=ASKED,
        settled_via=Surface.WEB,
        settled_by="alice",
    )
    assert entry_of(record).model_dump(mode="json") == {
        "rpcId": "r1",
        "sessionId": "agent-1",
        "askedAt": "2025-01-02T03:04:05.678Z",
        "settledAt": "2025-01-02T03:04:05.678Z",
        "outcome": "dismissed",
        "by": "alice",
        "via": "web",
        "questions": [PICK.model_dump(mode="json")],
    }


def test_an_answered_entry_carries_its_answer_and_on_request_its_details_as_stored() -> None:
    answer = AskUserQuestionAnswer.model_validate(
        {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}
    )
    stored_html = {"plan-review": "<h1>Plan</h1>\n<p>&lt;script&gt;</p>\n"}
    record = StoredQuestion(
        "r1",
        "agent-1",
        (PLAN,),
        ASKED,
        RequestState.ANSWERED,
        answer,
        ASKED,
        Surface.TERMINAL,
        shown_at=ASKED,
        rendered=stored_html,
    )
    entry = entry_of(record, rendered=True)
    assert entry.answer == {"answers": [{"id": "plan-review", "selected": ["Approve"]}]}
    assert entry.shown_at == "2025-01-02T03:04:05.678Z"
    assert entry.rendered == stored_html  # rendered when it was stored, never again
    assert entry_of(record).rendered is None


# -- GET /api/history -------------------------------------------------------------------------


def settle(client: TestClient, rpc_id: str, *, dismiss: bool = False, session: str = "s") -> None:
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(ask_frame(rpc_id, PICK, session=session))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
    body = (
        dismiss_frame(rpc_id)
        if dismiss
        else answer_frame(rpc_id, session, {"id": "pick", "selected": ["a"]})
    )
    assert client.post("/api/respond", headers=AUTH, json=body).json() == {"accepted": True}


def history(client: TestClient, **parameters: str) -> dict[str, Any]:
    response = client.get("/api/history", headers=AUTH, params=parameters)
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    body: dict[str, Any] = response.json()
    return body


def test_the_history_needs_the_token(client: TestClient) -> None:
    response = client.get("/api/history")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_the_history_lists_settled_requests_newest_first_with_who_answered(
    client: TestClient,
) -> None:
    settle(client, "first")
    settle(client, "second", dismiss=True)
    ask(client, "still-pending", PICK)
    body = history(client)
    assert [item["rpcId"] for item in body["items"]] == ["second", "first"]
    assert "next" not in body
    first = body["items"][1]
    assert (first["outcome"], first["by"], first["via"]) == ("answered", "owner", "api")
    assert first["answer"] == {"answers": [{"id": "pick", "selected": ["a"]}]}
    assert body["items"][0]["outcome"] == "dismissed"


def test_the_history_filters_and_pages_with_its_next_cursor(client: TestClient) -> None:
    for index in range(5):
        settle(client, f"mine-{index}", session="mine", dismiss=index == 2)
    settle(client, "theirs", session="theirs")
    assert [item["rpcId"] for item in history(client, session="theirs")["items"]] == ["theirs"]
    dismissed = history(client, outcome="dismissed")["items"]
    assert [item["rpcId"] for item in dismissed] == ["mine-2"]
    first = history(client, session="mine", limit="2")
    assert [item["rpcId"] for item in first["items"]] == ["mine-4", "mine-3"]
    second = history(client, session="mine", limit="2", before=first["next"])
    assert [item["rpcId"] for item in second["items"]] == ["mine-2", "mine-1"]
    third = history(client, session="mine", limit="2", before=second["next"])
    assert [item["rpcId"] for item in third["items"]] == ["mine-0"]
    assert "next" not in third


def test_bad_history_parameters_are_400_with_a_code(client: TestClient) -> None:
    for parameters in ({"outcome": "maybe"}, {"limit": "lots"}, {"before": "forged"}):
        response = client.get("/api/history", headers=AUTH, params=parameters)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "BAD_REQUEST"


def test_the_history_page_is_served_like_the_inbox(client: TestClient) -> None:
    page = client.get(f"/history?token={TOKEN}")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["set-cookie"].startswith(f"uq_token={TOKEN};")
    assert '<script type="module" src="static/history.js">' in page.text
    assert client.get("/static/history.js").status_code == 200
    assert client.get("/history").status_code == 200  # the cookie carries the token
