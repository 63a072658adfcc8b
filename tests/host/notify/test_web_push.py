"""Web Push through the real app to a push service on loopback (`tests/push_fake.py`), which checks
the VAPID JWT and decrypts each push with the subscription's own keys: what a person's browser
would read, whom it reaches, the worker's one-tap answers, the refusals, 410s and private mode."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient, WebSocketTestSession

from tests.host.conftest import AUTH, PICK, TOKEN, ask_frame
from tests.push_fake import FakePushService, push_service, unb64
from user_questions.approvals import approval_question
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig

TOKENS: dict[str, str] = {}


@pytest.fixture
def service() -> Iterator[FakePushService]:
    with push_service() as running:
        yield running


def host(tmp_path: Path, service: FakePushService, **config: Any) -> Iterator[TestClient]:
    made = HostConfig(store=tmp_path / "host.db", token=TOKEN, **config)
    with TestClient(create_app(made)) as client:
        for name, grants in {
            "alice": {},
            "bob": {},
            "pager": {"role": "asker", "routes": ["alice"]},
        }.items():
            created = client.post("/api/tokens", json={"name": name, **grants}, headers=AUTH)
            TOKENS[name] = created.json()["token"]
        service.application_key = client.get("/api/push/key").json()["publicKey"]
        yield client


@pytest.fixture
def client(tmp_path: Path, service: FakePushService) -> Iterator[TestClient]:
    yield from host(tmp_path, service)


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[name]}"}


def subscribe(client: TestClient, service: FakePushService, name: str) -> tuple[str, str]:
    """A new browser of `name`'s, registered: its id at the push service, and the worker's
    `Authorization` header value."""
    browser = service.subscribe()
    made = client.post("/api/push/subscriptions", json=browser.to_json(), headers=bearer(name))
    assert made.status_code == 201, made.text
    return browser.id, f"Push {made.json()['id']}.{made.json()['secret']}"


@contextmanager
def asking(client: TestClient, rpc_id: str, question: Any = PICK) -> Iterator[WebSocketTestSession]:
    """An asker routed to alice, with `rpc_id` pending, for the block."""
    with client.websocket_connect("/ws/ask", headers=bearer("pager")) as asker:
        asker.send_json(ask_frame(rpc_id, question))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        yield asker


def test_the_public_key_is_an_uncompressed_p256_point_for_anyone(client: TestClient) -> None:
    answered = client.get("/api/push/key")  # no token: it is public
    assert answered.status_code == 200
    key = unb64(answered.json()["publicKey"])
    assert len(key) == 65
    assert key[0] == 4
    assert client.get("/api/push/key").json() == answered.json()  # made once, kept


def test_a_restarted_host_keeps_its_key_so_browsers_stay_subscribed(
    tmp_path: Path, service: FakePushService
) -> None:
    keys = []
    for _ in range(2):
        with TestClient(create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))) as host:
            keys.append(host.get("/api/push/key").json()["publicKey"])
    assert keys[0] == keys[1]


def test_a_question_reaches_the_browsers_of_whom_it_is_routed_to_encrypted_and_signed(
    client: TestClient, service: FakePushService
) -> None:
    alices, _ = subscribe(client, service, "alice")
    subscribe(client, service, "bob")  # not routed to bob
    with asking(client, "r1"):
        (push,) = service.pushes.wait_for(1)
        assert push.subscription == alices
        assert push.json["type"] == "question/pending"
        assert push.json["question"] == "Which one?"
        assert push.json["choices"] == [{"option": 0, "label": "a"}, {"option": 1, "label": "b"}]
        assert push.headers["urgency"] == "high"
        assert int(push.headers["ttl"]) == 12 * 3600
        assert push.headers["topic"] == push.json["tag"].removeprefix("uq-")
        assert push.claims["sub"] == "mailto:user-questions@localhost"
        assert service.refused.items == []


def test_a_tap_answers_as_the_person_and_a_push_then_closes_the_notification(
    client: TestClient, service: FakePushService
) -> None:
    _, secret = subscribe(client, service, "alice")
    with asking(client, "r1") as asker:
        service.pushes.wait_for(1)
        tapped = client.post(
            "/api/push/worker/answer",
            json={"rpcId": "r1", "option": 1},
            headers={"authorization": secret},
        )
        assert tapped.json() == {"accepted": True}
        assert asker.receive_json()["payload"] == {
            "type": "ask/settled",
            "outcome": "answered",
            "answer": {"answers": [{"id": "pick", "selected": ["b"]}]},
        }
        closing = service.pushes.wait_for(2)[1]
        assert closing.json["type"] == "question/settled"
        assert closing.json["tag"] == service.pushes.items[0].json["tag"]
        (item,) = client.get("/api/history", headers=AUTH).json()["items"]
        assert (item["via"], item["by"]) == ("push", "alice")
        again = client.post(
            "/api/push/worker/answer",
            json={"rpcId": "r1", "option": 0},
            headers={"authorization": secret},
        )
        assert again.status_code == 404  # settled: nothing to answer any more


def test_a_worker_answers_only_what_is_routed_to_its_person_and_only_in_one_tap(
    client: TestClient, service: FakePushService
) -> None:
    _, alices = subscribe(client, service, "alice")
    _, bobs = subscribe(client, service, "bob")
    with asking(client, "r1", approval_question("Bash", {"command": "rm -rf build"})):
        push = service.pushes.wait_for(1)[0]
        labels = [choice["label"] for choice in push.json["choices"]]
        assert labels == ["Allow", "Deny"]  # not "Allow and don't ask again": that makes a rule
        for secret, body, status in [
            (bobs, {"rpcId": "r1", "option": 0}, 404),  # not routed to bob
            (alices, {"rpcId": "r1", "option": 2}, 404),  # the rule-making option
            (alices, {"rpcId": "r9", "option": 0}, 404),  # no such request
            ("Push nope.nope", {"rpcId": "r1", "option": 0}, 401),
            (alices.replace(".", ".x"), {"rpcId": "r1", "option": 0}, 401),
            (TOKEN, {"rpcId": "r1", "option": 0}, 401),
        ]:
            tapped = client.post(
                "/api/push/worker/answer", json=body, headers={"authorization": secret}
            )
            assert tapped.status_code == status, (secret, body, tapped.text)
        assert client.get("/api/pending", headers=AUTH).json()["pending"]  # still waiting


def test_an_endpoint_must_be_https_or_loopback_http_and_keys_must_be_real(
    client: TestClient, service: FakePushService
) -> None:
    good = service.subscribe().to_json()
    for endpoint in [
        "http://push.example.com/send/1",
        "http://10.0.0.7/send/1",
        "https://10.0.0.7/send/1",
        "https://169.254.169.254/latest/meta-data",
        "https://[fd00::1]/send",
        "https://user:pw@push.example.com/send",
        "ftp://push.example.com/send",
        "https://push.example.com/" + "x" * 3000,
    ]:
        refused = client.post(
            "/api/push/subscriptions", json={**good, "endpoint": endpoint}, headers=bearer("alice")
        )
        assert refused.status_code == 400, endpoint
        assert refused.json()["error"]["code"] == "BAD_REQUEST"
    for keys in [{"p256dh": "AAAA", "auth": good["keys"]["auth"]}, {**good["keys"], "auth": "x"}]:
        refused = client.post(
            "/api/push/subscriptions", json={**good, "keys": keys}, headers=bearer("alice")
        )
        assert refused.status_code == 400
    https = {**good, "endpoint": "https://push.example.com/send/1"}
    assert (
        client.post("/api/push/subscriptions", json=https, headers=bearer("alice")).status_code
        == 201
    )
    asked = client.post("/api/push/subscriptions", json=good, headers=bearer("pager"))
    assert asked.status_code == 403  # an asker's token answers nothing
    assert client.post("/api/push/subscriptions", json=good).status_code == 401


def test_a_person_lists_and_removes_their_own_subscriptions_only(
    client: TestClient, service: FakePushService
) -> None:
    subscribe(client, service, "alice")
    subscribe(client, service, "bob")
    (mine,) = client.get("/api/push/subscriptions", headers=bearer("alice")).json()["subscriptions"]
    assert set(mine) == {"id", "service", "device", "createdAt"}
    assert mine["service"] == "127.0.0.1"  # never the endpoint itself
    (bobs,) = client.get("/api/push/subscriptions", headers=bearer("bob")).json()["subscriptions"]
    path = "/api/push/subscriptions/"
    assert client.delete(path + bobs["id"], headers=bearer("alice")).status_code == 404
    assert client.delete(path + mine["id"], headers=bearer("alice")).status_code == 204
    assert client.get("/api/push/subscriptions", headers=bearer("alice")).json() == {
        "subscriptions": []
    }


def test_a_subscription_its_push_service_calls_gone_is_dropped(
    client: TestClient, service: FakePushService
) -> None:
    gone, _ = subscribe(client, service, "alice")
    service.gone.add(gone)
    with asking(client, "r1"):
        deadline = time.monotonic() + 10
        while client.get("/api/push/subscriptions", headers=bearer("alice")).json()[
            "subscriptions"
        ]:
            assert time.monotonic() < deadline, "the gone subscription was kept"
            time.sleep(0.05)  # polling the host's state, under a deadline
        assert service.pushes.items == []


def test_a_push_its_service_cannot_take_yet_is_retried_until_it_can(
    client: TestClient, service: FakePushService
) -> None:
    busy, _ = subscribe(client, service, "alice")
    service.unavailable[busy] = 2
    with asking(client, "r1"):
        (push,) = service.pushes.wait_for(1)
        assert push.json["rpcId"] == "r1"
        assert service.attempts.items == [busy, busy, busy]  # two 503s, then taken
    (mine,) = client.get("/api/push/subscriptions", headers=bearer("alice")).json()[
        "subscriptions"
    ]  # kept: a busy service has not forgotten the browser
    assert mine["service"] == "127.0.0.1"


def test_a_revoked_persons_browsers_answer_nothing_and_get_nothing(
    client: TestClient, service: FakePushService
) -> None:
    alices, alices_secret = subscribe(client, service, "alice")
    bobs, bobs_secret = subscribe(client, service, "bob")
    assert client.delete("/api/tokens/alice", headers=AUTH).status_code == 200
    client.patch("/api/tokens/pager", json={"routes": ["alice", "bob"]}, headers=AUTH)
    with asking(client, "r1"):
        service.pushes.wait_for(1)
        for secret, status in [(alices_secret, 401), (bobs_secret, 200)]:
            tapped = client.post(
                "/api/push/worker/answer",
                json={"rpcId": "r1", "option": 0},
                headers={"authorization": secret},
            )
            assert tapped.status_code == status
        # The settled push comes after the pending one's every send (one request's pushes go
        # in order), so by then a push to alice would have arrived.
        service.pushes.wait_for(2)
    assert alices not in service.attempts.items
    assert [push.subscription for push in service.pushes.items] == [bobs, bobs]


def test_private_mode_pushes_no_question_and_the_worker_fetches_the_card(
    tmp_path: Path, service: FakePushService
) -> None:
    for client in host(tmp_path, service, push_private=True):
        _, secret = subscribe(client, service, "alice")
        with asking(client, "r1"):
            (push,) = service.pushes.wait_for(1)
            assert push.json["type"] == "question/waiting"
            assert b"Which one" not in push.plain
            assert "question" not in push.json
            card = client.get("/api/push/worker/card/r1", headers={"authorization": secret})
            assert card.json()["question"] == "Which one?"
            assert card.json()["tag"] == push.json["tag"]
            assert client.get("/api/push/worker/card/r1").status_code == 401
            # The card speaks its person's language, read as it is fetched.
            client.patch("/api/tokens/alice", json={"lang": "ko"}, headers=AUTH)
            korean = client.get("/api/push/worker/card/r1", headers={"authorization": secret})
            assert korean.json()["title"] == "s의 질문"  # the session is `s`
            assert korean.json()["question"] == "Which one?"  # the agent's words, as asked


def test_each_person_is_pushed_the_question_in_their_own_language(
    tmp_path: Path, service: FakePushService
) -> None:
    for client in host(tmp_path, service):
        client.patch("/api/tokens/alice", json={"lang": "ja"}, headers=AUTH)
        client.patch("/api/tokens/pager", json={"routes": ["alice", "bob"]}, headers=AUTH)
        alices, _ = subscribe(client, service, "alice")
        bobs, _ = subscribe(client, service, "bob")
        with asking(client, "r-ja"):
            pushes = {push.subscription: push.json for push in service.pushes.wait_for(2)}
            assert pushes[alices]["title"] == "s からの質問"  # the session is `s`
            assert pushes[bobs]["title"] == "Question from s"
            assert pushes[alices]["question"] == pushes[bobs]["question"] == "Which one?"
