"""The host's store: its records, its protocols, and `open_store(url)`.

The store is the source of truth of a host: a request is committed to it before any page sees it,
and its outcome before its asker is released. The hub keeps only a cache of what is pending, rebuilt
from the store at start-up and whenever the store says something changed.

The records are in `stores/records.py`, the protocols (`Store`, and its parts `QuestionStore`,
`HistoryStore`, `AuditStore`, `TokenStore`, `SettingStore`, `ChatStore`, `PushStore`) in
`stores/base.py`; both are re-exported here.
Backends are imported by URL scheme on first use, the way anyio loads its backends, so a host on
SQLite never imports psycopg: a path or `sqlite:///path` is `SQLiteStore`; `postgresql://...`
is `PostgresStore`, which several hosts share (docs/multinode.md).

Besides the pending requests, a store keeps every request's whole life (asked by whom and from
where, first shown when, settled how, by whom, through which surface: the answer records),
answers history queries over the settled ones, and holds the named tokens of the people who may
use the host (docs/people-and-history.md).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores.base import (
    AuditStore,
    ChatStore,
    HistoryStore,
    PushStore,
    QuestionStore,
    RuleStore,
    SettingStore,
    Store,
    TokenStore,
)
from user_questions.host.stores.records import (
    FAULT_CODES,
    QUESTIONS,
    AuditRecord,
    ChangeListener,
    ChatMessage,
    ChatPairing,
    Checkpoint,
    Decision,
    Escalation,
    HistoryPage,
    HistoryQuery,
    NewQuestion,
    PushSubscription,
    Rate,
    Role,
    Rule,
    RuleRecord,
    RulesListener,
    RulesMoved,
    Seal,
    Settlement,
    StoredQuestion,
    StoreStats,
    Tally,
    TokenChange,
    TokenRecord,
    TokensListener,
    Vote,
    pending_record,
    settled_record,
)

__all__ = [
    "FAULT_CODES",
    "QUESTIONS",
    "AuditRecord",
    "AuditStore",
    "ChangeListener",
    "Checkpoint",
    "ChatMessage",
    "ChatPairing",
    "ChatStore",
    "Decision",
    "Escalation",
    "HistoryPage",
    "HistoryQuery",
    "HistoryStore",
    "NewQuestion",
    "PushStore",
    "PushSubscription",
    "QuestionStore",
    "Rate",
    "Rule",
    "RuleRecord",
    "RuleStore",
    "RulesListener",
    "RulesMoved",
    "Seal",
    "SettingStore",
    "Settlement",
    "Store",
    "StoreStats",
    "StoredQuestion",
    "Tally",
    "Vote",
    "Role",
    "TokenChange",
    "TokenRecord",
    "TokenStore",
    "TokensListener",
    "default_store_path",
    "open_store",
    "pending_record",
    "settled_record",
]


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
