"""Answer links in the app: GET only shows the answer, POST sends it as the page would, and every
link that cannot be used gets the same refusal, whatever the reason."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.host.conftest import AUTH, MANY, PICK, PLAN, TOKEN, ask, dismiss_frame
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.gate.security import CONTENT_SECURITY_POLICY
from user_questions.host.notify.link_pages import REFUSED_STATUS
from user_questions.host.notify.links import AnswerLinks, Grant

LINKS = AnswerLinks("answer-link-key-for-tests")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))
    with TestClient(app) as test_client:
        # The links a notifier of this host would carry, signed with a key the tests know.
        app.state.answer_links = LINKS
        yield test_client


def link(rpc_id: str, option: int, *, channel: str = "ntfy") -> str:
    return "/a/" + LINKS.sign(LINKS.grant(rpc_id, 0, option, channel))


def pending_ids(client: TestClient) -> list[str]:
    return [frame["rpcId"] for frame in client.get("/api/pending", headers=AUTH).json()["pending"]]


def history(client: TestClient) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.get("/api/history", headers=AUTH).json()["items"]
    return items


def test_opening_a_link_shows_the_answer_and_answers_nothing(client: TestClient) -> None:
    ask(client, "r1", PICK)
    page = client.get(link("r1", 1))  # no token: the link is the permission
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert page.headers["cache-control"] == "no-store"
    assert "<h1>Which one?</h1>" in page.text
    assert '<p class="chosen"><strong>b</strong></p>' in page.text
    assert '<form method="post">' in page.text
    assert "Send this answer" in page.text
    assert "<script" not in page.text
    assert "set-cookie" not in page.headers
    assert pending_ids(client) == ["r1"]  # a previewer that opens it answers nothing


def test_sending_a_link_answers_as_the_page_would_and_records_the_channel(
    client: TestClient,
) -> None:
    ask(client, "r1", PICK)
    sent = client.post(link("r1", 0, channel="mailto"))
    assert sent.status_code == 200
    assert "<h1>Answer sent</h1>" in sent.text
    assert pending_ids(client) == []
    (entry,) = history(client)
    assert entry["answer"] == {"answers": [{"id": "pick", "selected": ["a"]}]}
    assert (entry["via"], entry["channel"], entry.get("by")) == ("link", "mailto", None)


def test_every_link_that_cannot_be_used_gets_the_same_refusal(client: TestClient) -> None:
    ask(client, "used", PICK)
    ask(client, "elsewhere", PICK)
    ask(client, "plan", PLAN)
    ask(client, "many", MANY)
    used = link("used", 0)
    assert client.post(used).status_code == 200
    client.post("/api/respond", json=dismiss_frame("elsewhere"), headers=AUTH)
    expired = LINKS.sign(Grant("plan", 0, 0, int(time.time()) - 1, "ntfy"))
    good = link("plan", 0)
    encoded, _, signature = good.partition(".")
    other_key = AnswerLinks("another-hosts-key-0123")
    refusals = {
        "used": used,
        "settled elsewhere": link("elsewhere", 1),
        "expired": "/a/" + expired,
        "tampered signature": f"{encoded}.{signature[:-2]}AA",
        "tampered grant": link("plan", 0).replace(encoded[-6:], "AAAAAA"),
        "another host's key": "/a/" + other_key.sign(other_key.grant("plan", 0, 0, "ntfy")),
        "a plan's decline": link("plan", 1),
        "a multi-select": link("many", 0),
        "an unknown request": link("nobody", 0),
        "not a link": "/a/hello",
        "too long": "/a/" + "A" * 5000,
    }
    pages = {}
    for reason, path in refusals.items():
        for method in ("GET", "POST"):
            response = client.request(method, path)
            pages[reason, method] = (response.status_code, response.text)
    statuses = {status for status, _ in pages.values()}
    bodies = {text for _, text in pages.values()}
    assert statuses == {REFUSED_STATUS}
    assert len(bodies) == 1  # nothing says why
    assert "This link cannot be used" in bodies.pop()
    assert sorted(pending_ids(client)) == ["many", "plan"]
    assert client.post(good).status_code == 200  # the good link still works


def test_a_host_without_answer_links_refuses_them_all(tmp_path: Path) -> None:
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))) as client:
        ask(client, "r1", PICK)
        assert client.get(link("r1", 0)).status_code == REFUSED_STATUS
        assert client.post(link("r1", 0)).status_code == REFUSED_STATUS
        assert pending_ids(client) == ["r1"]


def test_sending_from_another_site_is_refused_by_the_origin_check(client: TestClient) -> None:
    ask(client, "r1", PICK)
    refused = client.post(link("r1", 0), headers={"Origin": "https://evil.example"})
    assert refused.status_code == 403
    same = client.post(link("r1", 0), headers={"Origin": "http://testserver"})
    assert same.status_code == 200


def test_a_plan_review_is_shown_with_its_plan_as_safe_html(client: TestClient) -> None:
    ask(client, "plan", PLAN.model_copy(update={"question": "Approve <b>this</b>?"}))
    page = client.get(link("plan", 0))
    assert "<h1>Approve &lt;b&gt;this&lt;/b&gt;?</h1>" in page.text
    assert '<div class="detail"><h1>Plan</h1>' in page.text
    assert "<script>alert(1)</script>" not in page.text


def test_the_pages_speak_the_browsers_language_when_the_link_names_nobody(
    client: TestClient,
) -> None:
    ask(client, "r1", PICK)
    japanese = {"accept-language": "ja-JP,ja;q=0.9,en;q=0.5"}
    page = client.get(link("r1", 1), headers=japanese)
    assert page.status_code == 200
    assert '<html lang="ja">' in page.text
    assert page.headers["content-language"] == "ja"
    assert "Accept-Language" in page.headers["vary"]
    assert '<button type="submit" class="primary">この回答を送信</button>' in page.text
    assert "<title>この回答を送信しますか？ · user-questions</title>" in page.text
    refused = client.get("/a/hello", headers={"accept-language": "zh-CN"})
    assert refused.status_code == REFUSED_STATUS
    assert '<html lang="zh-Hans">' in refused.text
    assert "<h1>此链接无法使用</h1>" in refused.text
    assert '<a href="../">打开收件箱</a>查看待处理的内容。' in refused.text
    english = client.post(link("r1", 0), headers={"accept-language": "fr-FR"})
    assert '<html lang="en">' in english.text
    assert "<h1>Answer sent</h1>" in english.text


def test_a_persons_link_speaks_their_own_language_over_the_browsers(client: TestClient) -> None:
    made = client.post("/api/tokens", json={"name": "alice", "lang": "ko"}, headers=AUTH)
    assert made.status_code == 201, made.text
    ask(client, "r1", PICK)
    alices = "/a/" + LINKS.sign(LINKS.grant("r1", 0, 1, "ntfy", person="alice"))
    english_browser = {"accept-language": "en-US"}
    page = client.get(alices, headers=english_browser)
    assert page.status_code == 200
    assert '<html lang="ko">' in page.text
    assert '<p class="chosen-intro">내 답변:</p>' in page.text
    assert "이 답변 보내기" in page.text
    assert "받은 질문에서 열기" in page.text
    sent = client.post(alices, headers=english_browser)
    assert "<h1>답변을 보냈습니다</h1>" in sent.text
    assert "에이전트가 답변을 받았습니다." in sent.text
    (entry,) = history(client)
    assert entry.get("by") == "alice"
    # A refusal says nothing of whose link it was, so it speaks the browser's language.
    again = client.get(alices, headers=english_browser)
    assert again.status_code == REFUSED_STATUS
    assert '<html lang="en">' in again.text
