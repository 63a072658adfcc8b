"""The `Store` protocol, split by concern: questions, history, tokens and settings.

Each part of the host takes the narrowest protocol it needs (the hub a `QuestionStore`, `Tokens` a
`TokenStore`, retention a `HistoryStore`, the token and the notify secret a `SettingStore`, the
chat bots a `ChatStore`); a
backend implements them all, as `Store`.

A store is opened with `async with`, which connects, creates or migrates the schema (it has a
version number) and closes again. Every method that writes has committed when it returns. A
store over the network raises `UserQuestionError` with `STORE_UNAVAILABLE` when it cannot reach
its database (at start-up too), and reconnects by itself on a later call. `ping()` asks whether
it answers now (the host's readiness, `GET /readyz`); `stats` counts its failures and
reconnections (the host's metrics).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self

from user_questions.host.stores.records import (
    AUDIT_PAGE,
    AuditRecord,
    ChangeListener,
    ChatMessage,
    ChatPairing,
    Checkpoint,
    HistoryPage,
    HistoryQuery,
    NewQuestion,
    PushSubscription,
    Rule,
    RuleRecord,
    RulesListener,
    Seal,
    Settlement,
    StoredQuestion,
    StoreStats,
    Tally,
    TokenChange,
    TokenRecord,
    TokensListener,
    Vote,
)

__all__ = [
    "AuditStore",
    "ChatStore",
    "HistoryStore",
    "PushStore",
    "QuestionStore",
    "RuleStore",
    "SettingStore",
    "Store",
    "TokenStore",
]


class QuestionStore(Protocol):
    """The requests: submitted, settled once, read back, and the changes other hosts make.

    Settling is a conditional update (pending -> settled in one statement), never a read then a
    write, so when two hosts or two pages answer at once exactly one wins.

    A store shared by several hosts tells each of them about writes made by the others through
    `on_change` (PostgreSQL: LISTEN/NOTIFY), and says `None` after it reconnects, because a
    notification may have been lost meanwhile: the hub then re-reads everything. A listener
    hears of the changes committed after it registers, so the hub registers before its first
    read (a change committed between the two is heard and read, which is harmless; none is
    missed). Listeners are called on the event loop and must not block. A store used by one
    host alone may never call them.
    """

    async def submit(self, question: NewQuestion) -> tuple[StoredQuestion, bool]:
        """Store `question` unless its rpcId exists; return the stored record and whether this
        call created it. Submitting an existing rpcId changes nothing (idempotent re-attach).
        A question a rule settled counts its rules' uses (`NewQuestion.rules_used`) in the same
        transaction.

        Raises:
            RulesMoved: nothing was written, because the rules are no longer at the version
                it was decided under (`NewQuestion.rules_version`).
        """
        ...

    async def settle(
        self, rpc_id: str, settlement: Settlement, *, pending: StoredQuestion | None = None
    ) -> StoredQuestion | None:
        """Settle the request if it is still pending; the settled record when this call won,
        `None` when it was not pending (already settled, or unknown).

        `pending` is the request's record as the caller holds it (the hub's cache): the settled
        record is then made from it (`settled_record`) rather than read back from the row.
        """
        ...

    async def approve(self, vote: Vote, settlement: Settlement) -> Tally | None:
        """Count `vote` toward the pending request's quorum (once per person and call) and,
        when that call now has as many approvals as the request needs, settle it with
        `settlement` (allowed), all under the request's lock, so that votes on several hosts
        at once are each counted exactly once; each new vote appends an audit record. The
        tally, `None` when the request is not pending."""
        ...

    async def votes(self, rpc_id: str) -> list[Vote]:
        """Every approval given to the request so far, oldest first (kept once settled)."""
        ...

    async def escalate(self, rpc_id: str, step: int) -> StoredQuestion | None:
        """Fire escalation step `step` (counted from 0) of the pending request: its target
        joins the audience (an audience of everyone stays so), in one conditional update on
        the steps fired so far, so of several hosts exactly one fires it. The request as it is
        now when this call fired it (other hosts hear of it as of any change), else `None`."""
        ...

    async def remind(
        self, rpc_id: str, previous: datetime | None, at: datetime
    ) -> StoredQuestion | None:
        """Record that the pending request's audience is reminded of it `at`, if its last
        reminder is still `previous` (a conditional update: one host reminds); the request as
        it is now when this call won, else `None`."""
        ...

    async def get(self, rpc_id: str) -> StoredQuestion | None:
        """The request with this rpcId, pending or settled."""
        ...

    async def pending(self) -> list[StoredQuestion]:
        """Every pending request, oldest first."""
        ...

    def on_change(self, listener: ChangeListener) -> Callable[[], None]:
        """Call `listener` when another writer may have changed a request, from now on;
        returns a remover."""
        ...

    async def mark_shown(self, rpc_ids: Sequence[str]) -> None:
        """Record that these requests were shown now; one shown before keeps its first time."""
        ...


class HistoryStore(Protocol):
    """The settled requests, as people look them up, and their retention."""

    async def history(self, query: HistoryQuery) -> HistoryPage:
        """Settled requests matching `query`, newest settled first (ties: newest asked first);
        with `query.pending`, pending ones too, newest change first.

        Raises:
            UserQuestionError: `BAD_REQUEST` for a cursor this store did not make.
        """
        ...

    async def purge(self, settled_before: datetime, seal: Seal | None = None) -> int:
        """Delete the requests settled before `settled_before`; never a pending one. Returns how
        many were deleted. The chat messages kept for them go too, and expired pairing codes.

        Their audit records are kept, unless `seal` is given: then the records before the
        cutoff (up to the first one of a request kept) go too, in the same transaction, once
        the checkpoint `seal` signs at the last of them is stored (`pruned`), so that the chain
        goes on verifiably from it (docs/audit.md)."""
        ...


class AuditStore(Protocol):
    """The audit log (`audit_chain`, docs/audit.md): every settlement is appended by `settle`
    and `submit` in the transaction that makes it; read here, and signed at checkpoints."""

    async def audit_records(self, after: int = 0, limit: int = AUDIT_PAGE) -> list[AuditRecord]:
        """The records numbered after `after`, in order, `limit` at most."""
        ...

    async def audit_since(self, since: datetime) -> int:
        """The number of the last record before the first one made at or after `since`
        (an export from `since` reads the records after it)."""
        ...

    async def audit_head(self) -> tuple[int, str]:
        """The number and hash of the last record appended (0 and `GENESIS` for none yet)."""
        ...

    async def checkpoints(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first."""
        ...

    async def add_checkpoint(self, checkpoint: Checkpoint) -> None:
        """Keep a signed checkpoint."""
        ...


