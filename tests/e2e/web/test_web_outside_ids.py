"""Ids from outside never reach an object's prototype in the page, and malformed frames throw
nothing: requests and questions named `__proto__`, `constructor` or `toString` are cards like
any other, their drafts survive a reload, and their answers reach the asker."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect
from websockets.sync.client import ClientConnection, connect

from tests.e2e.web.conftest import PAGE_SOCKET, Host, OpenInbox

REPLY_SECONDS = 15.0
FREE = [
    {"id": "__proto__", "question": "What goes first?"},
    {"id": "constructor", "question": "What goes second?"},
    {"id": "toString", "question": "What goes third?"},
]
PICK = [
    {"id": "hasOwnProperty", "question": "Which one?", "options": [{"label": "a"}, {"label": "b"}]}
]
TEXT = [{"id": "valueOf", "question": "Anything to add?"}]
REQUESTS = {"__proto__": FREE, "constructor": PICK, "toString": TEXT}
"""The requests, by rpcId: each id a name every plain JavaScript object already has."""


@pytest.fixture
def raw_asker(host: Host) -> Iterator[ClientConnection]:
    """An asker speaking the asker protocol itself, so that it chooses its own rpcIds."""
    url = host.base.replace("http", "ws", 1) + "/ws/ask"
    socket = connect(url, additional_headers=host.auth)
    with socket:
        yield socket
        for rpc_id in REQUESTS:  # whatever the test left pending leaves every page
            socket.send(json.dumps({"type": "withdraw", "rpcId": rpc_id}))


def reply(socket: ClientConnection) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(socket.recv(timeout=REPLY_SECONDS))
    return frame


def test_requests_and_questions_named_like_object_properties_keep_their_drafts_and_answers(
    open_inbox: OpenInbox, raw_asker: ClientConnection, session: str
) -> None:
    for rpc_id, questions in REQUESTS.items():
        ask = {"type": "ask", "rpcId": rpc_id, "sessionId": f"{session}-{rpc_id}"}
        raw_asker.send(json.dumps({**ask, "questions": questions}))
        assert reply(raw_asker) == {"rpcId": rpc_id, "payload": {"type": "ask/pending"}}
    inbox = open_inbox()
    free, pick, text = (inbox.card(f"{session}-{rpc_id}") for rpc_id in REQUESTS)
    answer = free.get_by_role("textbox", name="Your answer")
    for typed in ("first", "second"):
        answer.fill(typed)
        free.get_by_role("button", name="Next").click()
    answer.fill("third")
    pick.get_by_role("radio", name="b").check()
    text.get_by_role("textbox", name="Your answer").fill("kept")

    inbox.page.reload()
    inbox.expect_connected()
    expect(answer).to_have_value("third")
    for typed in ("second", "first"):
        free.get_by_role("button", name="Back").click()
        expect(answer).to_have_value(typed)
    expect(pick.get_by_role("radio", name="b")).to_be_checked()
    expect(text.get_by_role("textbox", name="Your answer")).to_have_value("kept")

    free.get_by_role("button", name="Next").click()
    free.get_by_role("button", name="Next").click()
    for card in (free, pick, text):
        card.get_by_role("button", name="Submit").click()
        expect(card).to_have_count(0)
    settled = {frame["rpcId"]: frame["payload"] for frame in (reply(raw_asker) for _ in REQUESTS)}
    assert settled == {
        "__proto__": {
            "type": "ask/settled",
            "outcome": "answered",
            "answer": {
                "answers": [
                    {"id": "__proto__", "selected": [], "custom": "first"},
                    {"id": "constructor", "selected": [], "custom": "second"},
                    {"id": "toString", "selected": [], "custom": "third"},
                ]
            },
        },
        "constructor": {
            "type": "ask/settled",
            "outcome": "answered",
            "answer": {"answers": [{"id": "hasOwnProperty", "selected": ["b"]}]},
        },
        "toString": {
            "type": "ask/settled",
            "outcome": "answered",
            "answer": {"answers": [{"id": "valueOf", "selected": [], "custom": "kept"}]},
        },
    }


MALFORMED: list[object] = [
    {"payload": None},
    {"payload": []},
    {"payload": "pong"},
    None,
    [],
    "question/requested",
    {"rpcId": "x", "payload": {"type": "question/requested"}},
    {"rpcId": "x", "payload": {"type": "question/requested", "sessionId": "s", "questions": [0]}},
    {
        "rpcId": "x",
        "payload": {
            "type": "question/requested",
            "sessionId": "s",
            "questions": [{"id": "q", "question": "?", "options": {"label": "a"}}],
        },
        "rendered": "<b>not a map</b>",
    },
    {"payload": {"type": "question/resolved", "questionRpcId": "__proto__", "settled": "toString"}},
    {"payload": {"type": "question/replay", "pending": "all", "requests": None}},
    {"payload": {"type": "question/replay", "pending": 2, "requests": [None, {"rpcId": 5}]}},
    {"payload": {"type": "question/resolved", "questionRpcId": "constructor"}},
    {"rpcId": "__proto__", "payload": {"type": "client-response/receipt", "accepted": False}},
    {"rpcId": "toString", "payload": {"type": "error", "code": "BAD_REQUEST", "message": None}},
]
"""Frames a broken or hostile server could send: none of them may throw in the page."""


def test_malformed_frames_from_the_host_throw_nothing_and_the_page_goes_on(
    open_inbox: OpenInbox, session: str
) -> None:
    sockets: list[WebSocketRoute] = []

    def relay(page: Page) -> None:
        def connect_to_host(page_side: WebSocketRoute) -> None:
            server = page_side.connect_to_server()
            server.on_message(page_side.send)
            page_side.on_message(server.send)
            sockets.append(page_side)

        page.route_web_socket(PAGE_SOCKET, connect_to_host)

    inbox = open_inbox(before=relay)
    for frame in MALFORMED:
        sockets[-1].send(json.dumps(frame))
    good = {
        "rpcId": "__proto__",
        "payload": {
            "type": "question/requested",
            "sessionId": session,
            "questions": [{"id": "constructor", "question": "Still alive?", "detail": "**yes**"}],
        },
        "rendered": {"constructor": "<p><strong>yes</strong></p>"},
    }
    sockets[-1].send(json.dumps(good))
    card = inbox.card(session)
    expect(card.locator(".detail strong")).to_have_text("yes")
    sockets[-1].send(
        json.dumps(
            {
                "payload": {
                    "type": "question/resolved",
                    "sessionId": session,
                    "questionRpcId": "__proto__",
                    "settled": "withdrawn",
                }
            }
        )
    )
    expect(card).to_have_count(0)
    expect(inbox.page.locator("#notices")).to_contain_text("Withdrawn by its agent")
    # The open_inbox fixture fails the test if the page logged any uncaught error.
