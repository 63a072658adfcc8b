"""The real app behind its gate, route by route: a wrong token is refused everywhere but on the
probes (`/healthz`, `/readyz`), the inbox's shell (the same files for everyone), the public A2A
card and the routes that check a permission of their own, and a body declared over the limit
never reaches a route.

The routes are read from the app itself (`app.routes`), so a route added later is covered
without this file knowing about it.
"""

from __future__ import annotations

import json
import re

import pytest
from starlette.applications import Starlette
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.testclient import TestClient, WebSocketDenialResponse

from tests.host.conftest import TOKEN
from user_questions.host.gate.security import MAX_BODY_BYTES

WRONG = "wrong-token-456"
PRESENTED = {
    "header": ({"Authorization": f"Bearer {WRONG}"}, ""),
    "query": ({}, f"?token={WRONG}"),
    "cookie": ({"Cookie": f"uq_token={WRONG}"}, ""),
}
"""A wrong token in each place a token is read from: headers to send, and a query to append."""
WITHOUT_TOKEN = {
    ("GET", "/healthz"): (200, None),
    ("HEAD", "/healthz"): (200, None),
    ("GET", "/readyz"): (200, None),
    ("HEAD", "/readyz"): (200, None),
    ("GET", "/"): (200, None),
    ("HEAD", "/"): (200, None),
    ("GET", "/q/x"): (303, None),
    ("HEAD", "/q/x"): (303, None),
    ("GET", "/static/app.js"): (200, None),
    ("GET", "/manifest.webmanifest"): (200, None),
    ("HEAD", "/manifest.webmanifest"): (200, None),
    ("GET", "/sw.js"): (200, None),
    ("HEAD", "/sw.js"): (200, None),
    ("GET", "/a/x"): (410, None),  # an answer link: its signature is the permission
    ("HEAD", "/a/x"): (410, None),
    ("POST", "/a/x"): (410, None),
    ("POST", "/session"): (401, "UNAUTHORIZED"),  # checks the token in its body
    ("GET", "/.well-known/agent-card.json"): (200, None),  # the public A2A card: no person in it
    ("HEAD", "/.well-known/agent-card.json"): (200, None),
    ("GET", "/api/push/key"): (200, None),  # the VAPID public key: what browsers subscribe with
    ("HEAD", "/api/push/key"): (200, None),
    ("POST", "/api/push/worker/answer"): (401, "UNAUTHORIZED"),  # checks a subscription's secret
    ("GET", "/api/push/worker/card/x"): (401, "UNAUTHORIZED"),
    ("HEAD", "/api/push/worker/card/x"): (401, None),
}
"""What answers a request without an accepted token: the shell, the probes, the public A2A card
and the Web Push public key, which reveal nothing, and the routes that check a permission of
their own; every other route is 401."""


def endpoints(client: TestClient) -> tuple[list[tuple[str, str]], list[str]]:
    """Every (method, path) the client's app serves over HTTP, and every WebSocket path; a
    path parameter is filled in, a mount is reached through a file under it."""
    app = client.app
    assert isinstance(app, Starlette)
    http: list[tuple[str, str]] = []
    sockets: list[str] = []
    for route in app.routes:
        path = re.sub(r"\{[^}]*\}", "x", getattr(route, "path", ""))
        if isinstance(route, WebSocketRoute):
            sockets.append(path)
        elif isinstance(route, Route):
            http += [(method, path) for method in sorted(route.methods or ())]
        elif isinstance(route, Mount):
            http.append(("GET", f"{path}/app.js"))
        else:
            pytest.fail(f"a kind of route this test cannot reach yet: {route!r}")
    return http, sockets


def refusal(status: int, body: bytes) -> tuple[int, str | None]:
    """A response's status and, if it is an error with a body, its code."""
    if status < 400 or not body.startswith(b"{"):
        return status, None
    return status, json.loads(body)["error"]["code"]


def handshake(client: TestClient, path: str, headers: dict[str, str]) -> tuple[int, str | None]:
    """How a WebSocket handshake ends: 101 when accepted, else as `refusal`."""
    try:
        with client.websocket_connect(path, headers=headers):
            return 101, None
    except WebSocketDenialResponse as denied:
        return refusal(denied.status_code, denied.content)


def test_a_wrong_token_is_refused_on_every_route_but_the_shell_and_the_capabilities(
    client: TestClient,
) -> None:
    http, sockets = endpoints(client)
    assert {"/ws", "/ws/ask"} <= set(sockets)
    seen: dict[tuple[str, str, str], tuple[int, str | None]] = {}
    expected: dict[tuple[str, str, str], tuple[int, str | None]] = {}
    for how, (headers, query) in PRESENTED.items():
        for method, path in http:
            response = client.request(method, path + query, headers=headers, follow_redirects=False)
            seen[how, method, path] = refusal(response.status_code, response.content)
            if (method, path) in WITHOUT_TOKEN:
                expected[how, method, path] = WITHOUT_TOKEN[method, path]
            else:  # a HEAD response has no body to carry the code
                expected[how, method, path] = (401, None if method == "HEAD" else "UNAUTHORIZED")
        for path in sockets:
            seen[how, "WS", path] = handshake(client, path + query, headers)
            expected[how, "WS", path] = (401, "UNAUTHORIZED")
    assert seen == expected


def test_a_body_declared_over_the_limit_is_refused_on_every_route_before_it_runs(
    client: TestClient,
) -> None:
    http, _ = endpoints(client)
    declared = {"Authorization": f"Bearer {TOKEN}", "Content-Length": str(MAX_BODY_BYTES + 1)}
    seen: dict[tuple[str, str], tuple[int, str | None]] = {}
    for method, path in http:
        # Only declared: two bytes follow, so a route that ran would answer as usual.
        response = client.request(method, path, headers=declared, content=b"{}")
        seen[method, path] = refusal(response.status_code, response.content)
    assert seen == {
        (method, path): (413, None if method == "HEAD" else "REQUEST_TOO_LARGE")
        for method, path in http
    }
