"""The tokens that open a host, and who is behind each request.

A host is opened by its start-up token (the one `uq serve` prints, the admin `owner`; `check_token`
says what it may hold and `host_token` settles it at start-up), by its agents' token (the asker
`agents`, which `uq serve` prints as an `export UQ_URL=...` line: it can ask, never answer) and by
any number of named tokens made with `uq token add NAME --role person|asker|admin`, each with the
groups a person is in or the routes an asker's questions take (`roles.py`). A named token is 256
random bits; the store keeps only its SHA-256 (hashing is enough: the token is not a password anyone
could guess), so it is shown once, when it is made, and never again.

`Tokens` is a host's view of them: it authenticates each request (`authenticate`, given to the
security middleware), and reloads the tokens as soon as the store says they changed (another
process ran `uq token`; on PostgreSQL another node did). A revoked token is refused from then
on, and every WebSocket it opened is told to close (`on_revoke`): the app closes it with code
4401. It also records, at most once a minute per token, when each token was last used.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import math
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

import anyio

from user_questions._languages import LANGUAGES, language_of_tag
from user_questions._lifecycle.disposer import Disposer, nothing
from user_questions._lifecycle.lifetime import AsyncLifetime
from user_questions._lifecycle.listeners import Listeners
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import iso
from user_questions.host._reloader import Reloader
from user_questions.host.gate.durations import escalation_text
from user_questions.host.gate.fair_share import rate_text
from user_questions.host.gate.security import Identity
from user_questions.host.stores import (
    Escalation,
    Role,
    SettingStore,
    TokenChange,
    TokenRecord,
    TokenStore,
)

__all__ = [
    "NAME_PATTERN",
    "AGENTS",
    "ASKER_TOKEN_SETTING",
    "OWNER",
    "RELOAD_RETRY",
    "TOKEN_PATTERN",
    "TOKEN_SETTING",
    "TOUCH_INTERVAL",
    "Tokens",
    "add_token",
    "agents_token",
    "change_token",
    "check_grants",
    "check_name",
    "check_token",
    "hash_token",
    "host_token",
    "new_token",
    "parse_language",
    "revoke_token",
    "token_json",
]

logger = logging.getLogger("user_questions.host")

OWNER = "owner"
"""The admin the host's start-up token stands for; no named token may take this name."""
AGENTS = "agents"
"""The asker the host's agents' token stands for; no named token may take this name."""
ASKER_TOKEN_SETTING = "asker_token"
"""The store setting that keeps the agents' token."""
NAME_PATTERN = "1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or a digit"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
TOUCH_INTERVAL = 60.0
"""Seconds during which further uses of a token are not recorded again (its "last used")."""
RELOAD_RETRY = 1.0
"""Seconds before reloading the tokens again when the store could not be read."""
TOKEN_PATTERN = "8 to 512 characters from A-Z a-z 0-9 . _ ~ -"
"""What the host's start-up token may hold: it travels in URLs and a cookie."""
TOKEN_SETTING = "token"
"""The store setting that keeps the start-up token."""
_TOKEN_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-")


def check_token(token: str) -> str:
    """`token` if it can serve as the host's token.

    Raises:
        UserQuestionError: `BAD_TOKEN`, saying what a token may hold.
    """
    if not 8 <= len(token) <= 512 or not set(token) <= _TOKEN_CHARACTERS:
        raise UserQuestionError(f"a host token must be {TOKEN_PATTERN}", ErrorCode.BAD_TOKEN)
    return token


async def host_token(store: SettingStore, given: str | None = None) -> str:
    """The host's token: `given` (then kept in the store), else the stored one, else a new one.

    Raises:
        UserQuestionError: `BAD_TOKEN` when `given` cannot serve as a token.
    """
    if given is not None:
        await store.set_setting(TOKEN_SETTING, check_token(given))
        return given
    return await store.ensure_setting(TOKEN_SETTING, new_token())


async def agents_token(store: SettingStore) -> str:
    """The host's agents' token (the asker `agents`): the stored one, else a new one (kept)."""
    return await store.ensure_setting(ASKER_TOKEN_SETTING, new_token())


def new_token() -> str:
    """A new random secret of 256 bits, in base64url, that does not begin with `-`: tokens are
    given on command lines (`uq mcp --token TOKEN`), where a leading dash reads as an option."""
    while (token := secrets.token_urlsafe(32)).startswith("-"):
        pass
    return token