class TokenStore(Protocol):
    """The named tokens of the people who may use the host (hashes only)."""

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

    async def change_token(self, name: str, change: TokenChange) -> TokenRecord | None:
        """Change what the active token called `name` may do (each field `change` gives
        replaces the stored one; `deadline` and `remind` in seconds, 0 taking them away); the
        changed record, `None` if there is no such active token. Running hosts hear of it as of an
        addition or a revocation (`on_tokens_change`)."""
        ...

    async def touch_token(self, name: str) -> None:
        """Record that the token called `name` was used just now."""
        ...

    def on_tokens_change(self, listener: TokensListener) -> Callable[[], None]:
        """Call `listener` soon after any process adds, changes or revokes a token; returns a
        remover.

        Only a store opened as a host's (`open_store(url, host=True)`) follows other processes'
        changes; every store tells its listeners about its own.
        """
        ...


class RuleStore(Protocol):
    """The remembered decisions people made about approvals (`host/rules/`)."""

    async def rules(self) -> list[RuleRecord]:
        """Every rule, revoked and expired ones included, by id."""
        ...

    async def add_rule(self, rule: Rule) -> RuleRecord:
        """Store a new rule; its record, with the id the store gave it."""
        ...

    async def revoke_rule(self, rule_id: int) -> RuleRecord | None:
        """Revoke the active rule `rule_id`; the revoked record, `None` if there was none."""
        ...

    async def rules_version(self) -> int:
        """A number that moves whenever a rule is added or revoked, by any process or node,
        in the same transaction as the change: one small read (`submit` checks it too)."""
        ...

    def on_rules_change(self, listener: RulesListener) -> Callable[[], None]:
        """Call `listener` soon after any process adds or revokes a rule (as
        `on_tokens_change` does for tokens); returns a remover."""
        ...


