"""The host's HTTP API: answer, list what is pending, read the history, check health.

Each handler reads the hub or the store from `request.app.state`; errors are raised as
`UserQuestionError` and turned into JSON with their status by the app (`host/app.py`).
docs/protocol.md has the requests and their answers.

    POST /api/respond   a client-response; the receipt comes back
    POST /api/decide    an asker's approval, settled by a rule at once or not stored at all
    GET  /api/pending   every pending request's question/requested frame
    GET  /api/history   settled requests, newest first, filtered and paginated
    GET  /metrics       the host's metrics, in Prometheus' text format
    GET  /healthz       `{"ok": true}`, without a token: the process serves
    GET  /readyz        `{"ok": true}` while the store answers, else 503; without a token
"""

from __future__ import annotations

import dataclasses

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from user_questions._languages import from_accept_language, speaking
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Ask, ClientResponse, Receipt
from user_questions.host._frame_text import settled_reply
from user_questions.host.endpoints.decoding import load, validate
from user_questions.host.gate.roles import audience_of, may_answer, seen_by, viewer
from user_questions.host.gate.security import Identity, identity_of
from user_questions.host.hub import Hub
from user_questions.host.stores import HistoryPage, HistoryStore, Role, Store
from user_questions.host.telemetry.metrics import CONTENT_TYPE
from user_questions.host.web.history import HistoryResponse, entry_of, query_of
from user_questions.outcomes import claimed_surface

__all__ = [
    "READY_TIMEOUT",
    "SURFACE_HEADER",
    "decide",
    "healthz",
    "history",
    "metrics",
    "pending",
    "me",
    "readyz",
    "respond",
]

READY_TIMEOUT = 5.0
"""Seconds the store has to answer `GET /readyz`; slower counts as not answering."""

SURFACE_HEADER = "x-uq-surface"
"""`POST /api/respond` with `X-UQ-Surface: terminal` (or `editor`) is recorded as settled through
that surface; without it, or with any other value, through `api`."""
_NOT_CACHED = {"cache-control": "no-store"}


async def respond(request: Request) -> Response:
    """Apply a client-response; the body is the receipt (200 whether or not it was accepted).
    A body that is not a client-response is a 400; one whose answer is malformed is a
    client-response that broke the answer rules, refused by its receipt as a page's is."""
    hub: Hub = request.app.state.hub
    try:
        response = validate(ClientResponse, load(await request.body()), "client-response")
    except UserQuestionError as error:
        if error.code != ErrorCode.BAD_ANSWER:
            raise
        receipt = Receipt(accepted=False, reason="bad-response", message=error.message)
    else:
        via = claimed_surface(request.headers.get(SURFACE_HEADER))
        identity = _identity(request)
        with speaking(from_accept_language(request.headers.get("accept-language"))):
            receipt = await hub.respond(response, via=via, by=identity.name, sees=viewer(identity))
    # The frame's `type` says what a WebSocket payload is; an HTTP body needs no such label.
    return Response(receipt.model_dump_json(exclude={"type"}), media_type="application/json")


async def decide(request: Request) -> Response:
    """An ask frame's request (an approval) settled by the rules alone: 200 with its
    `ask/settled` reply when a rule decides it, 204 when a person must be asked, which then
    goes through `/ws/ask` (nothing was stored). `uq hook` asks here first: a call a rule
    decides costs one HTTP request, not a connection and a handshake. Only an asker's token:
    a token that can answer is refused here as the hook refuses it (it could allow its own
    calls), before anything is decided."""
    identity = _identity(request)
    if identity.role is not Role.ASKER:
        raise UserQuestionError(
            "only an asker's token asks the rules to decide: this one can answer",
            ErrorCode.FORBIDDEN,
        )
    ask = validate(Ask, load(await request.body()), "ask")
    if ask.approval is None:
        raise UserQuestionError(
            "only an approval (an ask with `approval`) is decided by the rules",
            ErrorCode.BAD_REQUEST,
        )
    hub: Hub = request.app.state.hub
    record = await hub.decide(
        ask.rpc_id,
        ask.session_id,
        ask.questions,
        ask.approval,
        asked_by=identity.name,
        origin=ask.origin,
        audience=audience_of(identity),
    )
    if record is None:
        return Response(status_code=204, headers=_NOT_CACHED)
    return Response(settled_reply(record), media_type="application/json", headers=_NOT_CACHED)


