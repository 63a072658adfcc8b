"""One-tap answer links: signed capability URLs that answer one question with one option.

A notification about a request of one single-select question carries a link per option (for a plan
review, its approve option only); opening one shows the question and that option, and sending it
answers as the page would (`host/notify/link_pages.py`). The link itself is the permission: it needs
no token, so it must say exactly what it allows and nothing more.

A link is `<host address>a/<grant>.<signature>`:

- `grant` is the URL-safe base64 (unpadded) of the JSON array
  `[1, rpcId, question index, option index, expires, channel]`: the format version, the
  request, the question and option (indexes into the stored request), the expiry (Unix
  seconds) and the notification channel it was sent through (`ntfy`, `mailto`, ...); a link
  in a person's own notification is `[2, ..., channel, person]`, and answers as that person,
  only while their token may see and answer the request;
- `signature` is the URL-safe base64 of the HMAC-SHA256 of `grant`'s text under the host's
  answer-link key, a random secret kept in the store (`answer-link-secret`) and used for
  nothing else (not the webhook secret, which receivers know).

`AnswerLinks.verify` checks the length, the signature (in constant time) and the expiry before
anything else, so a forged or altered link costs the host one HMAC and never a store read. A
link stops working when it expires, and when its request is settled, whoever settled it: each
request is answered once, so each link is used at most once. docs/notify.md has what a leaked
link can and cannot do.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import SettingStore
from user_questions.presentation import plan_review_of
from user_questions.types import AskUserQuestionItem

__all__ = [
    "DEFAULT_LIFETIME",
    "LINK_SECRET_SETTING",
    "MAX_LIFETIME",
    "MAX_LINK_CHARS",
    "MIN_LIFETIME",
    "AnswerLinks",
    "Grant",
    "answer_link_secret",
    "answerable_options",
    "check_channel",
    "lifetime",
]

DEFAULT_LIFETIME = timedelta(hours=24)
"""How long an answer link works unless `--answer-links` says otherwise."""
MIN_LIFETIME = timedelta(minutes=1)
MAX_LIFETIME = timedelta(days=30)
"""The longest lifetime `--answer-links` accepts."""
MAX_LINK_CHARS = 2048
"""Characters in the part of an answer link after `a/`; a longer one is refused unread."""
LINK_SECRET_SETTING = "answer-link-secret"
"""The store setting that keeps the key answer links are signed with."""

_VERSION = 1
_PERSONAL = 2
"""The format of a link that answers as a person."""
_CHANNEL = re.compile(r"[a-z][a-z0-9+.-]{0,31}")
_LIFETIME = re.compile(r"(\d{1,6})([mhd])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}


@dataclass(frozen=True, slots=True)
class Grant:
    """What one answer link allows: answering question `question` of request `rpc_id` with its
    option `option`, until `expires` (Unix seconds); sent through `channel`."""

    rpc_id: str
    question: int
    option: int
    expires: int
    channel: str
    person: str | None = None
    """Whose notification carried it, when a person's own did: it answers as them."""


class AnswerLinks:
    """Signs and checks answer links with the key `secret`; links made live for `lifetime`."""

    def __init__(self, secret: str, *, lifetime: timedelta = DEFAULT_LIFETIME) -> None:
        self._key = hashlib.sha256(b"user-questions answer link\0" + secret.encode()).digest()
        self.lifetime = lifetime

    def __repr__(self) -> str:
        return f"<AnswerLinks lifetime={self.lifetime}>"

    def grant(
        self, rpc_id: str, question: int, option: int, channel: str, person: str | None = None
    ) -> Grant:
        """A grant for this option, expiring `lifetime` from now (for `person`'s link)."""
        expires = int(time.time() + self.lifetime.total_seconds())
        return Grant(rpc_id, question, option, expires, check_channel(channel), person)

    def sign(self, grant: Grant) -> str:
        """The link's part after `a/`: the grant and its signature."""
        version = _VERSION if grant.person is None else _PERSONAL
        fields = [version, grant.rpc_id, grant.question, grant.option, grant.expires]
        fields += [grant.channel, *([] if grant.person is None else [grant.person])]
        text = json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
        encoded = _encode(text.encode())
        return f"{encoded}.{self._signature(encoded)}"

    def verify(self, link: str, *, now: float | None = None) -> Grant | None:
        """The grant of a link this host signed and that has not expired; `None` for anything
        else (altered, forged, expired, or not a link at all), without saying which."""
        if len(link) > MAX_LINK_CHARS or not link.isascii():
            return None
        encoded, _, signature = link.partition(".")
        if not hmac.compare_digest(self._signature(encoded), signature):
            return None
        grant = _decoded(encoded)
        if grant is None or grant.expires <= (time.time() if now is None else now):
            return None
        return grant

    def _signature(self, encoded: str) -> str:
        return _encode(hmac.new(self._key, encoded.encode(), "sha256").digest())


def answerable_options(questions: Sequence[AskUserQuestionItem]) -> list[int]:
    """The indexes of the options that get an answer link: every option of a request's only
    question when it is single-select, only the approve option of a plan review, else none."""
    if len(questions) != 1:
        return []
    question = questions[0]
    options = question.options or []
    if question.multi_select:
        return []
    review = plan_review_of(questions)
    if review is not None:
        return [index for index, option in enumerate(options) if option.label == review["approve"]]
    if question.intent is not None:
        return []  # another kind of review: only a surface that knows it may answer it
    return list(range(len(options)))


def check_channel(channel: str) -> str:
    """`channel` if it can name a notification channel: a URL scheme, such as `ntfy`.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` otherwise.
    """
    if _CHANNEL.fullmatch(channel) is None:
        raise UserQuestionError(
            f"a notification channel is a URL scheme such as ntfy, got {channel[:40]!r}",
            ErrorCode.BAD_NOTIFIER,
        )
    return channel


def lifetime(text: str) -> timedelta | None:
    """Read `--answer-links`: `off` (`None`), `on` (`DEFAULT_LIFETIME`), or a lifetime such as
    `30m`, `12h` or `7d`, from `MIN_LIFETIME` to `MAX_LIFETIME`.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` for anything else.
    """
    value = text.strip().lower()
    if value == "off":
        return None
    if value == "on":
        return DEFAULT_LIFETIME
    match = _LIFETIME.fullmatch(value)
    if match is not None:
        span = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
        if MIN_LIFETIME <= span <= MAX_LIFETIME:
            return span
    raise UserQuestionError(
        f"--answer-links takes off, on, or a lifetime from 1m to 30d such as 24h, got {text!r}",
        ErrorCode.BAD_NOTIFIER,
    )


async def answer_link_secret(store: SettingStore) -> str:
    """The key answer links are signed with: the stored one, else a new one (kept)."""
    return await store.ensure_setting(LINK_SECRET_SETTING, secrets.token_urlsafe(32))


def _encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _decoded(encoded: str) -> Grant | None:
    """The grant in a signed link; `None` if it is not one this version makes."""
    try:
        data = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (ValueError, binascii.Error):
        return None
    if not isinstance(data, list) or (data[:1], len(data)) not in (
        ([_VERSION], 6),
        ([_PERSONAL], 7),
    ):
        return None
    rpc_id, question, option, expires, channel, *person = data[1:]
    whole = all(type(number) is int for number in (question, option, expires))
    if not (whole and isinstance(rpc_id, str) and isinstance(channel, str)):
        return None
    if person and not isinstance(person[0], str):
        return None
    return Grant(rpc_id, question, option, expires, channel, person[0] if person else None)
