"""The host's HTTP API: answer, list what is pending, read the history, check health.

Level 8: imports Starlette, `hub`, `history`, `decoding`, `security`, `stores`, `frames` and
`outcomes`. Each handler reads the hub or the store from `request.app.state`; errors are raised
as `UserQuestionError` and turned into JSON with their status by the app (`host/app.py`).
docs/protocol.md has the requests and their answers.

    POST /api/respond   a client-response; the receipt comes back
    GET  /api/pending   every pending request's question/requested frame
    GET  /api/history   settled requests, newest first, filtered and paginated
    GET  /healthz       `{"ok": true}`, without a token
"""

from __future__ import annotations

import json

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from user_questions.frames import ClientResponse
from user_questions.host.decoding import load, validate
from user_questions.host.history import entry_of, query_of
from user_questions.host.hub import Hub
from user_questions.host.security import person_of
from user_questions.host.stores import HistoryPage, HistoryStore
from user_questions.outcomes import claimed_surface

__all__ = ["SURFACE_HEADER", "healthz", "history", "pending", "respond"]

SURFACE_HEADER = "x-uq-surface"
"""`POST /api/respond` with `X-UQ-Surface: terminal` (or `editor`) is recorded as settled through
that surface; without it, or with any other value, through `api`."""
_NOT_CACHED = {"cache-control": "no-store"}


async def respond(request: Request) -> Response:
    """Apply a client-response; the body is the receipt (200 whether or not it was accepted)."""
    hub: Hub = request.app.state.hub
    response = validate(ClientResponse, load(await request.body()), "client-response")
    via = claimed_surface(request.headers.get(SURFACE_HEADER))
    receipt = await hub.respond(response, via=via, by=person_of(request.scope))
    # The frame's `type` says what a WebSocket payload is; an HTTP body needs no such label.
    return Response(receipt.model_dump_json(exclude={"type"}), media_type="application/json")


async def pending(request: Request) -> Response:
    """`{"pending": [question/requested frames]}`, oldest first; each is now recorded as shown."""
    hub: Hub = request.app.state.hub
    body = '{"pending":[' + ",".join(hub.pending_frames()) + "]}"
    hub.record_shown()
    return Response(body, media_type="application/json", headers=_NOT_CACHED)


async def history(request: Request) -> Response:
    """One page of settled requests, `{"items", "next"?}`, for the query's filters."""
    store: HistoryStore = request.app.state.store
    page = await store.history(query_of(request.query_params))
    body = await anyio.to_thread.run_sync(_history_body, page)
    return Response(body, media_type="application/json", headers=_NOT_CACHED)


def _history_body(page: HistoryPage) -> str:
    """A `HistoryResponse` as JSON, written entry by entry in a worker thread: a page may hold
    megabytes, and the event loop goes on meanwhile."""
    items = ",".join(entry_of(record, rendered=True).model_dump_json() for record in page.records)
    more = "" if page.next is None else f',"next":{json.dumps(page.next)}'
    return f'{{"items":[{items}]{more}}}'


async def healthz(request: Request) -> Response:
    """`{"ok": true}`: the host serves (no token needed, nothing revealed)."""
    return JSONResponse({"ok": True})
