"""Tokens's own notifications: what is routed to a person reaches their URLs, and only that;
the answer links in them answer as that person, while their token may."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.host.conftest import AUTH, PICK, TOKEN, ask_frame
from tests.receivers import HttpReceiver, http_receiver
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig

LINK = re.compile(r"https://uq\.example\.com/(a/\S+)")


@pytest.fixture
def receiver() -> Iterator[HttpReceiver]:
    with http_receiver() as running:
        yield running


TOKENS: dict[str, str] = {}


@pytest.fixture
def client(tmp_path: Path, receiver: HttpReceiver) -> Iterator[TestClient]:
    config = HostConfig(
        store=tmp_path / "host.db", token=TOKEN, public_url="https://uq.example.com/"
    )
    people: dict[str, dict[str, Any]] = {
        "alice": {"groups": ["oncall"], "notify": [f"json://{receiver.netloc}/alice"]},
        "bob": {"notify": [f"json://{receiver.netloc}/bob"]},
        "pager": {"role": "asker", "routes": ["@oncall"]},
        "escalating": {"role": "asker", "routes": ["bob"], "escalate": ["1s:@oncall"]},
        "nagging": {"role": "asker", "routes": ["bob"], "remind": "1s"},
    }
    with TestClient(create_app(config)) as test_client:
        for name, grants in people.items():
            made = test_client.post("/api/tokens", json={"name": name, **grants}, headers=AUTH)
            assert made.status_code == 201, made.text
            TOKENS[name] = made.json()["token"]
        yield test_client


def ask_as(client: TestClient, name: str, rpc_id: str, question: str = PICK.question) -> None:
    """Ask PICK as token `name`; an asker's identical asks are one card, told of once, so a
    second ask of the same asker to be told of needs a `question` of its own."""
    headers = {"Authorization": f"Bearer {TOKENS[name]}"}
    with client.websocket_connect("/ws/ask", headers=headers) as asker:
        asker.send_json(ask_frame(rpc_id, PICK.model_copy(update={"question": question})))
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}


def posts_to(receiver: HttpReceiver, path: str, count: int) -> list[dict[str, Any]]:
    """The first `count` messages posted to `path`, waiting for them."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        found = [post.json for post in receiver.posts.items if post.path == path]
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{path} got {receiver.posts.items}")


def test_a_person_is_notified_of_what_is_routed_to_them_only(
    client: TestClient, receiver: HttpReceiver
) -> None:
    ask_as(client, "pager", "paged")  # routed to @oncall: alice
    ask_as(client, "alice", "for-everyone")  # a person's own question goes to everyone
    alices = posts_to(receiver, "/alice", 2)
    bobs = posts_to(receiver, "/bob", 1)
    assert sorted(message["message"].count("paged") > 0 for message in alices) == [False, True]
    assert all("paged" not in message["message"] for message in bobs)


def test_a_persons_answer_link_answers_as_them_while_their_token_may(
    client: TestClient, receiver: HttpReceiver
) -> None:
    ask_as(client, "pager", "first")
    (message,) = posts_to(receiver, "/alice", 1)
    link, _ = LINK.findall(message["message"])  # one per option
    assert client.get("/" + link).status_code == 200  # looking answers nothing
    assert client.post("/" + link).status_code == 200
    entry = client.get("/api/history", headers=AUTH).json()["items"][0]
    assert (entry["rpcId"], entry["by"], entry["via"]) == ("first", "alice", "link")

    ask_as(client, "pager", "second")
    second = [m for m in posts_to(receiver, "/alice", 2) if "second" in m["message"]]
    link, _ = LINK.findall(second[0]["message"])
    moved = client.patch("/api/tokens/alice", json={"groups": []}, headers=AUTH)
    assert moved.status_code == 200
    assert client.post("/" + link).status_code == 410  # no longer hers to answer
    pending = client.get("/api/pending", headers=AUTH).json()["pending"]
    assert [frame["rpcId"] for frame in pending] == ["second"]


def test_an_escalation_step_tells_its_target_who_may_then_answer_it(
    client: TestClient, receiver: HttpReceiver
) -> None:
    alices = {"Authorization": f"Bearer {TOKENS['alice']}"}
    ask_as(client, "escalating", "stuck")  # routed to bob; after 1 s to @oncall (alice) too
    (for_bob,) = posts_to(receiver, "/bob", 1)
    assert "stuck" in for_bob["message"]
    assert client.get("/api/pending", headers=alices).json()["pending"] == []
    assert not [post for post in receiver.posts.items if post.path == "/alice"]
    (for_alice,) = posts_to(receiver, "/alice", 1)  # told when the step fired
    assert "stuck" in for_alice["message"]
    pending = client.get("/api/pending", headers=alices).json()["pending"]
    assert [frame["rpcId"] for frame in pending] == ["stuck"]
    link, _ = LINK.findall(for_alice["message"])
    assert client.post("/" + link).status_code == 200  # hers to answer now
    entry = client.get("/api/history", headers=AUTH).json()["items"][0]
    assert (entry["rpcId"], entry["by"], entry["via"]) == ("stuck", "alice", "link")
    assert len([post for post in receiver.posts.items if post.path == "/bob"]) == 1


def test_a_reminder_tells_the_people_it_is_routed_to_again(
    client: TestClient, receiver: HttpReceiver
) -> None:
    ask_as(client, "nagging", "waiting")
    first, again = posts_to(receiver, "/bob", 2)  # asked, then a second later reminded
    assert "waiting" in first["message"]
    assert "waiting" in again["message"]
    assert not [post for post in receiver.posts.items if post.path == "/alice"]


def test_a_person_is_notified_in_their_own_language_from_when_they_choose_it(
    client: TestClient, receiver: HttpReceiver
) -> None:
    ask_as(client, "pager", "in-english")
    (english,) = posts_to(receiver, "/alice", 1)
    assert english["title"].startswith("Question from ")
    assert "Answer in one tap:" in english["message"]
    chosen = client.patch("/api/tokens/alice", json={"lang": "ko"}, headers=AUTH)
    assert chosen.status_code == 200, chosen.text
    ask_as(client, "pager", "in-korean", "Which one, in Korean?")
    korean = posts_to(receiver, "/alice", 2)[1]
    assert korean["title"].endswith("의 질문")
    assert "한 번에 답하기:" in korean["message"]
    assert "열기: https://uq.example.com/q/in-korean" in korean["message"]
