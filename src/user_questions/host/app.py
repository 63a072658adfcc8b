"""`create_app()`: the host as a Starlette app — the page, its WebSocket, the asker WebSocket, the
HTTP API — and the one place where error codes become HTTP statuses.

Level 8: imports `hub`, `people`, `history`, `records`, `security`, `stores`, `frames`, `_wire`
and `errors`. Routes (HOST-CONTRACT.md, docs/host.md and docs/people-and-history.md):

    GET  /              the page (index.html), with the token cookie and the CSP
    GET  /history       the history page (history.html), likewise
    GET  /static/...    the pages' modules and styles, shipped as package data
    WS   /ws            pages: pending requests replayed and pushed, answers and receipts
    WS   /ws/ask        askers (`RemoteProvider`): submit / re-attach, settle, withdraw
    POST /api/respond   a client-response over HTTP; the receipt comes back
    GET  /api/pending   every pending request's question/requested frame
    GET  /api/history   settled requests, newest first, filtered and paginated
    GET  /healthz       `{"ok": true}`, without a token

The app owns its store: its lifespan opens the store, settles the token (given, stored, or new)
and runs the `Hub` and `People`, the retention of records when asked, plus any `tasks` (such as
`uq demo`'s agent) beside it. Every answer, dismissal, withdrawal and ask records the person
whose token made it and the surface it came through; a WebSocket whose token is revoked is
closed with code 4401.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, cast

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from user_questions._wire import describe_validation_error, parse_questions
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import (
    Ask,
    AskerReply,
    AskFailed,
    AskPending,
    AskSettled,
    ClientResponse,
    ErrorFrame,
    ErrorPayload,
    Frame,
    Ping,
    PongFrame,
    Receipt,
    ReceiptFrame,
    ReceiptPayload,
    SettledOutcome,
    Withdraw,
)
from user_questions.host.history import HistoryResponse, entry_of, query_of
from user_questions.host.hub import Hub
from user_questions.host.people import People
from user_questions.host.records import check_retain_days, keep_records
from user_questions.host.security import (
    MAX_FRAME_BYTES,
    SecurityMiddleware,
    identity_of,
    token_cookie,
    token_of,
)
from user_questions.host.stores import Store, StoredQuestion, open_store

__all__ = [
    "CLIENT_SURFACES",
    "REVOKED_CLOSE_CODE",
    "STATIC_DIR",
    "SURFACE_HEADER",
    "TOKEN_PATTERN",
    "HostTask",
    "check_token",
    "create_app",
    "host_token",
]

STATIC_DIR = Path(__file__).parent / "static"
"""The page's files, shipped as package data."""
TOKEN_PATTERN = "8 to 512 characters from A-Z a-z 0-9 . _ ~ -"
REVOKED_CLOSE_CODE = 4401
"""The close code of a WebSocket whose token was revoked while it was open."""
SURFACE_HEADER = "x-uq-surface"
"""`POST /api/respond` with `X-UQ-Surface: terminal` is recorded as the terminal's (`uq answer`),
with `X-UQ-Surface: editor` as an editor's (`uq acp`); otherwise as `api`."""
CLIENT_SURFACES = frozenset({"terminal", "editor"})
"""The surfaces a client of `POST /api/respond` may name in `X-UQ-Surface`."""
_TOKEN_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-")

HostTask = Callable[[Hub], Coroutine[Any, Any, None]]
"""Work run beside the host for as long as it serves, such as an in-process agent."""

_STATUS_BY_CODE: dict[str, int] = {
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.FORBIDDEN_ORIGIN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.REQUEST_TOO_LARGE: 413,
    ErrorCode.PAGE_MISSING: 500,
    ErrorCode.STORE_UNAVAILABLE: 503,
}
"""HTTP statuses of error codes; any other code is a 400."""
_CODE_BY_STATUS = {status: code for code, status in _STATUS_BY_CODE.items()}
_PONG = PongFrame().model_dump_json()


def check_token(token: str) -> str:
    """`token` if it can serve as the host's token (it travels in URLs and a cookie).

    Raises:
        UserQuestionError: `BAD_TOKEN`, saying what a token may hold.
    """
    if not 8 <= len(token) <= 512 or not set(token) <= _TOKEN_CHARACTERS:
        raise UserQuestionError(f"a host token must be {TOKEN_PATTERN}", ErrorCode.BAD_TOKEN)
    return token


