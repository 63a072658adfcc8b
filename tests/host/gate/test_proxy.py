"""`--trust-proxy`: forwarding headers are believed from trusted proxies only, read from the
right, and never let a client choose the address the host records."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.proxy import ForwardedMiddleware, trusted_proxies

PROXIES = "127.0.0.1, 10.0.0.0/8, ::1"


async def seen(request: Request) -> JSONResponse:
    client = request.client
    return JSONResponse(
        {
            "client": client.host if client else None,
            "scheme": request.url.scheme,
            "host": request.headers.get("host"),
        }
    )


async def seen_socket(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_json({"scheme": websocket.url.scheme, "host": websocket.url.netloc})
    await websocket.close()


def through(peer: str, headers: Mapping[str, str], trusted: str = PROXIES) -> dict[str, str]:
    """What the app behind the middleware sees of a request from `peer` with `headers`."""
    app = Starlette(routes=[Route("/", seen)])
    app.add_middleware(ForwardedMiddleware, trusted=trusted_proxies(trusted))
    with TestClient(app, base_url="http://uq.internal:8765", client=(peer, 40000)) as client:
        data: dict[str, str] = client.get("/", headers=dict(headers)).json()
    return data


def test_without_forwarding_headers_the_peer_is_the_client() -> None:
    assert through("127.0.0.1", {}) == {
        "client": "127.0.0.1",
        "scheme": "http",
        "host": "uq.internal:8765",
    }


def test_a_trusted_proxy_says_who_the_client_is_and_how_it_came() -> None:
    headers = {
        "X-Forwarded-For": "203.0.113.9",
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "uq.example.com",
    }
    assert through("127.0.0.1", headers) == {
        "client": "203.0.113.9",
        "scheme": "https",
        "host": "uq.example.com",
    }


def test_an_untrusted_peer_is_not_believed_whatever_it_sends() -> None:
    headers = {
        "X-Forwarded-For": "203.0.113.9",
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "evil.example",
        "Forwarded": "for=198.51.100.1;proto=https;host=evil.example",
    }
    assert through("192.0.2.50", headers) == {
        "client": "192.0.2.50",
        "scheme": "http",
        "host": "uq.internal:8765",
    }


def test_an_address_a_client_made_up_is_skipped_from_the_right() -> None:
    # The client sent "X-Forwarded-For: 1.2.3.4"; the proxy appended the address it saw.
    assert through("127.0.0.1", {"X-Forwarded-For": "1.2.3.4, 198.51.100.7"})["client"] == (
        "198.51.100.7"
    )
    # Through two trusted proxies: the first untrusted address from the right.
    chain = {"X-Forwarded-For": "1.2.3.4, 198.51.100.7, 10.1.2.3"}
    assert through("127.0.0.1", chain)["client"] == "198.51.100.7"
    # Every hop trusted: the leftmost.
    assert through("127.0.0.1", {"X-Forwarded-For": "10.9.9.9, 10.1.2.3"})["client"] == "10.9.9.9"


def test_a_word_in_place_of_an_address_ends_the_walk_at_the_last_trusted_hop() -> None:
    assert through("127.0.0.1", {"X-Forwarded-For": "unknown"})["client"] == "127.0.0.1"
    assert through("127.0.0.1", {"X-Forwarded-For": "evil, 10.1.2.3"})["client"] == "10.1.2.3"


def test_forwarded_wins_over_the_x_headers_and_is_read_per_element() -> None:
    headers = {
        "Forwarded": 'for=1.2.3.4, for="[2001:db8::7]:4711";proto=https;host=uq.example.com',
        "X-Forwarded-For": "198.51.100.7",
    }
    assert through("::1", headers) == {
        "client": "2001:db8::7",
        "scheme": "https",
        "host": "uq.example.com",
    }


def test_a_forwarded_host_that_is_not_a_host_is_ignored() -> None:
    for host in ("evil.example/path", "a b", "user@evil.example"):
        assert through("127.0.0.1", {"X-Forwarded-Host": host})["host"] == "uq.internal:8765"


def test_a_websocket_through_a_tls_proxy_is_wss() -> None:
    app = Starlette(routes=[WebSocketRoute("/ws", seen_socket)])
    app.add_middleware(ForwardedMiddleware, trusted=trusted_proxies("127.0.0.1"))
    headers = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "uq.example.com"}
    with (
        TestClient(app, client=("127.0.0.1", 40000)) as client,
        client.websocket_connect("/ws", headers=headers) as socket,
    ):
        assert socket.receive_json() == {"scheme": "wss", "host": "uq.example.com"}


@pytest.mark.parametrize("given", ["uq.example.com", "127.0.0.1/40", "10.0.0.0/8,", "*"])
def test_trusted_proxies_must_be_addresses_or_networks(given: str) -> None:
    with pytest.raises(UserQuestionError) as refused:
        trusted_proxies(given)
    assert refused.value.code == ErrorCode.BAD_REQUEST
    assert refused.value.message.startswith("--trust-proxy ")
    assert "give IP addresses or networks" in refused.value.message


def test_trusted_proxies_take_addresses_networks_and_lists() -> None:
    trusted = trusted_proxies(["127.0.0.1", "10.0.0.0/8,[::1]"])
    assert "127.0.0.1" in trusted
    assert "10.200.3.4" in trusted
    assert "::1" in trusted
    assert "127.0.0.2" not in trusted
    assert "testclient" not in trusted
