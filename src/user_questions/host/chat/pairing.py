"""Pairing: a one-time code that makes whoever sends it to a bot answer as a person.

`uq chat pair telegram alice` (beside the store, as `uq token` works) keeps a code valid for
`CODE_LIFETIME`; alice sends `/start <code>` to the bot (the `t.me` link does it for her) and
her Telegram user becomes alice: every tap and reply of hers is checked against that pairing,
never against what a message says. Only people and admins pair: an asker's token never answers.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.tokens import OWNER
from user_questions.host.stores import Role, Store

__all__ = [
    "CODE_LIFETIME",
    "CODE_PATTERN",
    "SERVICES",
    "USERNAME_SETTING",
    "PairCode",
    "check_code",
    "new_pair_code",
    "start_link",
]

SERVICES = ("telegram", "slack")
CODE_LIFETIME = timedelta(minutes=10)
CODE_PATTERN = "1 to 64 characters of A-Z a-z 0-9 _ -"
_CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")
USERNAME_SETTING = "chat.telegram.username"
"""The store setting keeping the bot's username, as the running host learned it from getMe."""


@dataclass(frozen=True, slots=True)
class PairCode:
    """A code made for a person, and where to send it."""

    service: str
    person: str
    code: str
    expires_at: datetime
    link: str | None
    """Telegram: the bot's `t.me` link that sends `/start <code>`; `None` before a host has
    learned the bot's username (or for Slack)."""


def check_code(text: str) -> str | None:
    """`text` if it can be a pairing code (`CODE_PATTERN`), else `None`."""
    return text if _CODE.fullmatch(text) else None


def start_link(username: str, code: str) -> str:
    """The link that opens the bot and sends it `/start <code>`."""
    return f"https://t.me/{username}?start={code}"


async def new_pair_code(store: Store, service: str, person: str) -> PairCode:
    """Keep a new code pairing `service`'s next sender of it with `person`.

    Raises:
        UserQuestionError: `BAD_REQUEST` for an unknown service, `NOT_FOUND` for a person with
            no active token, `FORBIDDEN` for an asker (it can ask, never answer).
    """
    if service not in SERVICES:
        raise UserQuestionError(
            f"unknown chat service {service!r}: use one of {', '.join(SERVICES)}",
            ErrorCode.BAD_REQUEST,
        )
    if person != OWNER:
        token = next((t for t in await store.tokens() if t.name == person and t.active), None)
        if token is None:
            raise UserQuestionError(
                f"nobody is called {person!r}: add them first (uq token add {person})",
                ErrorCode.NOT_FOUND,
            )
        if token.role is Role.ASKER:
            raise UserQuestionError(
                f"{person} is an asker: it can ask but never answer, so it cannot be paired",
                ErrorCode.FORBIDDEN,
            )
    code = secrets.token_urlsafe(12)  # 96 bits, of the code's characters
    expires_at = datetime.now(UTC) + CODE_LIFETIME
    await store.add_pair_code(service, code, person, expires_at)
    username = await store.setting(USERNAME_SETTING) if service == "telegram" else None
    link = None if username is None else start_link(username, code)
    return PairCode(service, person, code, expires_at, link)