async def host_token(store: Store, given: str | None = None) -> str:
    """The host's token: `given` (then kept in the store), else the stored one, else a new one.

    Raises:
        UserQuestionError: `BAD_TOKEN` when `given` cannot serve as a token.
    """
    if given is not None:
        await store.set_setting("token", check_token(given))
        return given
    return await store.setting("token", secrets.token_urlsafe(32))


def create_app(
    store: Store | str | os.PathLike[str],
    *,
    token: str | None = None,
    tasks: Sequence[HostTask] = (),
    retain_days: int | None = None,
) -> Starlette:
    """The host's Starlette app over `store` (a `Store`, a path or a store URL).

    `token` is the host's token (default: the stored one, or a new one); once the app has
    started, `app.state.token`, `app.state.hub` and `app.state.people` hold the token, the
    `Hub` and the `People`. Each of `tasks` runs with the hub while the app serves, and is
    cancelled when it stops. `retain_days` deletes the records of requests settled more than
    that many days ago (default: keep everything).

    Raises:
        UserQuestionError: `BAD_TOKEN` for a token, `BAD_REQUEST` for a retention that cannot
            be used.
    """
    if token is not None:
        check_token(token)
    if retain_days is not None:
        check_retain_days(retain_days)
    opened = open_store(store) if isinstance(store, str | os.PathLike) else store

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with opened, Hub(opened) as hub, anyio.create_task_group() as task_group:
            app.state.token = await host_token(opened, token)
            app.state.hub = hub
            async with People(opened, app.state.token) as people:
                app.state.people = people
                if retain_days is not None:
                    task_group.start_soon(keep_records, opened, retain_days)
                for task in tasks:
                    task_group.start_soon(task, hub)
                yield
            task_group.cancel_scope.cancel()

    app: Starlette = Starlette(
        routes=[
            Route("/", _page, methods=["GET", "HEAD"]),
            Route("/history", _history_page, methods=["GET", "HEAD"]),
            Mount("/static", _static()),
            WebSocketRoute("/ws", _page_socket),
            WebSocketRoute("/ws/ask", _asker_socket),
            Route("/api/respond", _respond, methods=["POST"]),
            Route("/api/pending", _pending, methods=["GET"]),
            Route("/api/history", _history, methods=["GET"]),
            Route("/healthz", _healthz, methods=["GET"]),
        ],
        middleware=[
            Middleware(
                SecurityMiddleware,
                authenticate=lambda given: app.state.people.authenticate(given),
                deny=_deny,
            ),
        ],
        exception_handlers={
            HTTPException: _http_error,
            UserQuestionError: _code_error,
        },
        lifespan=lifespan,
    )
    return app


# -- errors ---------------------------------------------------------------------------------


def _error(code: str, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=_STATUS_BY_CODE.get(code, 400)
    )


def _deny(status: int, message: str) -> Response:
    return _error(_CODE_BY_STATUS.get(status, ErrorCode.BAD_REQUEST), message)


async def _http_error(request: Request, error: Exception) -> Response:
    status = cast(HTTPException, error).status_code
    detail = cast(HTTPException, error).detail
    code = _CODE_BY_STATUS.get(status, ErrorCode.BAD_REQUEST)
    if status == 404:
        detail = f"nothing at {request.url.path}"
    response = _error(code, detail)
    response.status_code = status
    return response


async def _code_error(request: Request, error: Exception) -> Response:
    failure = cast(UserQuestionError, error)
    return _error(str(failure.code), failure.message)


# -- HTTP -----------------------------------------------------------------------------------


async def _page(request: Request) -> Response:
    return _html(request, "index.html")


async def _history_page(request: Request) -> Response:
    return _html(request, "history.html")


def _html(request: Request, name: str) -> Response:
    """A page, with the cookie that carries the token the request presented from now on."""
    page = STATIC_DIR / name
    if not page.is_file():
        raise _page_missing(page)
    response = FileResponse(page, media_type="text/html", headers={"cache-control": "no-store"})
    response.headers.append("set-cookie", token_cookie(token_of(request.scope) or ""))
    return response


def _static() -> ASGIApp:
    if STATIC_DIR.is_dir():
        return StaticFiles(directory=STATIC_DIR)

    async def missing(scope: Scope, receive: Receive, send: Send) -> None:
        raise _page_missing(STATIC_DIR)

    return missing


def _page_missing(path: Path) -> UserQuestionError:
    return UserQuestionError(
        f"the web page is not installed ({path} is missing); reinstall 'user-questions[web]'",
        ErrorCode.PAGE_MISSING,
    )


