"""Answers that say more than a label, through the host: the page's frames and `GET
/api/pending` carry each approval (tool, input, editable); `POST /api/respond` takes a note, a
form's value and an edited call; the host refuses what breaks the rules with `bad-response`,
leaving the request pending; the asker gets what the person said; history keeps the call as asked
and its change, and never offers a rule made from an edited call."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.host.conftest import AUTH, answer_frame, ask_frame
from user_questions.approvals import ALLOW, DENY, approval_question
from user_questions.types import AskUserQuestionItem

CALL = {"command": "rm -rf build/", "description": "Clean the build"}
CARD = approval_question("Bash", CALL, agent="Claude")
FORM = AskUserQuestionItem.model_validate(
    {
        "id": "deploy",
        "question": "How should it deploy?",
        "schema": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 2},
                "regions": {
                    "type": "array",
                    "items": {"anyOf": [{"const": "eu", "title": "Europe"}, {"const": "us"}]},
                },
                "canary": {"type": "boolean"},
            },
            "required": ["replicas"],
        },
    }
)


def approval_frame(rpc_id: str, *, editable: bool | None = True) -> dict[str, Any]:
    approval: dict[str, Any] = {"tool": "Bash", "input": CALL, "agent": "claude-code"}
    if editable is not None:
        approval["editable"] = editable
    return {**ask_frame(rpc_id, CARD, session="claude-code:1"), "approval": approval}


def pending(client: TestClient) -> dict[str, dict[str, Any]]:
    response = client.get("/api/pending", headers=AUTH)
    assert response.status_code == 200
    return {frame["rpcId"]: frame for frame in response.json()["pending"]}


def respond(client: TestClient, frame: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/api/respond", headers=AUTH, json=frame)
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def with_remember(frame: dict[str, Any]) -> dict[str, Any]:
    frame["result"]["value"]["remember"] = True
    return frame


def test_an_approval_is_allowed_with_changes_and_its_asker_gets_the_new_call(
    client: TestClient,
) -> None:
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(approval_frame("r1"))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        shown = pending(client)["r1"]
        assert shown["approval"] == {
            "tool": "Bash",
            "input": CALL,
            "agent": "claude-code",
            "editable": True,
        }
        with client.websocket_connect("/ws", headers=AUTH) as page:
            assert page.receive_json()["approval"]["editable"] is True
        edited = {"command": "rm -rf build/tmp", "description": "Clean the build"}
        item = {"id": "approval", "selected": [ALLOW], "edited": edited, "note": "only tmp"}
        receipt = respond(client, answer_frame("r1", "claude-code:1", item))
        assert receipt == {"accepted": True}
        settled = asker.receive_json()["payload"]
        assert settled == {
            "type": "ask/settled",
            "outcome": "answered",
            "answer": {"answers": [item]},
        }
    [entry] = client.get("/api/history", headers=AUTH).json()["items"]
    assert entry["approval"]["input"] == CALL  # the call as asked
    assert entry["answer"]["answers"][0]["edited"] == edited  # and its change
    assert entry["by"] == "owner"
    assert "remember" not in entry  # no rule is ever made from an edited call
    changed = client.get("/api/history?edited=true", headers=AUTH).json()["items"]
    assert [one["rpcId"] for one in changed] == ["r1"]
    found = client.get("/api/history?q=only+tmp", headers=AUTH).json()["items"]
    assert [one["rpcId"] for one in found] == ["r1"]
    assert client.get("/api/history?edited=maybe", headers=AUTH).status_code == 400


@pytest.mark.parametrize(
    ("editable", "item", "remember", "message"),
    [
        (
            True,
            {"id": "approval", "selected": [DENY], "edited": {"command": "ls"}},
            False,
            'provider answer for question approval: edited goes with "Allow", the option that '
            "allows once",
        ),
        (
            None,
            {"id": "approval", "selected": [ALLOW], "edited": {"command": "ls"}},
            False,
            "provider answer for question approval: the agent cannot take a changed Bash call, "
            "so it cannot be edited",
        ),
        (
            False,
            {"id": "approval", "selected": [ALLOW], "edited": {"command": "ls"}},
            False,
            "provider answer for question approval: the agent cannot take a changed Bash call, "
            "so it cannot be edited",
        ),
        (
            True,
            {"id": "approval", "selected": [ALLOW], "note": "x" * 4001},
            False,
            "provider answer for question approval: note is 4001 characters long; at most 4000 "
            "are allowed",
        ),
        (
            True,
            {"id": "approval", "selected": [ALLOW], "edited": {"command": "ls"}},
            True,
            "remember goes with the call as asked: no rule is made from an edited call",
        ),
    ],
    ids=["edit-with-deny", "not-editable", "editable-false", "note-too-long", "remember-edited"],
)
def test_an_answer_breaking_the_rules_is_refused_and_the_approval_stays_pending(
    client: TestClient,
    editable: bool | None,
    item: dict[str, Any],
    remember: bool,
    message: str,
) -> None:
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(approval_frame("r1", editable=editable))
        asker.receive_json()
    frame = answer_frame("r1", "claude-code:1", item)
    receipt = respond(client, with_remember(frame) if remember else frame)
    assert receipt == {"accepted": False, "reason": "bad-response", "message": message}
    assert "r1" in pending(client)
    allowed = respond(
        client, answer_frame("r1", "claude-code:1", {"id": "approval", "selected": [ALLOW]})
    )
    assert allowed == {"accepted": True}


def test_a_form_is_answered_with_a_typed_value_and_a_wrong_one_is_refused(
    client: TestClient,
) -> None:
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(ask_frame("f1", FORM, session="deployer"))
        asker.receive_json()
        assert pending(client)["f1"]["payload"]["questions"][0]["schema"] == FORM.schema_
        wrong = {"id": "deploy", "selected": [], "value": {"replicas": 11}}
        refused = respond(client, answer_frame("f1", "deployer", wrong))
        assert refused == {
            "accepted": False,
            "reason": "bad-response",
            "message": "provider answer for question deploy: value.replicas: must be at most 10",
        }
        assert "f1" in pending(client)
        value = {"replicas": 3, "regions": ["eu", "us"], "canary": True}
        right = {"id": "deploy", "selected": [], "value": value, "note": "watch the p99"}
        assert respond(client, answer_frame("f1", "deployer", right)) == {"accepted": True}
        answer = asker.receive_json()["payload"]["answer"]
    assert answer == {"answers": [right]}
    assert type(answer["answers"][0]["value"]["replicas"]) is int
    assert answer["answers"][0]["value"]["canary"] is True


def test_a_client_that_knows_only_selected_and_custom_is_answered_as_before(
    client: TestClient,
) -> None:
    """The seed's vocabulary is untouched: a question without a form, answered with a label,
    comes back exactly so, with no new key."""
    question = AskUserQuestionItem.model_validate(
        {"id": "pm", "question": "Which?", "options": [{"label": "pnpm"}, {"label": "npm"}]}
    )
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(ask_frame("p1", question, session="old"))
        asker.receive_json()
        assert "approval" not in pending(client)["p1"]
        receipt = respond(client, answer_frame("p1", "old", {"id": "pm", "selected": ["npm"]}))
        assert receipt == {"accepted": True}
        payload = asker.receive_json()["payload"]
    assert payload["answer"] == {"answers": [{"id": "pm", "selected": ["npm"]}]}
