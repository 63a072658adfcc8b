"""The inbox's A2A routes: the public Agent Card, and the JSON-RPC endpoint on the official SDK.

The `a2a` extra. `GET /.well-known/agent-card.json` answers without a token (the gate lists it
among its public paths): the card names no person, only the inbox and how to reach it, with an
`ETag` so a client can revalidate it cheaply. `POST /a2a` is the SDK's JSON-RPC dispatcher (A2A
1.0: `SendMessage`, `SendStreamingMessage` over server-sent events, `GetTask`, ...), behind the
gate like every other route, with `InboxHandler` answering; the dispatcher hands the handler each
call's Starlette request in the call's context (`REQUEST_STATE_KEY`), which says whose token it
carries.
"""

from __future__ import annotations

import hashlib
import json

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import DefaultServerCallContextBuilder, create_jsonrpc_routes
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from user_questions.host.a2a.card import A2A_PATH, CARD_PATH, agent_card
from user_questions.host.a2a.handler import REQUEST_STATE_KEY, InboxHandler, base_url_of
from user_questions.host.a2a.push import PushSender
from user_questions.host.hub import HostTask
from user_questions.host.stores import SettingStore

__all__ = ["CARD_CACHE", "inbox_routes", "public_card"]

CARD_CACHE = "max-age=300"
"""How long a client may keep the public card without asking again."""


class _WithRequest(DefaultServerCallContextBuilder):
    """The SDK's call context, holding the request it was made for."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[REQUEST_STATE_KEY] = request
        return context


def inbox_routes(
    store: SettingStore, *, push_private: bool = False
) -> tuple[list[BaseRoute], list[HostTask]]:
    """The routes of the inbox as an A2A agent, and the host task delivering its pushes (their
    configurations kept in `store`; `push_private`: webhooks on private and loopback addresses
    are allowed)."""
    push = PushSender(store, allow_private=push_private)
    rpc = create_jsonrpc_routes(InboxHandler(push), A2A_PATH, context_builder=_WithRequest())
    return [Route(CARD_PATH, public_card, methods=["GET"]), *rpc], [push.run]


async def public_card(request: Request) -> Response:
    """The public Agent Card, for the address this request reached the host at."""
    card = agent_card_to_dict(agent_card(base_url_of(request)))
    body = json.dumps(card, sort_keys=True, separators=(",", ":"))
    headers = {
        "ETag": f'W/"{hashlib.sha256(body.encode()).hexdigest()}"',
        "Cache-Control": CARD_CACHE,
    }
    asked = request.headers.get("if-none-match", "")
    if headers["ETag"].removeprefix("W/") in (
        tag.strip().removeprefix("W/") for tag in asked.split(",")
    ):
        return Response(status_code=304, headers=headers)
    return JSONResponse(card, headers=headers)