async def _respond(request: Request) -> Response:
    hub: Hub = request.app.state.hub
    response = _validate(ClientResponse, _load(await request.body()), "client-response")
    surface = request.headers.get(SURFACE_HEADER)
    via = surface if surface in CLIENT_SURFACES else "api"
    receipt = await hub.respond(response, via=via, by=_person(request.scope))
    return Response(receipt.model_dump_json(), media_type="application/json")


async def _pending(request: Request) -> Response:
    hub: Hub = request.app.state.hub
    body = '{"pending":[' + ",".join(hub.pending_frames()) + "]}"
    return Response(body, media_type="application/json", headers={"cache-control": "no-store"})


async def _history(request: Request) -> Response:
    hub: Hub = request.app.state.hub
    page = await hub.store.history(query_of(request.query_params))
    items = [entry_of(record, rendered=True) for record in page.records]
    body = HistoryResponse(items=items, next=page.next).model_dump_json()
    return Response(body, media_type="application/json", headers={"cache-control": "no-store"})


async def _healthz(request: Request) -> Response:
    return JSONResponse({"ok": True})


def _person(scope: Scope) -> str:
    identity = identity_of(scope)
    assert identity is not None, "the security middleware lets no one in without a token"
    return identity.name


# -- WebSockets -----------------------------------------------------------------------------


async def _until_revoked(
    websocket: WebSocket, serve: Callable[[WebSocket], Awaitable[None]]
) -> None:
    """Run `serve` until the connection ends; if its token is revoked meanwhile, stop it and
    close the connection with `REVOKED_CLOSE_CODE`."""
    people: People = websocket.app.state.people
    identity = identity_of(websocket.scope)
    assert identity is not None, "the security middleware lets no one in without a token"
    with anyio.CancelScope() as revoked:
        stop = people.on_revoke(identity, revoked.cancel)
        try:
            await serve(websocket)
        finally:
            stop()
    gone = WebSocketState.DISCONNECTED
    if revoked.cancelled_caught and gone not in (
        websocket.client_state,
        websocket.application_state,
    ):
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):  # the peer left meanwhile
            await websocket.close(REVOKED_CLOSE_CODE, "this token has been revoked")


async def _page_socket(websocket: WebSocket) -> None:
    await _until_revoked(websocket, _serve_page)


async def _asker_socket(websocket: WebSocket) -> None:
    await _until_revoked(websocket, _serve_asker)


async def _serve_page(websocket: WebSocket) -> None:
    """Replay the pending requests, push every change, and answer each frame the page sends."""
    hub: Hub = websocket.app.state.hub
    person = _person(websocket.scope)
    await websocket.accept()
    subscription = hub.subscribe()
    lock = anyio.Lock(fast_acquire=True)

    async def push() -> None:
        with contextlib.suppress(WebSocketDisconnect):  # the page left: the reader sees it too
            async with lock:
                for frame in subscription.snapshot:
                    await websocket.send_text(frame)
            async for frame in subscription.frames:
                async with lock:
                    await websocket.send_text(frame)
            # The hub dropped us (too far behind, or stopping): the page reconnects and replays.
            await websocket.close(1013)

    try:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(push)
            with contextlib.suppress(WebSocketDisconnect):
                async for text in _frames(websocket):
                    reply = await _page_reply(hub, text, person)
                    async with lock:
                        await websocket.send_text(reply)
            task_group.cancel_scope.cancel()
    finally:
        subscription.close()


async def _page_reply(hub: Hub, text: str, person: str) -> str:
    data: Any = None
    try:
        data = _load(text)
        frame = _decode(data, {"client-response": ClientResponse, "ping": Ping})
    except UserQuestionError as error:
        rpc_id = _rpc_id_of(data)
        if rpc_id is None:
            payload = ErrorPayload(code=str(error.code), message=error.message)
            return ErrorFrame(payload=payload).model_dump_json()
        return _receipt_frame(
            rpc_id, Receipt(accepted=False, reason="bad-response", message=error.message)
        )
    if isinstance(frame, Ping):
        return _PONG
    assert isinstance(frame, ClientResponse)
    try:
        receipt = await hub.respond(frame, via="web", by=person)
    except UserQuestionError as error:  # the store failed: nothing was settled; try again
        return ErrorFrame(
            payload=ErrorPayload(code=str(error.code), message=error.message)
        ).model_dump_json()
    return _receipt_frame(frame.rpc_id, receipt)


