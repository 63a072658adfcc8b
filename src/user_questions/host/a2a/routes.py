"""The inbox's A2A endpoints: the public Agent Card, and the JSON-RPC endpoint on the official SDK.

The `a2a` extra, loaded by the room (`host/a2a/__init__.py`) once the host serves.
`GET /.well-known/agent-card.json` answers without a token (the gate lists it among its public
paths): the card names no person, only the inbox and how to reach it, with an `ETag` so a client
can revalidate it cheaply. `POST /a2a` is the SDK's JSON-RPC dispatcher (A2A
1.0: `SendMessage`, `SendStreamingMessage` over server-sent events, `GetTask`, ...), behind the
gate like every other route, with `InboxHandler` answering; the dispatcher hands the handler each
call's Starlette request in the call's context (`REQUEST_STATE_KEY`), which says whose token it
carries.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import DefaultServerCallContextBuilder, create_jsonrpc_routes
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from user_questions.host.a2a.card import agent_card
from user_questions.host.a2a.handler import REQUEST_STATE_KEY, InboxHandler, base_url_of
from user_questions.host.a2a.naming import A2A_PATH
from user_questions.host.a2a.push import PushSender
from user_questions.host.stores import SettingStore, StoredQuestion

__all__ = ["CARD_CACHE", "Endpoint", "InboxEndpoints", "inbox_endpoints", "public_card"]

CARD_CACHE = "max-age=300"
"""How long a client may keep the public card without asking again."""

Endpoint = Callable[[Request], Awaitable[Response]]


class _WithRequest(DefaultServerCallContextBuilder):
    """The SDK's call context, holding the request it was made for."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[REQUEST_STATE_KEY] = request
        return context


@dataclass(frozen=True, slots=True)
class InboxEndpoints:
    """The SDK's side of the inbox as an A2A agent."""

    card: Endpoint
    """`GET /.well-known/agent-card.json`."""
    rpc: Endpoint
    """`POST /a2a`: the SDK's JSON-RPC dispatcher."""
    push: PushSender


def inbox_endpoints(
    store: SettingStore, ended: Callable[[StoredQuestion], None], *, push_private: bool = False
) -> InboxEndpoints:
    """The endpoints of the inbox as an A2A agent and its pushes' sender (the configurations kept
    in `store`; `ended` queues the push of a task that ended; `push_private`: webhooks on private
    and loopback addresses are allowed)."""
    push = PushSender(store, allow_private=push_private)
    handler = InboxHandler(push, ended)
    [rpc] = create_jsonrpc_routes(handler, A2A_PATH, context_builder=_WithRequest())
    assert isinstance(rpc, Route)
    return InboxEndpoints(public_card, rpc.endpoint, push)


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
