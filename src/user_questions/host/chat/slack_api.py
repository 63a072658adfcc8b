"""Slack's Web API over HTTPS, as its reference documents it: `POST {api}/{method}` with a JSON
body and `Authorization: Bearer <token>`, answered `{"ok": true, ...}` or
`{"ok": false, "error": "invalid_auth"}`; a rate limit is HTTP 429 with a `Retry-After` header.

Written on httpx (the `web` extra's client) rather than slack_sdk: docs/chat.md says why. A 429
is waited out as `Retry-After` says (`MAX_RETRY_AFTER` at most, `MAX_TRIES` tries); a network
failure raises `SlackApiUnreachable`, for the caller to back off. Tokens travel in a header,
never in a URL, and no header or body is ever logged.
"""

from __future__ import annotations

import importlib.util
import logging
import re
from typing import TYPE_CHECKING, Any

import anyio

from user_questions.errors import ErrorCode, UserQuestionError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "DEFAULT_SLACK_API",
    "INSTALL_HINT",
    "MAX_RETRY_AFTER",
    "MAX_TRIES",
    "SlackApi",
    "SlackApiError",
    "SlackApiUnreachable",
    "check_slack_tokens",
    "require_slack_extra",
]

logger = logging.getLogger("user_questions.host.chat")

DEFAULT_SLACK_API = "https://slack.com/api"
MAX_TRIES = 5
"""Tries of one call that Slack answers 429 before it is given up."""
MAX_RETRY_AFTER = 300.0
"""Seconds waited at most for one 429's `Retry-After`."""
_TOKEN = re.compile(r"[A-Za-z0-9-]{10,400}")
INSTALL_HINT = "pip install 'user-questions[slack]'"


def require_slack_extra() -> None:
    """Refuse to start Slack without its extra's packages (httpx, websockets), before the host
    starts rather than when it first connects.

    Raises:
        UserQuestionError: `BAD_REQUEST`, with the line that installs them.
    """
    missing = [name for name in ("httpx", "websockets") if importlib.util.find_spec(name) is None]
    if missing:
        raise UserQuestionError(
            f"the Slack app needs {' and '.join(missing)}: {INSTALL_HINT}", ErrorCode.BAD_REQUEST
        )


def check_slack_tokens(app_token: str | None, bot_token: str | None) -> None:
    """Refuse tokens that cannot be Slack's: the app-level token (`xapp-`, with the
    `connections:write` scope, for Socket Mode) and the bot token (`xoxb-`) go together.

    Raises:
        UserQuestionError: `BAD_TOKEN`, saying which token is wrong and what it looks like.
    """
    if app_token is None and bot_token is None:
        return
    for flag, token, prefix, what in (
        ("--slack-app-token", app_token, "xapp-", "the app-level token"),
        ("--slack-bot-token", bot_token, "xoxb-", "the bot token"),
    ):
        if token is None:
            raise UserQuestionError(
                f"Slack needs both tokens: give {flag} too ({what}, {prefix}...)",
                ErrorCode.BAD_TOKEN,
            )
        if not (token.startswith(prefix) and _TOKEN.fullmatch(token)):
            raise UserQuestionError(
                f"{flag}: a Slack {what[4:]} begins with {prefix} followed by letters, digits "
                f"and dashes, as the app's settings page gives it",
                ErrorCode.BAD_TOKEN,
            )


class SlackApiError(Exception):
    """Slack answered `ok: false` (after waiting out any 429)."""

    def __init__(self, method: str, error: str) -> None:
        super().__init__(f"{method} was refused: {error}")
        self.error = error


class SlackApiUnreachable(Exception):
    """Slack could not be reached, or answered with something that is not its JSON."""


class SlackApi:
    """The Web API with one token; `client` is an open `httpx.AsyncClient`."""

    def __init__(self, token: str, api: str, client: httpx.AsyncClient) -> None:
        self._base = api.rstrip("/") + "/"
        self._headers = {"Authorization": f"Bearer {token}"}
        self._client = client

    def __repr__(self) -> str:
        return f"<SlackApi {self._base}>"

    async def call(
        self, method: str, payload: dict[str, Any] | None = None, *, seconds: float = 30.0
    ) -> dict[str, Any]:
        """Slack's answer to `method` called with `payload` (JSON).

        Raises:
            SlackApiError: Slack refused it (or went on answering 429 `MAX_TRIES` times).
            SlackApiUnreachable: no answer, or not the Web API's.
        """
        import httpx  # the extra's: checked by `require_slack_extra` when the host starts

        for _ in range(MAX_TRIES):
            try:
                response = await self._client.post(
                    self._base + method, json=payload or {}, headers=self._headers, timeout=seconds
                )
                if response.status_code == 429:
                    wait = _retry_after(response.headers.get("Retry-After"))
                    logger.warning("Slack: %s is rate limited; retrying in %.0f s", method, wait)
                    await anyio.sleep(wait)
                    continue
                body = response.json()
            except (httpx.HTTPError, ValueError) as error:
                raise SlackApiUnreachable(f"{method}: {type(error).__name__}") from None
            if not isinstance(body, dict):
                raise SlackApiUnreachable(f"{method}: an answer that is not the Web API's")
            if body.get("ok") is not True:
                raise SlackApiError(method, str(body.get("error") or response.status_code))
            return body
        raise SlackApiError(method, "ratelimited")


def _retry_after(header: str | None) -> float:
    try:
        return min(max(float(header or 1), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        return 1.0
