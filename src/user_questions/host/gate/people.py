"""People: the tokens that open a host, and who is behind each request.

A host is opened by its start-up token (the one `uq serve` prints, recorded as the person `owner`;
`check_token` says what it may hold and `host_token` settles it at start-up) and by any number of
named tokens made with `uq token add NAME`. A named token is 256 random bits; the store keeps only
its SHA-256 (hashing is enough: the token is not a password anyone could guess), so it is shown
once, when it is made, and never again.

`People` is a host's view of them: it authenticates each request (`authenticate`, given to the
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
from collections.abc import Callable
from datetime import UTC, datetime

import anyio

from user_questions._disposer import Disposer, nothing
from user_questions._lifetime import AsyncLifetime
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.security import Identity
from user_questions.host.stores import SettingStore, TokenRecord, TokenStore

__all__ = [
    "NAME_PATTERN",
    "OWNER",
    "RELOAD_RETRY",
    "TOKEN_PATTERN",
    "TOKEN_SETTING",
    "TOUCH_INTERVAL",
    "People",
    "add_person",
    "check_name",
    "check_token",
    "hash_token",
    "host_token",
    "new_token",
    "revoke_person",
]

logger = logging.getLogger("user_questions.host")

OWNER = "owner"
"""The person the host's start-up token stands for; no named token may take this name."""
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
    return name


async def add_person(store: TokenStore, name: str) -> str:
    """Make a new token called `name` and return it: the only time it is ever seen in clear.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a bad name, `TOKEN_EXISTS` when an active token
            has it already.
    """
    token = new_token()
    await store.add_token(TokenRecord(check_name(name), hash_token(token), datetime.now(UTC)))
    return token


async def revoke_person(store: TokenStore, name: str) -> TokenRecord:
    """Revoke the token called `name`; running hosts refuse it at once.

    Raises:
        UserQuestionError: `NOT_FOUND` when no active token has that name.
    """
    revoked = await store.revoke_token(name)
    if revoked is None:
        raise UserQuestionError(
            f"no active token is called {json.dumps(name, ensure_ascii=False)} "
            "(uq token list shows them)",
            ErrorCode.NOT_FOUND,
        )
    return revoked


class People(AsyncLifetime):
    """Who may use a host: its start-up token and the store's named tokens.

    Use as `async with People(store, token) as people`: it loads the tokens, then follows their
    changes until it is closed.
    """

    def __init__(self, store: TokenStore, owner_token: str) -> None:
        self.store = store
        self._owner_token = owner_token.encode()
        self._owner = Identity(OWNER, hash_token(owner_token))
        self._names: dict[str, str] = {}
        """Active named tokens: the name by the token's hash."""
        self._watchers: dict[str, list[Callable[[], None]]] = {}
        self._touched: dict[str, float] = {}
        self._changed = anyio.Event()
        self._touches_in, self._touches = anyio.create_memory_object_stream[str](math.inf)

    def __repr__(self) -> str:
        return f"<People owner and {len(self._names)} named tokens>"

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        stack.callback(self._touches.close)
        stack.callback(self._touches_in.close)
        stack.callback(self.store.on_tokens_change(self._tokens_changed))
        await self._load()
        following = await stack.enter_async_context(anyio.create_task_group())
        following.start_soon(self._follow)
        following.start_soon(self._record_uses)
        stack.callback(following.cancel_scope.cancel)

    def authenticate(self, token: str) -> Identity | None:
        """The person `token` belongs to, or `None` when the host does not accept it.

        The start-up token is compared in constant time; a named token is looked up by its
        SHA-256, so what a timing could reveal is a hash, never the token.
        """
        if hmac.compare_digest(token.encode(), self._owner_token):
            return self._owner
        key = hash_token(token)
        name = self._names.get(key)
        if name is None:
            return None
        self._note_use(name)
        return Identity(name, key)

    def accepts(self, identity: Identity) -> bool:
        """Whether the token behind `identity` still opens the host."""
        return identity == self._owner or self._names.get(identity.key) == identity.name

    def on_revoke(self, identity: Identity, callback: Callable[[], None]) -> Disposer:
        """Call `callback` once the token behind `identity` is revoked (at once if it already
        is); returns a remover."""
        if not self.accepts(identity):
            callback()
            return nothing
        callbacks = self._watchers.setdefault(identity.key, [])
        callbacks.append(callback)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                callbacks.remove(callback)
            if not callbacks and self._watchers.get(identity.key) is callbacks:
                del self._watchers[identity.key]

        return remove

    async def _load(self) -> None:
        tokens = await self.store.tokens()
        self._names = {token.token_hash: token.name for token in tokens if token.active}
        gone = [key for key in self._watchers if key != self._owner.key and key not in self._names]
        for key in gone:
            for callback in self._watchers.pop(key):
                try:
                    callback()
                except Exception:
                    logger.exception("closing the connections of a revoked token raised")

    def _tokens_changed(self) -> None:
        self._changed.set()

    async def _follow(self) -> None:
        """Reload whenever the store says the tokens changed; retry while it cannot be read."""
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            try:
                await self._load()
            except UserQuestionError as error:
                logger.warning("could not reload the tokens: %s", error)
                await anyio.sleep(RELOAD_RETRY)
                self._changed.set()

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
