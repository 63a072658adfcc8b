"""What was shown is what was answered: every card carries its digest (frames, `GET /api/pending`),
an answer sends it back (a page, `POST /api/respond`, an answer link's confirmation), one whose
digest is not the stored card's is refused with `bad-response`, and the audit record of each
settlement says which digest came back (none from an older client, which keeps working)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.host.conftest import AUTH, PICK, answer, answer_frame, ask, dismissal, next_frame
from tests.host.notify.test_link_pages import client as link_client  # noqa: F401 - a fixture
from tests.host.notify.test_link_pages import link
from user_questions.frames import ClientResponse
from user_questions.host.hub import Hub
from user_questions.host.stores.audit_chain import card_digest
from user_questions.outcomes import Surface

pytestmark = pytest.mark.anyio

CHANGED = "the card changed since it was shown"


def with_digest(response: ClientResponse, digest: str) -> ClientResponse:
    return response.model_copy(update={"digest": digest})


def audit_bodies(store: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(store) as connection:
        rows = connection.execute("SELECT body FROM audit ORDER BY seq").fetchall()
    connection.close()
    return [json.loads(body) for (body,) in rows]


async def test_a_page_is_shown_the_digest_and_a_stale_one_is_refused(hub: Hub) -> None:
    page = hub.subscribe()
    await hub.submit("r1", "s", [PICK])
    frame = await next_frame(page)
    digest = frame["digest"]
    questions = json.dumps([PICK.model_dump(mode="json", exclude_none=True)])
    assert digest == card_digest(questions, None)
    picked = answer("r1", "s", {"id": "pick", "selected": ["a"]})
    stale = await hub.respond(with_digest(picked, "0" * 64), via=Surface.WEB)
    assert (stale.accepted, stale.reason, stale.message) == (False, "bad-response", CHANGED)
    assert hub.pending_count == 1  # refused: nothing settled
    won = await hub.respond(with_digest(picked, digest), via=Surface.WEB, by="alice")
    assert won.accepted
    (record,) = await hub.store.audit_records()  # type: ignore[attr-defined]
    body = json.loads(record.body)
    assert (body["digest"], body["seen"], body["by"]) == (digest, digest, "alice")


async def test_a_dismissal_is_checked_too_and_an_older_client_without_one_still_answers(
    hub: Hub,
) -> None:
    await hub.submit("r1", "s", [PICK])
    await hub.submit("r2", "s", [PICK])
    refused = await hub.respond(with_digest(dismissal("r1"), "f" * 64), via=Surface.WEB)
    assert (refused.reason, refused.message) == ("bad-response", CHANGED)
    assert (await hub.respond(dismissal("r1"), via=Surface.WEB)).accepted
    picked = answer("r2", "s", {"id": "pick", "selected": ["b"]})
    assert (await hub.respond(picked, via=Surface.API)).accepted
    records = await hub.store.audit_records()  # type: ignore[attr-defined]
    bodies = [json.loads(record.body) for record in records]
    assert [(b["rpc_id"], b["seen"]) for b in bodies] == [("r1", None), ("r2", None)]
    assert all(re.fullmatch("[0-9a-f]{64}", b["digest"]) for b in bodies)


def test_the_http_api_lists_the_digest_and_refuses_a_stale_one(
    client: TestClient, tmp_path: Path
) -> None:
    ask(client, "r1", PICK)
    (pending,) = client.get("/api/pending", headers=AUTH).json()["pending"]
    digest = pending["digest"]
    stale = {**answer_frame("r1", "s", {"id": "pick", "selected": ["a"]}), "digest": "1" * 64}
    refused = client.post("/api/respond", headers=AUTH, json=stale).json()
    assert refused == {"accepted": False, "reason": "bad-response", "message": CHANGED}
    fresh = {**stale, "digest": digest}
    assert client.post("/api/respond", headers=AUTH, json=fresh).json() == {"accepted": True}
    (body,) = audit_bodies(tmp_path / "host.db")
    assert (body["rpc_id"], body["digest"], body["seen"]) == ("r1", digest, digest)


def test_a_page_socket_gets_the_digest_and_its_receipt_refuses_a_stale_one(
    client: TestClient,
) -> None:
    ask(client, "r1", PICK)
    with client.websocket_connect("/ws", headers=AUTH) as page:
        frame = page.receive_json()
        assert re.fullmatch("[0-9a-f]{64}", frame["digest"])
        stale = {**answer_frame("r1", "s", {"id": "pick", "selected": ["a"]}), "digest": "2" * 64}
        page.send_json(stale)
        receipt = page.receive_json()
        assert receipt["payload"]["accepted"] is False
        assert (receipt["payload"]["reason"], receipt["payload"]["message"]) == (
            "bad-response",
            CHANGED,
        )


def test_an_answer_links_confirmation_sends_back_the_card_it_showed(
    link_client: TestClient,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    ask(link_client, "r1", PICK)
    ask(link_client, "r2", PICK)
    page = link_client.get(link("r1", 0))
    (shown,) = re.findall(r'<input type="hidden" name="digest" value="([0-9a-f]{64})">', page.text)
    sent = link_client.post(link("r1", 0), data={"digest": shown})
    assert sent.status_code == 200
    changed = link_client.post(link("r2", 0), data={"digest": "3" * 64})
    assert changed.status_code == 409
    assert CHANGED in changed.text
    # A confirmation shown before digests existed posts none: it answers the card as stored.
    assert link_client.post(link("r2", 1)).status_code == 200
    bodies = audit_bodies(tmp_path / "host.db")
    assert [(b["rpc_id"], b["seen"], b["via"]) for b in bodies] == [
        ("r1", shown, "link"),
        ("r2", None, "link"),
    ]
