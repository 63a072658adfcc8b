"""The pages a host serves to browsers: the inbox, the history, the rules, their static files,
and what makes the inbox an installable web app.

The pages are plain HTML, ES modules and CSS shipped as package data in `STATIC_DIR`. The inbox's
shell (`/`, its files, the web app manifest and the service worker) is served without a token: it is
the same for everyone and shows nothing until its WebSocket, which needs the token, delivers the
questions. Serving a page to a request that presents an accepted token hands its browser the cookie
that carries it, so the token can leave the address bar; a page without a session signs in with
`POST /session`. A page missing from the installation is `PAGE_MISSING`, not a crash.

    GET  /                       the inbox (`?q=<rpcId>` opens it on that request's card)
    GET  /q/<rpcId>              the address notifications link to: sends the browser to the inbox
    POST /session                sign in: the body is a token; the answer sets the cookie
    GET  /history                the history page
    GET  /rules                  the rules page: the rules people made, to read and revoke
    GET  /manifest.webmanifest   the web app manifest (name, icons, colours)
    GET  /sw.js                  the service worker, which keeps the shell for an offline start
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from user_questions._languages import (
    from_accept_language,
    gettext,
    html_tag,
    messages_of,
    speaking,
)
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.roles import may_answer, refusal_of
from user_questions.host.gate.security import identity_of, token_cookie, token_of
from user_questions.host.gate.tokens import Tokens

__all__ = [
    "MAX_TOKEN_BYTES",
    "STATIC_DIR",
    "history_page",
    "inbox_page",
    "manifest",
    "page_text",
    "question_page",
    "rules_page",
    "service_worker",
    "session",
    "static_files",
]

STATIC_DIR = Path(__file__).parent / "static"
"""The pages' files, shipped as package data."""
MAX_TOKEN_BYTES = 1024
"""The longest body `POST /session` reads."""
_NOT_CACHED = {"cache-control": "no-store"}
MESSAGE_MARK = re.compile(r"\{\{(.+?)\}\}")
"""A message id in a page's HTML: `{{Inbox}}`, replaced by its text in the reader's language
(the id may hold inline markup such as `<kbd>`, which its translations keep)."""
_HTML_LANG = '<html lang="en">'
_HEAD_END = "</head>"
_WORKER_MESSAGES = "const MESSAGES = {};"


async def inbox_page(request: Request) -> Response:
    """`GET /`: the inbox (`index.html`)."""
    return _html(request, "index.html")


async def history_page(request: Request) -> Response:
    """`GET /history`: the history page (`history.html`)."""
    return _html(request, "history.html")


async def rules_page(request: Request) -> Response:
    """`GET /rules`: the rules page (`rules.html`)."""
    return _html(request, "rules.html")


async def question_page(request: Request) -> Response:
    """`GET /q/<rpcId>`: on to the inbox, which opens on that request's card (303). The inbox
    asks for the token when the browser has none, and shows nothing until it is given."""
    target = "../?q=" + quote(request.path_params["rpc_id"], safe="")
    token = request.query_params.get("token")
    if token:
        target += "&token=" + quote(token, safe="")
    return RedirectResponse(target, status_code=303, headers=_NOT_CACHED)


async def session(request: Request) -> Response:
    """`POST /session`: the body is a token; an accepted one that may answer comes back as the
    page's cookie (204), an asker's is `FORBIDDEN`, any other is `UNAUTHORIZED`."""
    body = await request.body()
    tokens: Tokens = request.app.state.tokens
    token = body[:MAX_TOKEN_BYTES].decode("utf-8", "replace").strip()
    identity = None if len(body) > MAX_TOKEN_BYTES else tokens.authenticate(token)
    if identity is None:
        raise UserQuestionError("this host does not accept that token", ErrorCode.UNAUTHORIZED)
    why = refusal_of(identity, "POST", "/session")
    if why is not None:
        raise UserQuestionError(why, ErrorCode.FORBIDDEN)
    response = Response(status_code=204, headers=_NOT_CACHED)
    response.headers.append("set-cookie", _cookie(request, token))
    return response