class SettingStore(Protocol):
    """Small named values kept with the store: the host's token, the notify secret."""

    async def setting(self, key: str) -> str | None:
        """The value of `key`, `None` when there is none; a read only, it stores nothing."""
        ...

    async def ensure_setting(self, key: str, default: str) -> str:
        """The value of `key`, storing `default` first when there is none (atomically, so that
        hosts starting together on one database all get the one value stored first)."""
        ...

    async def set_setting(self, key: str, value: str) -> None:
        """Store `value` as `key`, replacing any previous value."""
        ...

    async def settings_under(self, prefix: str) -> dict[str, str]:
        """Every setting whose key starts with `prefix`, by key (the push configurations of an
        A2A task: `host/a2a/push.py`)."""
        ...

    async def delete_setting(self, key: str) -> None:
        """Forget `key`; nothing happens when there is no such setting."""
        ...


class ChatStore(Protocol):
    """What the chat bots keep (`host/chat`): who may answer from which chat, the one-time
    pairing codes, the messages sent for each request, and the lease that lets one host poll
    a bot at a time. The bots' small values (a Telegram offset, its username) are settings."""

    async def add_pair_code(
        self, service: str, code: str, person: str, expires_at: datetime
    ) -> None:
        """Keep a one-time code that pairs whoever sends it to `service`'s bot with `person`."""
        ...

    async def redeem_pair_code(self, service: str, code: str) -> str | None:
        """The person `code` pairs with, deleting it (it works once); `None` when it is unknown,
        of another service or expired."""
        ...

    async def pair(self, pairing: ChatPairing) -> None:
        """Keep `pairing`, replacing any earlier pairing of the same user of the service."""
        ...

    async def unpair(self, service: str, person: str) -> int:
        """Forget every pairing of `person` with `service`; how many there were."""
        ...

    async def pairings(self) -> list[ChatPairing]:
        """Every pairing, by service, then person."""
        ...

    async def add_chat_message(self, message: ChatMessage) -> None:
        """Keep a message sent for a request; one of the same `ref` is replaced (its id is
        known only once it was sent, and a tap may come at once)."""
        ...

    async def chat_messages(self, rpc_id: str) -> list[ChatMessage]:
        """The messages sent for the request `rpc_id`, in the order they were kept."""
        ...

    async def chat_message(self, ref: str) -> ChatMessage | None:
        """The message whose buttons carry `ref`."""
        ...

    async def chat_message_at(self, service: str, chat: str, message: str) -> ChatMessage | None:
        """The message `service` knows as `message` in `chat` (a reply names the message it
        answers by the service's id, not by its `ref`)."""
        ...

    async def set_chat_draft(self, ref: str, draft: str) -> None:
        """Keep the answer built so far in the message `ref`."""
        ...

    async def take_lease(self, name: str, holder: str, seconds: float) -> bool:
        """Hold the lease `name` for `seconds` from now if it is free, expired or `holder`'s
        already; whether `holder` holds it now (one conditional write: of two hosts asking at
        once, one gets it)."""
        ...


class PushStore(Protocol):
    """The browsers that get people's questions by Web Push (`host/notify/web_push.py`)."""

    async def add_push_subscription(self, subscription: PushSubscription) -> None:
        """Keep `subscription`, replacing any row of the same endpoint (a browser that
        subscribed again, perhaps signed in as someone else)."""
        ...

    async def push_subscriptions(self, person: str | None = None) -> list[PushSubscription]:
        """Every subscription (`person`: only theirs), oldest first."""
        ...

    async def push_subscription(self, subscription_id: str) -> PushSubscription | None:
        """The subscription with this id."""
        ...

    async def remove_push_subscription(
        self, subscription_id: str, person: str | None = None
    ) -> bool:
        """Forget the subscription with this id (only if it is `person`'s, when given);
        whether there was one."""
        ...


class Store(
    QuestionStore,
    HistoryStore,
    AuditStore,
    TokenStore,
    RuleStore,
    SettingStore,
    ChatStore,
    PushStore,
    Protocol,
):
    """Durable storage of a host: every part above, opened and closed with `async with`."""

    url: str
    """Where the store lives, fit to print (no password)."""
    stats: StoreStats
    """Its failed operations and reconnections since it was opened."""

    async def ping(self) -> None:
        """Return once the database has answered a trivial query.

        Raises:
            UserQuestionError: `STORE_UNAVAILABLE` when it cannot be reached (`BAD_STORE` when
                it refuses the query).
        """
        ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
