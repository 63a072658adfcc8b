"""`create_app()`: the host as a Starlette app, put together from the modules beside it.

With `server`, the top of `host/`: it only composes. The routes, the security middleware, the
lifespan that opens the store and runs the hub, the people and the host's tasks, and the one place
where error codes become HTTP statuses. What each route does is in its own module:

    GET  /              the inbox page (its shell needs no token)  `web.pages`
    GET  /q/<rpcId>     on to the inbox, open on that card     `web.pages`
    POST /session       a page signs in with a token           `web.pages`
    GET  /history       the history page                       `web.pages`
    GET  /rules         the rules page                         `web.pages`
    GET  /static/...    the pages' modules and styles          `web.pages`
    GET  /manifest.webmanifest, /sw.js   the installable inbox `web.pages`
    GET/POST /a/<link>  an answer link: look, then send        `notify.link_pages`
    WS   /ws            the page protocol                      `endpoints.page`
    WS   /ws/ask        the asker protocol                     `endpoints.asker`
    POST /api/respond   a client-response; the receipt         `endpoints.http_api`
    POST /api/decide    an approval a rule settles, or 204     `endpoints.http_api`
    GET  /api/pending   every pending request's frame          `endpoints.http_api`
    GET  /api/history   settled requests, paginated            `endpoints.http_api`
    GET  /api/me        who the token is: its name and role    `endpoints.http_api`
    *    /api/tokens...  the tokens, for admins                 `endpoints.tokens_api`
    *    /api/rules...   the rules, for people and admins; a check `endpoints.rules_api`
    *    /api/push/...   Web Push: key, subscriptions, worker's taps `endpoints.push_api`
    GET  /metrics       Prometheus' text format    `endpoints.http_api`, `telemetry.metrics`
    GET  /healthz       `{"ok": true}`, without a token        `endpoints.http_api`
    GET  /readyz        200 while the store answers, else 503  `endpoints.http_api`
    GET  /.well-known/agent-card.json   the public A2A card    `a2a.routes`
    POST /a2a           A2A's JSON-RPC endpoint (an asker's token) `a2a.handler`

Around the routes, outermost first: `ForwardedMiddleware` (only with `trust_proxy`: who the
client is behind a reverse proxy), `AccessLogMiddleware` (request and connection ids, a log line
each), `SecurityMiddleware` (token, origin, sizes, headers). `create_metrics_app` is the app of a
separate metrics listener (`uq serve --metrics-bind`): `GET /metrics` alone, without a token.

docs/protocol.md describes both protocols and the HTTP API; docs/host.md the host around them.
Every answer, dismissal, withdrawal and ask records the person whose token made it and the
surface it came through; a WebSocket whose token is revoked is closed with code 4401.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import brief
from user_questions.host.a2a import InboxAgent
from user_questions.host.audit.checkpoints import keep_signing, sealer
from user_questions.host.audit.keys import (
    INSTALL_LINE,
    AuditKey,
    default_key_path,
    open_key,
    signing_available,
)
from user_questions.host.chat.slack import slack_bot
from user_questions.host.chat.telegram import telegram_bot
from user_questions.host.config import HostConfig
from user_questions.host.endpoints import http_api, push_api, rules_api, tokens_api
from user_questions.host.endpoints.asker import AskerConnection, AskerTurns
from user_questions.host.endpoints.page import PageConnection
from user_questions.host.gate.proxy import ForwardedMiddleware
from user_questions.host.gate.public_url import PublicUrl
from user_questions.host.gate.roles import refusal_of
from user_questions.host.gate.security import SecurityMiddleware
from user_questions.host.gate.tokens import Tokens, agents_token, host_token
from user_questions.host.hub import Hub
from user_questions.host.notify import link_pages
from user_questions.host.notify.assembly import check_addressed, notifications
from user_questions.host.rules import Rules
from user_questions.host.stores import Store, open_store
from user_questions.host.stores.retention import keep_records
from user_questions.host.telemetry.logs import AccessLogMiddleware
from user_questions.host.web import pages

__all__ = ["create_app", "create_metrics_app"]

logger = logging.getLogger("user_questions.host")

_STATUS_BY_CODE: dict[str, int] = {
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.FORBIDDEN_ORIGIN: 403,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.REQUEST_TOO_LARGE: 413,
    ErrorCode.PAGE_MISSING: 500,
    ErrorCode.INTERNAL_ERROR: 500,
    ErrorCode.STORE_UNAVAILABLE: 503,
    ErrorCode.STORE_FULL: 507,
    ErrorCode.STORE_BUSY: 503,
}
"""HTTP statuses of error codes; any other code is a 400."""
_CODE_BY_STATUS = {status: code for code, status in _STATUS_BY_CODE.items()}
_CODE_BY_STATUS[500] = ErrorCode.INTERNAL_ERROR  # a 500 of no known cause
_CODE_BY_STATUS[503] = ErrorCode.STORE_UNAVAILABLE


def _audit_key(path: str | os.PathLike[str] | None, store: Store) -> AuditKey | None:
    """The host's audit key (`host/audit/keys.py`): the file given, else the one beside a SQLite
    store, made when missing; `None`, said once in the log, when there is none to use (no
    `cryptography`, or a PostgreSQL store without `--audit-key`, where it is an operator's
    choice, said at info level): the chain is still appended, but not signed, and pruning keeps
    its records.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a key file that cannot be used (read by others,
            not an Ed25519 key).
    """
    chosen = Path(path) if path is not None else default_key_path(store.url)
    if chosen is None:
        logger.info(
            "the audit log's checkpoints are not signed: a PostgreSQL store needs --audit-key "
            "(the same key file on every node; docs/audit.md)"
        )
        return None
    if not signing_available():
        logger.warning("the audit log's checkpoints are not signed: %s", INSTALL_LINE)
        return None
    return open_key(chosen)


def create_app(config: HostConfig, *, address: PublicUrl | None = None) -> Starlette:
    """The host's Starlette app, as `config` describes it.

    `address` is where people reach the host (`serve()` passes the bound address); the config's
    public URL wins over it, and notifications link to it. Once the app has started,
    `app.state.token`, `app.state.store`, `app.state.hub` and `app.state.tokens` hold the token,
    the open store, the `Hub` and the `Tokens`; `app.state.answer_links` the links notifications
    carry (`None`: every answer link is refused). Each of the config's tasks, and the notifiers,
    run with the hub while the app serves, and are cancelled when it stops. The public URL's
    origin is accepted as the host's own; the trusted proxies' forwarding headers say who the
    client is (`host/gate/proxy.py`).

    Raises:
        UserQuestionError: `BAD_REQUEST` for notifications with no address to link to.
    """
    public = config.public
    address = public or address
    check_addressed(config.notifications, address)
    store = config.store
    opened = open_store(store) if isinstance(store, str | os.PathLike) else store
    agent = InboxAgent(opened, push_private=config.a2a_push_private)
    proxies = config.proxies
    proxy_middleware = [] if proxies is None else [Middleware(ForwardedMiddleware, trusted=proxies)]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            app.state.store = await stack.enter_async_context(opened)
            app.state.token = await host_token(opened, config.token)
            app.state.asker_token = await agents_token(opened)
            tokens = Tokens(opened, app.state.token, app.state.asker_token)
            app.state.tokens = await stack.enter_async_context(tokens)
            app.state.rules = rules = await stack.enter_async_context(Rules(opened))
            hub = Hub(opened, rules=rules, tokens=tokens)
            app.state.hub = hub = await stack.enter_async_context(hub)
            hub.metrics.watch_store(opened.stats)
            running = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(running.cancel_scope.cancel)
            key = _audit_key(config.audit_key, opened)
            if key is not None:
                running.start_soon(keep_signing, opened, key)
            if config.retain_days is not None:
                seal = None if key is None else sealer(key)
                running.start_soon(keep_records, opened, config.retain_days, seal)
            told = await notifications(config.notifications, opened, address, tokens)
            app.state.answer_links = told.links
            app.state.web_push = told.push
            chats = []
            if config.telegram is not None:
                chats.append(telegram_bot(config.telegram, config.telegram_api, opened, tokens))
            if config.slack_app_token is not None and config.slack_bot_token is not None:
                chats.append(
                    slack_bot(
                        config.slack_app_token,
                        config.slack_bot_token,
                        config.slack_api,
                        opened,
                        tokens,
                    )
                )
            for task in (*config.tasks, *told.tasks, *chats, *agent.tasks):
                running.start_soon(task, hub)
            yield

    app: Starlette = Starlette(
        routes=[
            # The rules' quick path first: Starlette tries the routes in order, and a hook's
            # decision is the host's most frequent request (docs/performance.md)
            Route("/api/decide", http_api.decide, methods=["POST"]),
            Route("/", pages.inbox_page, methods=["GET", "HEAD"]),
            Route("/q/{rpc_id:path}", pages.question_page, methods=["GET", "HEAD"]),
            Route("/session", pages.session, methods=["POST"]),
            Route("/history", pages.history_page, methods=["GET", "HEAD"]),
            Route("/rules", pages.rules_page, methods=["GET", "HEAD"]),
            Mount("/static", pages.static_files()),
            Route("/manifest.webmanifest", pages.manifest, methods=["GET", "HEAD"]),
            Route("/sw.js", pages.service_worker, methods=["GET", "HEAD"]),
            Route("/a/{link}", link_pages.answer_link, methods=["GET", "POST"]),
            WebSocketRoute("/ws", PageConnection.endpoint),
            WebSocketRoute("/ws/ask", AskerConnection.endpoint),
            Route("/api/respond", http_api.respond, methods=["POST"]),
            Route("/api/pending", http_api.pending, methods=["GET"]),
            Route("/api/history", http_api.history, methods=["GET"]),
            Route("/api/me", http_api.me, methods=["GET"]),
            Route("/api/tokens", tokens_api.list_tokens, methods=["GET"]),
            Route("/api/tokens", tokens_api.post_token, methods=["POST"]),
            Route("/api/tokens/{name}", tokens_api.patch_token, methods=["PATCH"]),
            Route("/api/tokens/{name}", tokens_api.delete_token, methods=["DELETE"]),
            Route("/api/rules", rules_api.list_rules, methods=["GET"]),
            Route("/api/rules", rules_api.create_rule, methods=["POST"]),
            Route("/api/rules/check", rules_api.check_rule_call, methods=["POST"]),
            Route("/api/rules/{id}", rules_api.delete_rule, methods=["DELETE"]),
            Route("/api/push/key", push_api.public_key, methods=["GET"]),
            Route("/api/push/subscriptions", push_api.add_subscription, methods=["POST"]),
            Route("/api/push/subscriptions", push_api.list_subscriptions, methods=["GET"]),
            Route("/api/push/subscriptions/{id}", push_api.remove_subscription, methods=["DELETE"]),
            Route("/api/push/worker/answer", push_api.worker_answer, methods=["POST"]),
            Route("/api/push/worker/card/{rpc_id:path}", push_api.worker_card, methods=["GET"]),
            Route("/metrics", http_api.metrics, methods=["GET"]),
            Route("/healthz", http_api.healthz, methods=["GET"]),
            Route("/readyz", http_api.readyz, methods=["GET"]),
            *agent.routes,
        ],
        middleware=[
            *proxy_middleware,
            Middleware(AccessLogMiddleware),
            Middleware(
                SecurityMiddleware,
                authenticate=lambda given: app.state.tokens.authenticate(given),
                authorize=refusal_of,
                deny=_deny,
                public_origin=None if public is None else public.origin,
            ),
        ],
        exception_handlers={
            HTTPException: _http_error,
            UserQuestionError: _code_error,
        },
        lifespan=lifespan,
    )
    app.state.public_url = public
    app.state.asker_turns = AskerTurns()
    app.state.answer_links = None
    app.state.web_push = None
    return app


def create_metrics_app(app: Starlette) -> Starlette:
    """`GET /metrics` of `app` alone, without a token: the app of a listener that only the
    monitoring can reach (`uq serve --metrics-bind`). It shares `app`'s state (its hub), so it
    answers once `app` has started."""
    listener = Starlette(
        routes=[Route("/metrics", http_api.metrics, methods=["GET"])],
        middleware=[Middleware(AccessLogMiddleware)],
        exception_handlers=app.exception_handlers,
    )
    listener.state = app.state
    return listener


def _error(code: str, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": brief(message)}},
        status_code=_STATUS_BY_CODE.get(code, 400),
    )


def _deny(status: int, code: str, message: str) -> Response:
    response = _error(code, message)
    response.status_code = status
    return response


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