async def pending(request: Request) -> Response:
    """`{"pending": [question/requested frames]}`, oldest first, of the requests the token may
    see (an asker: the ones it asked); each is now recorded as shown, unless an asker listed it."""
    hub: Hub = request.app.state.hub
    identity = _identity(request)
    sees = viewer(identity)
    if identity.role is Role.ASKER and sees is not None:
        frames = hub.own_frames(sees)
    else:
        frames = hub.pending_frames(sees)
    body = '{"pending":[' + ",".join(frames) + "]}"
    if may_answer(identity):
        hub.record_shown(sees)
    return Response(body, media_type="application/json", headers=_NOT_CACHED)


async def history(request: Request) -> Response:
    """One page of settled requests, `{"items", "next"?}`, for the query's filters."""
    store: HistoryStore = request.app.state.store
    query = dataclasses.replace(query_of(request.query_params), seen_by=seen_by(_identity(request)))
    page = await store.history(query)
    body = await anyio.to_thread.run_sync(_history_body, page)
    return Response(body, media_type="application/json", headers=_NOT_CACHED)


async def metrics(request: Request) -> Response:
    """Every metric of the host (`host/telemetry/metrics.py`), in Prometheus' text format."""
    hub: Hub = request.app.state.hub
    return Response(hub.metrics.exposition(), media_type=CONTENT_TYPE, headers=_NOT_CACHED)


async def me(request: Request) -> Response:
    """`{"name", "role", "groups"?, "routes"?}`: who the token is, for a client to check what
    it holds (an agent's hook refuses a token that could answer)."""
    identity = _identity(request)
    body: dict[str, object] = {"name": identity.name, "role": identity.role}
    if identity.groups:
        body["groups"] = list(identity.groups)
    if identity.routes:
        body["routes"] = list(identity.routes)
    return JSONResponse(body, headers=_NOT_CACHED)


def _identity(request: Request) -> Identity:
    identity = identity_of(request.scope)
    assert identity is not None, "the security middleware lets no one in without a token"
    return identity


def _history_body(page: HistoryPage) -> str:
    """A `HistoryResponse` as JSON, made in a worker thread: a page may hold megabytes, and the
    event loop goes on meanwhile."""
    entries = [entry_of(record, rendered=True) for record in page.records]
    return HistoryResponse(items=entries, next=page.next).model_dump_json()


async def healthz(request: Request) -> Response:
    """`{"ok": true}`: the process serves (no token needed, nothing revealed)."""
    return JSONResponse({"ok": True})


async def readyz(request: Request) -> Response:
    """`{"ok": true}` while the store answers; else 503 with its code and a message that says
    which fault it is and reveals nothing else (no token needed). The host's log says what
    failed, once as the fault starts and once as it clears (`StoreStats`), not once per probe."""
    store: Store = request.app.state.store
    code = ErrorCode.STORE_UNAVAILABLE
    message = f"the host's store did not answer within {READY_TIMEOUT:g} s"
    with anyio.move_on_after(READY_TIMEOUT):
        try:
            await store.ping()
        except UserQuestionError as error:
            code = ErrorCode(error.code)
            message = _NOT_READY.get(code, "the host's store cannot be used")
        else:
            return JSONResponse({"ok": True}, headers=_NOT_CACHED)
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=503, headers=_NOT_CACHED
    )


_NOT_READY = {
    ErrorCode.STORE_UNAVAILABLE: "the host's store cannot be reached; the host's log says why",
    ErrorCode.STORE_FULL: "the disk of the host's store is full",
    ErrorCode.STORE_BUSY: "the host's store is too slow to keep up",
}
"""What `GET /readyz` says of each fault: its kind, never a name, a path or an address."""
