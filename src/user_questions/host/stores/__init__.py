"""The `Store` protocol, the records it keeps, and `open_store(url)`.

Level 8: imports `types`, `frames` and `errors`. The store is the source of truth of a host: a
request is committed to it before any page sees it, and its outcome before its asker is
released. The hub keeps only a cache of what is pending, rebuilt from the store at start-up and
whenever the store says something changed.

Backends are imported by URL scheme on first use, the way anyio loads its backends, so a host on
SQLite never imports psycopg: a path or `sqlite:///path` is `SQLiteStore`; `postgresql://...`
is `PostgresStore`, which several hosts share (docs/multinode.md).

Besides the pending requests, a store keeps every request's whole life (asked by whom, first
shown when, settled how, by whom, through which surface: the answer records), answers history
queries over the settled ones, and holds the named tokens of the people who may use the host
(docs/people-and-history.md).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Literal, Protocol, Self

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = [
    "ChangeListener",
    "HistoryPage",
    "HistoryQuery",
    "NewQuestion",
    "QuestionState",
    "SettledState",
    "Settlement",
    "Store",
    "StoredQuestion",
    "TokenRecord",
    "TokensListener",
    "default_store_path",
    "open_store",
]

QuestionState = Literal["pending", "answered", "cancelled", "withdrawn", "timed-out"]
"""`pending` until a human answers (`answered`) or dismisses it (`cancelled`), or its asker
withdraws it: `timed-out` when its own timeout ran out, `withdrawn` for any other abort or
cancellation."""
SettledState = Literal["answered", "cancelled", "withdrawn", "timed-out"]
"""The state of a request that is no longer pending."""

ChangeListener = Callable[[str | None], None]
"""Told that the request with this rpcId may have changed, or (`None`) that anything may have."""
TokensListener = Callable[[], None]
"""Told that the named tokens may have changed (one was added or revoked)."""


@dataclass(frozen=True, slots=True)
class NewQuestion:
    """A request as an asker submits it."""

    rpc_id: str
    session_id: str
    questions: Sequence[AskUserQuestionItem]
    asked_at: datetime
    """When the request was first submitted (UTC); kept by the store on re-submission."""
    asked_by: str | None = None
    """The person whose token the asker presented, when it asked over the network."""
    shown_at: datetime | None = None
    """When it was handed to the pages, if some were connected as it was asked: recorded with
    the request, so that the common case costs no second write."""


@dataclass(frozen=True, slots=True)
class Settlement:
    """How a pending request ends."""

    outcome: SettledState
    answer: AskUserQuestionAnswer | None = None
    """The checked answer, when the outcome is `answered`."""
    via: str = ""
    """The surface that settled it: `web` (a page's socket), `terminal` (`uq answer`), `api`
    (any other HTTP client), `asker` (withdrawn by its asker), `host` (its in-process asker)."""
    by: str | None = None
    """The person who settled it: the name of the token presented (`owner` for the host's
    start-up token); `None` when no token was involved (an in-process asker)."""


@dataclass(frozen=True, slots=True)
class StoredQuestion:
    """A request as the store holds it."""

    rpc_id: str
    session_id: str
    questions: tuple[AskUserQuestionItem, ...]
    asked_at: datetime
    state: QuestionState
    answer: AskUserQuestionAnswer | None = None
    settled_at: datetime | None = None
    settled_via: str | None = None
    asked_by: str | None = None
    shown_at: datetime | None = None
    """When a host first handed it to a page (or listed it through `GET /api/pending`)."""
    settled_by: str | None = None

    @property
    def pending(self) -> bool:
        """Whether nobody has answered, dismissed or withdrawn it yet."""
        return self.state == "pending"


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """A person's named token, as the store keeps it: the token itself is never stored."""

    name: str
    token_hash: str
    """The SHA-256 of the token, in hexadecimal."""
    created_at: datetime
    last_used_at: datetime | None = None
    """Approximate: a host records a use at most once a minute per token."""
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        """Whether the token still opens the host."""
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """Which settled requests to list, newest settled first; every filter given must match."""

    session: str | None = None
    """Only this session's requests."""
    state: SettledState | None = None
    """Only requests that ended this way."""
    by: str | None = None
    """Only requests settled by this person."""
    terms: tuple[str, ...] = ()
    """Casefolded words that must all occur in a request's text: its questions' headers, texts,
    details, option labels and descriptions, and the custom text of its answer."""
    before: str | None = None
    """A cursor (`HistoryPage.next`): only requests settled before the last one of that page."""
    limit: int = 50


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """One page of history."""

    records: list[StoredQuestion]
    next: str | None
    """The cursor of the following page; `None` when this is the last one. A cursor stays
    valid: requests settled later never shift the pages after it."""


class Store(Protocol):
    """Durable storage of a host's requests and settings.

    A store is opened with `async with`, which connects, creates or migrates the schema (it has
    a version number) and closes again. Every method that writes has committed when it returns.
    A store over the network raises `UserQuestionError` with `STORE_UNAVAILABLE` when it cannot
    reach its database (at start-up too), and reconnects by itself on a later call.
    Settling is a conditional update (pending -> settled in one statement), never a read then a
    write, so when two hosts or two pages answer at once exactly one wins.

    A store shared by several hosts tells each of them about writes made by the others through
    `on_change` (PostgreSQL: LISTEN/NOTIFY), and says `None` after it reconnects, because a
    notification may have been lost meanwhile: the hub then re-reads everything. It also says
    `None` once to a listener that has just registered, so nothing written between the hub's
    first read and its registration is missed. Listeners are called on the event loop and must
    not block. A store used by one host alone may never call them.
    """

    url: str
    """Where the store lives, fit to print (no password)."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def setting(self, key: str, default: str) -> str:
        """The value of `key`, storing `default` first when there is none (atomically)."""
        ...

    async def set_setting(self, key: str, value: str) -> None:
        """Store `value` as `key`, replacing any previous value."""
        ...

    async def submit(self, question: NewQuestion) -> tuple[StoredQuestion, bool]:
        """Store `question` unless its rpcId exists; return the stored record and whether this
        call created it. Submitting an existing rpcId changes nothing (idempotent re-attach)."""
        ...

    async def settle(self, rpc_id: str, settlement: Settlement) -> StoredQuestion | None:
        """Settle the request if it is still pending; the settled record when this call won,
        `None` when it was not pending (already settled, or unknown)."""
        ...

    async def get(self, rpc_id: str) -> StoredQuestion | None:
        """The request with this rpcId, pending or settled."""
        ...

    async def pending(self) -> list[StoredQuestion]:
        """Every pending request, oldest first."""
        ...

    def on_change(self, listener: ChangeListener) -> Callable[[], None]:
        """Call `listener` when another writer may have changed a request; returns a remover."""
        ...

    # -- answer records and history -------------------------------------------------------------

    async def mark_shown(self, rpc_ids: Sequence[str]) -> None:
        """Record that these requests were shown now; one shown before keeps its first time."""
        ...

    async def history(self, query: HistoryQuery) -> HistoryPage:
        """Settled requests matching `query`, newest settled first (ties: newest asked first).

        Raises:
            UserQuestionError: `BAD_REQUEST` for a cursor this store did not make.
        """
        ...

    async def purge(self, settled_before: datetime) -> int:
        """Delete the requests settled before `settled_before`; never a pending one. Returns how
        many were deleted."""
        ...

    # -- people -----------------------------------------------------------------------------------

    async def tokens(self) -> list[TokenRecord]:
        """Every named token, revoked ones included, by name."""
        ...

    async def add_token(self, token: TokenRecord) -> None:
        """Store a new named token; a revoked token of the same name is replaced.

        Raises:
            UserQuestionError: `TOKEN_EXISTS` when an active token has that name.
        """
        ...

    async def revoke_token(self, name: str) -> TokenRecord | None:
        """Revoke the active token called `name`; the revoked record, `None` if there was none."""
        ...

    async def touch_token(self, name: str) -> None:
        """Record that the token called `name` was used just now."""
        ...

    def on_tokens_change(self, listener: TokensListener) -> Callable[[], None]:
        """Call `listener` soon after any process adds or revokes a token; returns a remover.

        Only a store opened as a host's (`open_store(url, host=True)`) follows other processes'
        changes; every store tells its listeners about its own.
        """
        ...


_BACKENDS = {
    "sqlite": ("user_questions.host.stores.sqlite", "SQLiteStore", "web"),
    "postgresql": ("user_questions.host.stores.postgres", "PostgresStore", "postgres"),
    "postgres": ("user_questions.host.stores.postgres", "PostgresStore", "postgres"),
}


def default_store_path() -> Path:
    """`$XDG_STATE_HOME/user-questions/host.db`, by default `~/.local/state/...`."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "user-questions" / "host.db"


def open_store(url: str | os.PathLike[str], *, host: bool = True) -> Store:
    """The store at `url`, not yet opened: enter it with `async with`.

    A path, or `sqlite:///absolute/path` (`sqlite://relative/path`), is a SQLite file;
    `postgresql://...` (or `postgres://...`) a PostgreSQL database (the `postgres` extra).

    `host=True` opens it for a host: a SQLite file is locked against a second host and watched
    for other processes' token changes; PostgreSQL listens for the other nodes' writes.
    `host=False` is for commands (`uq token`, `uq history`) that read or change a store beside
    the host running on it: no lock, no listening, and a SQLite file must exist already.

    Raises:
        UserQuestionError: `BAD_STORE` for an unknown scheme or a backend that is not installed.
    """
    text = os.fspath(url)
    scheme, sep, rest = text.partition("://")
    if not sep or len(scheme) < 2:  # a plain path (a Windows drive letter is not a scheme)
        scheme, rest = "sqlite", text
    backend = _BACKENDS.get(scheme.lower())
    if backend is None:
        known = ", ".join(f"{name}://" for name in _BACKENDS)
        raise UserQuestionError(
            f"unknown store {text!r}: give a file path or a URL starting with {known}",
            ErrorCode.BAD_STORE,
        )
    module_name, class_name, extra = backend
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UserQuestionError(
            f"the {scheme} store is not available: {error}; pip install 'user-questions[{extra}]'",
            ErrorCode.BAD_STORE,
        ) from error
    # A backend class takes its target: SQLite a path, the others their whole URL.
    store: Store = getattr(module, class_name)(rest if scheme == "sqlite" else text, host=host)
    return store
