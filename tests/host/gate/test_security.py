"""The gate in front of every route: token, Origin, body size, and the page's headers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocket

from user_questions.host.gate.security import (
    CONTENT_SECURITY_POLICY,
    MAX_BODY_BYTES,
    Identity,
    SecurityMiddleware,
    token_cookie,
)

TOKEN = "s3cret-token"


async def echo(request: Request) -> Response:
    return PlainTextResponse(f"{len(await request.body())} bytes")


async def socket(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text("hello")
    await websocket.close()


def authenticate(token: str) -> Identity | None:
    return Identity("owner", "key") if token == TOKEN else None


def deny(status: int, code: str, message: str) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def authorize(identity: Identity, method: str, path: str) -> str | None:
    return None


def gated(*routes: BaseRoute) -> Starlette:
    """An app of these routes behind the middleware."""
    return Starlette(
        routes=list(routes),
        middleware=[
            Middleware(
                SecurityMiddleware, authenticate=authenticate, authorize=authorize, deny=deny
            )
        ],
    )


@pytest.fixture
def client() -> Iterator[TestClient]:
    app = gated(
        Route("/echo", echo, methods=["GET", "POST"]),
        Route("/healthz", echo),
        WebSocketRoute("/ws", socket),
    )
    with TestClient(app) as test_client:
        yield test_client


def test_every_request_needs_the_token(client: TestClient) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Cookie": "uq_token=nope"}):
        response = client.get("/echo", headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert client.get("/echo?token=wrong").status_code == 401


def test_the_token_is_accepted_from_header_query_or_cookie(client: TestClient) -> None:
    assert client.get("/echo", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert client.get(f"/echo?token={TOKEN}").status_code == 200
    assert client.get("/echo", headers={"Cookie": f"uq_token={TOKEN}"}).status_code == 200


def test_healthz_needs_no_token(client: TestClient) -> None:
    assert client.get("/healthz").status_code == 200


def test_a_websocket_without_the_token_is_refused_on_its_handshake(client: TestClient) -> None:
    with pytest.raises(WebSocketDenialResponse) as caught, client.websocket_connect("/ws"):
        pass
    assert caught.value.status_code == 401
    with client.websocket_connect(f"/ws?token={TOKEN}") as websocket:
        assert websocket.receive_text() == "hello"


def test_a_websocket_from_another_origin_is_refused(client: TestClient) -> None:
    for origin in ("http://evil.example", "http://testserver.evil", "null"):
        headers = {"Origin": origin, "Authorization": f"Bearer {TOKEN}"}
        with (
            pytest.raises(WebSocketDenialResponse) as caught,
            client.websocket_connect("/ws", headers=headers),
        ):
            pass
        assert caught.value.status_code == 403
    headers = {"Origin": "http://testserver", "Authorization": f"Bearer {TOKEN}"}
    with client.websocket_connect("/ws", headers=headers) as websocket:
        assert websocket.receive_text() == "hello"


def test_a_post_from_another_origin_is_refused_even_with_the_cookie(client: TestClient) -> None:
    headers = {"Origin": "http://localhost:3000", "Cookie": f"uq_token={TOKEN}"}
    assert client.post("/echo", headers=headers, content=b"{}").status_code == 403


def test_bodies_over_the_limit_are_refused(client: TestClient) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    big = b"x" * (MAX_BODY_BYTES + 1)
    assert client.post("/echo", headers=auth, content=big).status_code == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(MAX_BODY_BYTES // 65536 + 1):
            yield b"x" * 65536

    assert client.post("/echo", headers=auth, content=chunks()).status_code == 413
    ok = client.post("/echo", headers=auth, content=b"x" * MAX_BODY_BYTES)
    assert ok.text == f"{MAX_BODY_BYTES} bytes"


def test_a_declared_oversize_body_is_refused_before_the_application_runs() -> None:
    calls: list[Request] = []

    async def never_reads_its_body(request: Request) -> Response:
        calls.append(request)
        return PlainTextResponse("ran")

    with TestClient(gated(Route("/ignore", never_reads_its_body, methods=["POST"]))) as client:
        declared = {"Authorization": f"Bearer {TOKEN}", "Content-Length": str(MAX_BODY_BYTES + 1)}
        response = client.post("/ignore", headers=declared, content=b"{}")  # only declared big
        assert client.post(f"/ignore?token={TOKEN}", content=b"{}").text == "ran"
    assert response.status_code == 413
    assert response.json() == {
        "error": {
            "code": "REQUEST_TOO_LARGE",
            "message": f"the request body is larger than {MAX_BODY_BYTES} bytes",
        }
    }
    assert len(calls) == 1  # the second request only


def test_every_response_carries_the_security_headers(client: TestClient) -> None:
    for response in (client.get("/echo"), client.get(f"/echo?token={TOKEN}")):
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-content-type-options"] == "nosniff"


def test_the_token_cookie_is_http_only_same_site_strict_and_kept_thirty_days() -> None:
    assert token_cookie("abc") == (
        "uq_token=abc; HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000"
    )
    assert token_cookie("abc", secure=True).endswith("; Max-Age=2592000; Secure")


def test_the_public_origin_is_the_hosts_own_whatever_host_the_proxy_passes_on() -> None:
    app = Starlette(
        routes=[WebSocketRoute("/ws", socket)],
        middleware=[
            Middleware(
                SecurityMiddleware,
                authenticate=authenticate,
                authorize=authorize,
                deny=deny,
                public_origin="https://uq.example.com",
            )
        ],
    )
    with TestClient(app) as client:  # the proxy passed on `Host: testserver`
        headers = {"Origin": "https://uq.example.com", "Authorization": f"Bearer {TOKEN}"}
        with client.websocket_connect("/ws", headers=headers) as websocket:
            assert websocket.receive_text() == "hello"
        for foreign in ("https://uq.example.com.evil", "http://uq.example.com"):
            headers["Origin"] = foreign
            with (
                pytest.raises(WebSocketDenialResponse) as caught,
                client.websocket_connect("/ws", headers=headers),
            ):
                pass
            assert caught.value.status_code == 403