async def manifest(request: Request) -> Response:
    """`GET /manifest.webmanifest`: what a browser installs the inbox with."""
    return _file("manifest.webmanifest", "application/manifest+json")


async def service_worker(request: Request) -> Response:
    """`GET /sw.js`: the service worker, served beside `/` so that its scope is the whole host;
    never cached by HTTP, so a new version reaches the browser at once; its notifications' words
    in the language the browser asks for (`Accept-Language`), filled into its `MESSAGES`."""
    catalog = _catalog_json(_language_of(request))
    body = _source("sw.js").replace(_WORKER_MESSAGES, f"const MESSAGES = {catalog};", 1)
    headers = {"cache-control": "no-cache", "vary": "Accept-Language"}
    return Response(body, media_type="text/javascript", headers=headers)


def static_files() -> ASGIApp:
    """`/static/...`: the pages' modules and styles."""
    if STATIC_DIR.is_dir():
        return StaticFiles(directory=STATIC_DIR)

    async def missing(scope: Scope, receive: Receive, send: Send) -> None:
        raise _page_missing(STATIC_DIR)

    return missing


def _html(request: Request, name: str) -> Response:
    """A page in the language the browser asks for (`Accept-Language`), with the cookie that
    carries the token the request presented, when the host accepts it and it may answer (the
    shell is served to anyone; only a real token that can open the page becomes a cookie)."""
    language = _language_of(request)
    headers = {
        **_NOT_CACHED,
        "content-language": html_tag(language),
        "vary": "Accept-Language",
    }
    body = page_text(_source(name), language)
    response = Response(body, media_type="text/html", headers=headers)
    token = token_of(request.scope)
    identity = identity_of(request.scope)
    if token is not None and identity is not None and may_answer(identity):
        response.headers.append("set-cookie", _cookie(request, token))
    return response


def page_text(source: str, language: str) -> str:
    """A page's HTML in `language`: its `<html lang>`, each `{{message}}` translated, and the
    language's catalog embedded as JSON (`#uq-messages`) for its modules to read: the same
    messages, no second file to build or fetch."""
    with speaking(language):
        text = MESSAGE_MARK.sub(lambda mark: gettext(mark.group(1)), source)
    text = text.replace(_HTML_LANG, f'<html lang="{html.escape(html_tag(language))}">', 1)
    embedded = _catalog_json(language)
    script = f'<script type="application/json" id="uq-messages">{embedded}</script>\n  '
    return text.replace(_HEAD_END, script + _HEAD_END, 1)


def _language_of(request: Request) -> str:
    return from_accept_language(request.headers.get("accept-language"))


def _catalog_json(language: str) -> str:
    """A language's messages as a JS object literal, safe inside `<script>` (no `</`)."""
    catalog = json.dumps(messages_of(language), ensure_ascii=False, sort_keys=True)
    return catalog.replace("<", "\\u003c")


def _source(name: str) -> str:
    path = STATIC_DIR / name
    if not path.is_file():
        raise _page_missing(path)
    return path.read_text(encoding="utf-8")


def _cookie(request: Request, token: str) -> str:
    """The token's cookie, `Secure` when the page is served over https (TLS here, or at a
    trusted proxy: `host/gate/proxy.py`)."""
    return token_cookie(token, secure=request.url.scheme == "https")


def _file(name: str, media_type: str, headers: dict[str, str] | None = None) -> Response:
    path = STATIC_DIR / name
    if not path.is_file():
        raise _page_missing(path)
    return FileResponse(path, media_type=media_type, headers=headers)


def _page_missing(path: Path) -> UserQuestionError:
    return UserQuestionError(
        f"the web page is not installed ({path} is missing); reinstall 'user-questions[web]'",
        ErrorCode.PAGE_MISSING,
    )