def hash_token(token: str) -> str:
    """The SHA-256 of `token`, in hexadecimal: what the store keeps of a named token."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(name: str) -> str:
    """`name` if it can name a token.

    Raises:
        UserQuestionError: `BAD_REQUEST`, saying what a name may hold, or that `owner` is taken.
    """
    if _NAME.fullmatch(name) is None:
        raise UserQuestionError(
            f"a token name must be {NAME_PATTERN}, got {json.dumps(name, ensure_ascii=False)}",
            ErrorCode.BAD_REQUEST,
        )
    if name == OWNER:
        raise UserQuestionError(
            f'"{OWNER}" is the host\'s start-up token (uq serve --token); choose another name',
            ErrorCode.BAD_REQUEST,
        )
    if name == AGENTS:
        raise UserQuestionError(
            f"\"{AGENTS}\" is the host's agents' token (uq serve prints it); choose another name",
            ErrorCode.BAD_REQUEST,
        )
    return name


def check_grants(
    role: Role, groups: Sequence[str], routes: Sequence[str], notify: Sequence[str]
) -> None:
    """Refuse groups, routes or notification URLs that the role cannot have, or that are
    malformed: groups and notifications are people's, routes askers'.

    Raises:
        UserQuestionError: `BAD_REQUEST` saying which and why.
    """
    if role is Role.ASKER and (groups or notify):
        raise UserQuestionError(
            "an asker is in no group and is notified of nothing; route its questions to "
            "people or groups with --route NAME or --route @GROUP",
            ErrorCode.BAD_REQUEST,
        )
    if role is not Role.ASKER and routes:
        raise UserQuestionError(
            f"only an asker's questions are routed; a {role} sees what is routed to them",
            ErrorCode.BAD_REQUEST,
        )
    for group in groups:
        _check_part("group", group)
    for route in routes:
        _check_part("route", route.removeprefix("@"))


def parse_language(given: str | None) -> str | None:
    """A person's language as `--lang` and `"lang"` write it: a catalog's code or a tag that
    names one (`ko`, `ko-KR`, `zh-Hans`, `zh_CN`, `ja`, `en`), or `none` ("" here) for the
    host's; `None` (not given) stays `None`.

    Raises:
        UserQuestionError: `UNSUPPORTED_LANGUAGE` for a language the catalogs do not hold.
    """
    if given is None:
        return None
    if given.strip().lower() in ("", "none"):
        return ""
    language = language_of_tag(given)
    if language is None:
        held = ", ".join(LANGUAGES)
        raise UserQuestionError(
            f"the language {json.dumps(given, ensure_ascii=False)} has no catalog; "
            f"use one of {held}, or none for the host's",
            ErrorCode.UNSUPPORTED_LANGUAGE,
        )
    return language


def _check_part(what: str, value: str) -> None:
    if _NAME.fullmatch(value) is None:
        shown = json.dumps(value, ensure_ascii=False)
        raise UserQuestionError(
            f"a {what} must be {NAME_PATTERN} (a route: a name, or @ and a group), got {shown}",
            ErrorCode.BAD_REQUEST,
        )


async def add_token(store: TokenStore, name: str, grants: TokenChange | None = None) -> str:
    """Make a new token called `name` that may do what `grants` says (a person's, unless it
    says otherwise) and return it: the only time it is ever seen in clear. (A person's `notify`
    URLs are checked by the caller, who knows the notifiers.)

    Raises:
        UserQuestionError: `BAD_REQUEST` for a bad name, group or route, or one the role cannot
            have; `TOKEN_EXISTS` when an active token has the name already.
    """
    grants = grants or TokenChange()
    role = grants.role or Role.PERSON
    groups, routes, notify = (tuple(given or ()) for given in _lists(grants))
    check_grants(role, groups, routes, notify)
    _check_asker_only(role, grants)
    token = new_token()
    record = TokenRecord(
        check_name(name),
        hash_token(token),
        datetime.now(UTC),
        role=role,
        groups=groups,
        routes=routes,
        notify=notify,
        deadline=grants.deadline or None,  # 0 (`none`) is no deadline
        escalate=_in_order(grants.escalate or ()),
        remind=grants.remind or None,
        max_pending=grants.max_pending or None,  # 0 (`default`) is the host's default
        rate=grants.rate if grants.rate is not None and grants.rate.per_second else None,
        lang=grants.lang or None,  # "" (`none`) is the host's language
        approvals=grants.approvals or 1,
    )
    await store.add_token(record)
    return token


async def change_token(store: TokenStore, name: str, change: TokenChange) -> TokenRecord:
    """Change what the token called `name` may do (`deadline`, `escalate`, `remind`,
    `max_pending`, `rate` and `approvals`: an asker's only; each field `change` gives replaces
    the one it has); every running host applies it at once (its open sockets are closed, and
    reconnect with the new permissions).

    Raises:
        UserQuestionError: `NOT_FOUND` when no active token has that name; `BAD_REQUEST` as
            `check_grants` (a role changed to asker drops the groups and notifications it can
            no longer have, and one changed from asker its routes, unless they are given).
    """
    current = next((t for t in await store.tokens() if t.name == name and t.active), None)
    if current is None:
        raise _no_token(name)
    role = current.role if change.role is None else change.role
    kept_groups = () if role is Role.ASKER else current.groups
    kept_notify = () if role is Role.ASKER else current.notify
    kept_routes = current.routes if role is Role.ASKER else ()
    groups, routes, notify = (
        kept if given is None else tuple(given)
        for kept, given in zip((kept_groups, kept_routes, kept_notify), _lists(change), strict=True)
    )
    check_grants(role, groups, routes, notify)
    _check_asker_only(role, change)
    escalate = None if change.escalate is None else _in_order(change.escalate)
    changed = await store.change_token(
        name,
        replace(change, role=role, groups=groups, routes=routes, notify=notify, escalate=escalate),
    )
    if changed is None:  # revoked meanwhile
        raise _no_token(name)
    return changed


async def revoke_token(store: TokenStore, name: str) -> TokenRecord:
    """Revoke the token called `name`; running hosts refuse it at once.

    Raises:
        UserQuestionError: `NOT_FOUND` when no active token has that name.
    """
    revoked = await store.revoke_token(name)
    if revoked is None:
        raise _no_token(name)
    return revoked


def token_json(token: TokenRecord) -> dict[str, object]:
    """A token as JSON (`uq token list --json`, `GET /api/tokens`): camelCase, times ISO 8601
    UTC, empty and unset fields absent; a notification URL only by its scheme (the rest may be
    a secret)."""
    shown: dict[str, object] = {"name": token.name, "role": token.role}
    for key, values in (("groups", token.groups), ("routes", token.routes)):
        if values:
            shown[key] = list(values)
    if token.notify:
        shown["notify"] = [url.partition("://")[0] for url in token.notify]
    if token.deadline is not None:
        shown["deadline"] = token.deadline
    if token.escalate:
        shown["escalate"] = [escalation_text(step) for step in token.escalate]
    if token.remind is not None:
        shown["remind"] = token.remind
    if token.max_pending is not None:
        shown["maxPending"] = token.max_pending
    if token.rate is not None:
        shown["rate"] = rate_text(token.rate)
    if token.lang is not None:
        shown["lang"] = token.lang
    if token.approvals > 1:
        shown["approvals"] = token.approvals
    times = {
        "createdAt": token.created_at,
        "lastUsedAt": token.last_used_at,
        "revokedAt": token.revoked_at,
    }
    return shown | {key: iso(at) for key, at in times.items() if at is not None}


def _check_asker_only(role: Role, change: TokenChange) -> None:
    """Refuse a deadline, escalation steps, reminders, a pending cap or a rate for a role that
    is not an asker's (a person's or an admin's requests are neither timed nor held to a share),
    and an escalation target that is not a name or `@group`.

    Raises:
        UserQuestionError: `BAD_REQUEST` saying which.
    """
    escalate = change.escalate or ()
    given = [
        what
        for what, value in (
            ("a deadline", change.deadline),
            ("escalation", escalate),
            ("a reminder period", change.remind),
            ("a pending cap", change.max_pending),
            ("a rate", change.rate is not None and change.rate.per_second),
            ("a quorum of approvals", (change.approvals or 1) > 1),
        )
        if value
    ]
    if given and role is not Role.ASKER:
        raise UserQuestionError(
            f"{given[0]} is an asker's (its requests are timed and held to a share), "
            f"not a {role}'s",
            ErrorCode.BAD_REQUEST,
        )
    for step in escalate:
        _check_part("escalation target", step.to.removeprefix("@"))


def _lists(
    change: TokenChange,
) -> tuple[Sequence[str] | None, Sequence[str] | None, Sequence[str] | None]:
    """A change's groups, routes and notification URLs, in that order."""
    return change.groups, change.routes, change.notify


