"""The Telegram Bot API over HTTPS, as its reference documents it: `POST {api}/bot{token}/{method}`
with a JSON body (a multipart form for a file), answered `{"ok": true, "result": ...}` or
`{"ok": false, "error_code": ..., "description": ..., "parameters": {"retry_after": ...}}`.

Written on httpx (the `web` extra's client) rather than python-telegram-bot: the host needs the
update offset kept in its store and one poller per bot across nodes (a lease), which that
library's `Application`/`Updater` own themselves, and every call here is one documented POST.
A 429 is waited out as its `retry_after` says (`MAX_RETRY_AFTER` at most) and tried again;
a network failure raises `BotApiUnreachable`, for the caller to back off. The token is in every
URL, so no URL is ever logged.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio

from user_questions.errors import ErrorCode, UserQuestionError

if TYPE_CHECKING:  # the client is made, and httpx imported, when a bot starts
    import httpx

__all__ = [
    "DEFAULT_API",
    "MAX_RETRY_AFTER",
    "MAX_TRIES",
    "BotApi",
    "BotApiError",
    "BotApiUnreachable",
    "check_bot_token",
]

logger = logging.getLogger("user_questions.host.chat")

DEFAULT_API = "https://api.telegram.org"
MAX_TRIES = 5
"""Tries of one call that Telegram answers 429 before it is given up."""
MAX_RETRY_AFTER = 300.0
"""Seconds waited at most for one 429's `retry_after`."""
_BOT_TOKEN_CHARACTERS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789:_-"
)


def check_bot_token(token: str) -> str:
    """`token` if it has the shape BotFather gives (`123456:ABC-...`).

    Raises:
        UserQuestionError: `BAD_TOKEN`, saying what a bot token looks like.
    """
    bot_id, colon, secret = token.partition(":")
    if not (bot_id.isdigit() and colon and secret and set(token) <= _BOT_TOKEN_CHARACTERS):
        raise UserQuestionError(
            "a Telegram bot token is the bot's id, a colon and its secret, as BotFather gives "
            "it (123456789:AA...)",
            ErrorCode.BAD_TOKEN,
        )
    return token


class BotApiError(Exception):
    """The service answered `ok: false` (after waiting out any 429)."""

    def __init__(self, method: str, code: int, description: str) -> None:
        super().__init__(f"{method} was refused: {code} {description}")
        self.code = code
        self.description = description


class BotApiUnreachable(Exception):
    """The service could not be reached, or answered with something that is not its JSON."""


class BotApi:
    """One bot's methods; `client` is an open `httpx.AsyncClient`."""

    def __init__(self, token: str, api: str, client: httpx.AsyncClient) -> None:
        self.bot_id = token.partition(":")[0]
        """The numeric id before the token's colon: not a secret, it names the bot's lease."""
        self._base = f"{api.rstrip('/')}/bot{token}/"
        self._client = client

    def __repr__(self) -> str:
        return f"<BotApi bot {self.bot_id}>"

    async def call(
        self,
        method: str,
        payload: dict[str, Any] | None = None,
        *,
        files: dict[str, tuple[str, bytes, str]] | None = None,
        seconds: float = 30.0,
    ) -> Any:
        """The `result` of `method` called with `payload` (a form with `files`, else JSON).

        Raises:
            BotApiError: Telegram refused it (or went on answering 429 `MAX_TRIES` times).
            BotApiUnreachable: no answer, or not the Bot API's.
        """
        for _ in range(MAX_TRIES):
            body = await self._post(method, payload or {}, files, seconds)
            if body.get("ok") is True:
                return body.get("result")
            code = int(body.get("error_code") or 0)
            description = str(body.get("description") or "")
            parameters = body.get("parameters")
            retry_after = parameters.get("retry_after") if isinstance(parameters, dict) else None
            if code != 429 or not isinstance(retry_after, int | float):
                raise BotApiError(method, code, description)
            wait = min(max(float(retry_after), 0.0), MAX_RETRY_AFTER)
            logger.warning("Telegram: %s is rate limited; retrying in %.0f s", method, wait)
            await anyio.sleep(wait)
        raise BotApiError(method, 429, "still rate limited")

    async def _post(
        self,
        method: str,
        payload: dict[str, Any],
        files: dict[str, tuple[str, bytes, str]] | None,
        seconds: float,
    ) -> dict[str, Any]:
        import httpx  # imported already: the bot's task made the client

        try:
            if files is None:
                response = await self._client.post(
                    self._base + method, json=payload, timeout=seconds
                )
            else:
                form = {key: str(value) for key, value in payload.items()}
                response = await self._client.post(
                    self._base + method, data=form, files=files, timeout=seconds
                )
            body = response.json()
        except (httpx.HTTPError, ValueError) as error:
            # `str(error)` of httpx may hold the URL, and so the token: only its kind is said.
            raise BotApiUnreachable(f"{method}: {type(error).__name__}") from None
        if not isinstance(body, dict):
            raise BotApiUnreachable(f"{method}: an answer that is not the Bot API's")
        return body
