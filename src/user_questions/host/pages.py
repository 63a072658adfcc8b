"""The pages a host serves to browsers: the inbox, the history, and their static files.

Level 8: imports Starlette, `security` and `errors`. The pages are plain HTML, ES modules and CSS
shipped as package data in `STATIC_DIR`. Serving a page hands its browser the cookie that carries
the token it presented, so the token can leave the address bar; a page missing from the
installation is `PAGE_MISSING`, not a crash.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.security import token_cookie, token_of

__all__ = ["STATIC_DIR", "history_page", "inbox_page", "static_files"]

STATIC_DIR = Path(__file__).parent / "static"
"""The pages' files, shipped as package data."""


async def inbox_page(request: Request) -> Response:
    """`GET /`: the inbox (`index.html`)."""
    return _html(request, "index.html")


async def history_page(request: Request) -> Response:
    """`GET /history`: the history page (`history.html`)."""
    return _html(request, "history.html")


def static_files() -> ASGIApp:
    """`/static/...`: the pages' modules and styles."""
    if STATIC_DIR.is_dir():
        return StaticFiles(directory=STATIC_DIR)

    async def missing(scope: Scope, receive: Receive, send: Send) -> None:
        raise _page_missing(STATIC_DIR)

    return missing


def _html(request: Request, name: str) -> Response:
    """A page, with the cookie that carries the token the request presented from now on."""
    page = STATIC_DIR / name
    if not page.is_file():
        raise _page_missing(page)
    response = FileResponse(page, media_type="text/html", headers={"cache-control": "no-store"})
    secure = request.url.scheme == "https"  # TLS here, or at a trusted proxy (`host/proxy.py`)
    response.headers.append(
        "set-cookie", token_cookie(token_of(request.scope) or "", secure=secure)
    )
    return response


def _page_missing(path: Path) -> UserQuestionError:
    return UserQuestionError(
        f"the web page is not installed ({path} is missing); reinstall 'user-questions[web]'",
        ErrorCode.PAGE_MISSING,
    )