async def _serve_asker(websocket: WebSocket) -> None:
    """Take asks and withdrawals; report each request's settlement once it happens."""
    hub: Hub = websocket.app.state.hub
    person = _person(websocket.scope)
    await websocket.accept()
    outbox, replies = anyio.create_memory_object_stream[str](math.inf)
    watching: dict[str, Callable[[], None]] = {}

    async def deliver() -> None:
        with contextlib.suppress(WebSocketDisconnect):  # the asker left: it will re-attach
            async for reply in replies:
                await websocket.send_text(reply)

    try:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(deliver)
            with contextlib.suppress(WebSocketDisconnect):
                async for text in _frames(websocket):
                    reply = await _asker_reply(hub, text, watching, outbox, person)
                    outbox.send_nowait(reply)
            task_group.cancel_scope.cancel()
    finally:
        for stop in watching.values():
            stop()
        outbox.close()
        replies.close()


async def _asker_reply(
    hub: Hub,
    text: str,
    watching: dict[str, Callable[[], None]],
    outbox: MemoryObjectSendStream[str],
    person: str,
) -> str:
    data: Any = None
    try:
        data = _load(text)
        frame = _decode(data, {"ask": Ask, "withdraw": Withdraw, "ping": Ping})
        if isinstance(frame, Ping):
            return _PONG
        if isinstance(frame, Withdraw):
            stop = watching.pop(frame.rpc_id, None)
            if stop is not None:
                stop()
            record = await hub.withdraw(frame.rpc_id, via="asker", by=person, reason=frame.reason)
            if record is None:
                raise UserQuestionError(
                    f"no request has rpcId {json.dumps(frame.rpc_id)}", ErrorCode.NOT_FOUND
                )
            return _settled_frame(record)
        assert isinstance(frame, Ask)
        questions = parse_questions({"questions": frame.questions})

        def settled(record: StoredQuestion) -> None:
            watching.pop(record.rpc_id, None)
            outbox.send_nowait(_settled_frame(record))

        watcher = None if frame.rpc_id in watching else settled
        record, stop = await hub.submit(
            frame.rpc_id, frame.session_id, questions, watcher=watcher, asked_by=person
        )
    except UserQuestionError as error:
        payload = AskFailed(code=str(error.code), message=error.message)
        return AskerReply(rpc_id=_rpc_id_of(data), payload=payload).model_dump_json()
    if not record.pending:
        return _settled_frame(record)
    if watcher is not None:
        watching[record.rpc_id] = stop
    return AskerReply(rpc_id=record.rpc_id, payload=AskPending()).model_dump_json()


async def _frames(websocket: WebSocket) -> AsyncIterator[str]:
    """The text of each frame until the peer leaves; an oversized frame ends the connection."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            text = (message.get("bytes") or b"").decode("utf-8", errors="replace")
        if len(text) > MAX_FRAME_BYTES:
            await websocket.close(1009, f"frames are limited to {MAX_FRAME_BYTES} bytes")
            return
        yield text


def _load(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise UserQuestionError(
            f"invalid frame: not valid JSON ({error})", ErrorCode.BAD_REQUEST
        ) from None


def _decode(data: Any, kinds: dict[str, type[Frame]]) -> Frame:
    kind = data.get("type") if isinstance(data, dict) else None
    if kind not in kinds:
        expected = ", ".join(json.dumps(name) for name in kinds)
        raise UserQuestionError(
            f'invalid frame: property "type" must be one of {expected}', ErrorCode.BAD_REQUEST
        )
    frame: Frame = _validate(kinds[kind], data, kind)
    return frame


def _validate(model: type[BaseModel], data: Any, what: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise UserQuestionError(
            f"invalid {what}: {describe_validation_error(error)}", ErrorCode.BAD_REQUEST
        ) from None


def _rpc_id_of(data: Any) -> str | None:
    """The rpcId of a frame that failed to validate, if it has a usable one."""
    if isinstance(data, dict) and isinstance(data.get("rpcId"), str):
        return cast(str, data["rpcId"])
    return None


def _receipt_frame(rpc_id: str, receipt: Receipt) -> str:
    payload = ReceiptPayload(
        accepted=receipt.accepted, reason=receipt.reason, message=receipt.message
    )
    return ReceiptFrame(rpc_id=rpc_id, payload=payload).model_dump_json()


def _settled_frame(record: StoredQuestion) -> str:
    answer = None if record.answer is None else record.answer.model_dump(mode="json")
    # A timed-out request is a withdrawal on the asker protocol: only the records tell them apart.
    outcome = "withdrawn" if record.state == "timed-out" else record.state
    payload = AskSettled(outcome=cast(SettledOutcome, outcome), answer=answer)
    return AskerReply(rpc_id=record.rpc_id, payload=payload).model_dump_json()