def _in_order(steps: Sequence[Escalation]) -> tuple[Escalation, ...]:
    """Escalation steps in the order they fire (each fires after the one before)."""
    return tuple(sorted(steps, key=lambda step: step.after))


def _no_token(name: str) -> UserQuestionError:
    return UserQuestionError(
        f"no active token is called {json.dumps(name, ensure_ascii=False)} "
        "(uq token list shows them)",
        ErrorCode.NOT_FOUND,
    )


class Tokens(AsyncLifetime):
    """Who may use a host: its start-up token, its agents' token and the store's named tokens.

    Use as `async with Tokens(store, token, agents_token) as tokens`: it loads the tokens, then
    follows their changes until it is closed.
    """

    def __init__(self, store: TokenStore, owner_token: str, asker_token: str) -> None:
        self.store = store
        self._owner_token = owner_token.encode()
        self._owner = Identity(OWNER, hash_token(owner_token), Role.ADMIN)
        self._asker_token = asker_token.encode()
        self._agents = Identity(AGENTS, hash_token(asker_token), Role.ASKER)
        self._identities: dict[str, Identity] = {}
        """Active named tokens: who each is, by the token's hash."""
        self._notify: dict[str, tuple[str, ...]] = {}
        """The notification URLs of each person (or admin) who has some, by name."""
        self._listeners: Listeners[[]] = Listeners(logger, "a listener of the tokens raised")
        self._watchers: dict[Identity, dict[object, Callable[[], None]]] = {}
        """The callbacks of the sockets each token opened, by a key of each one's own: removed
        in constant time when its socket closes, however many share the token."""
        self._touched: dict[str, float] = {}
        self._reloader = Reloader(self._load, "the tokens", RELOAD_RETRY)
        self._touches_in, self._touches = anyio.create_memory_object_stream[str](math.inf)

    def __repr__(self) -> str:
        return f"<Tokens owner, agents and {len(self._identities)} named tokens>"

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        stack.callback(self._touches.close)
        stack.callback(self._touches_in.close)
        stack.callback(self.store.on_tokens_change(self._reloader.changed))
        await self._load()
        following = await stack.enter_async_context(anyio.create_task_group())
        following.start_soon(self._reloader.follow)
        following.start_soon(self._record_uses)
        stack.callback(following.cancel_scope.cancel)

    def authenticate(self, token: str) -> Identity | None:
        """The person `token` belongs to, or `None` when the host does not accept it.

        The start-up token is compared in constant time; a named token is looked up by its
        SHA-256, so what a timing could reveal is a hash, never the token.
        """
        given = token.encode()
        if hmac.compare_digest(given, self._owner_token):
            return self._owner
        if hmac.compare_digest(given, self._asker_token):
            return self._agents
        identity = self._identities.get(hash_token(token))
        if identity is None:
            return None
        self._note_use(identity.name)
        return identity

    def named(self, name: str) -> Identity | None:
        """Who the active token called `name` is now (`owner` and `agents` included)."""
        for identity in (self._owner, self._agents, *self._identities.values()):
            if identity.name == name:
                return identity
        return None

    @property
    def notified(self) -> dict[str, tuple[str, ...]]:
        """The notification URLs of every active person and admin who has some, by name."""
        return dict(self._notify)

    def on_change(self, listener: Callable[[], None]) -> Disposer:
        """Call `listener` after each reload of the tokens (one was added, revoked or
        changed, here or by another process); returns a remover."""
        return self._listeners.add(listener)

    def accepts(self, identity: Identity) -> bool:
        """Whether the token behind `identity` still opens the host with the same role, groups
        and routes: a change counts as a revocation of what the identity was."""
        return identity in (self._owner, self._agents) or (
            self._identities.get(identity.key) == identity
        )

    def on_revoke(self, identity: Identity, callback: Callable[[], None]) -> Disposer:
        """Call `callback` once the token behind `identity` is revoked or what it may do is
        changed (at once if it already is); returns a remover."""
        if not self.accepts(identity):
            callback()
            return nothing
        callbacks = self._watchers.setdefault(identity, {})
        key = object()
        callbacks[key] = callback

        def remove() -> None:
            callbacks.pop(key, None)
            if not callbacks and self._watchers.get(identity) is callbacks:
                del self._watchers[identity]

        return remove

    async def reload(self) -> None:
        """Read the tokens again now: the writer of a change sees it in its next request,
        without waiting for the store's notice of it."""
        await self._load()

    async def _load(self) -> None:
        tokens = await self.store.tokens()
        self._identities = {
            token.token_hash: Identity(
                token.name,
                token.token_hash,
                token.role,
                token.groups,
                token.routes,
                token.deadline,
                token.escalate,
                token.remind,
                token.max_pending,
                token.rate,
                token.lang,
                token.approvals,
            )
            for token in tokens
            if token.active
        }
        self._notify = {
            token.name: token.notify
            for token in tokens
            if token.active and token.notify and token.role is not Role.ASKER
        }
        self._listeners.tell()
        gone = [identity for identity in self._watchers if not self.accepts(identity)]
        for identity in gone:
            # A socket closed by its callback forgets the callback as it goes.
            for callback in list(self._watchers.pop(identity).values()):
                try:
                    callback()
                except Exception:
                    logger.exception("closing the connections of a revoked token raised")

    def _note_use(self, name: str) -> None:
        now = time.monotonic()
        if now - self._touched.get(name, -math.inf) >= TOUCH_INTERVAL:
            self._touched[name] = now
            self._touches_in.send_nowait(name)

    async def _record_uses(self) -> None:
        async for name in self._touches:
            try:
                await self.store.touch_token(name)
            except UserQuestionError as error:
                logger.warning("could not record a use of the token %s: %s", name, error)
