"""`SQLiteStore`: the embedded default store, one SQLite file in WAL mode.

Uses the standard library's `sqlite3` on one connection, in one thread of its own (`_sqlite_worker`,
on the asyncio backend) that runs the store's calls in order, so the event loop does not wait on the
disk. Every write is one statement in autocommit mode, committed with `synchronous=FULL`: when a
method returns, the row survives a crash of the process and of the machine. Asks and settlements go
through a group commit (`_group_commit`): those that arrive while a commit is in flight are
committed together in the next transaction, one fsync for the lot, and each caller returns once the
commit holding its write has returned.

A fast disk changes one thing: handing a commit to the thread and hearing back through the event
loop costs more than a commit that takes a tenth of a millisecond. So while the store's recent
commits have taken less than `INLINE_COMMIT_LIMIT` on average and the thread is idle, the event
loop waits for a commit with the loop blocked, for `INLINE_WAIT` at most: a commit that takes
longer (a disk turned slow) is then awaited like any other, so the loop never stalls on the
disk, and the slow commit raises the average, which sends the next ones the usual way.

Faults of the disk or of the file are refusals with a code, never a bug: no space left is
`STORE_FULL`; a file that cannot be written (an I/O error, a read-only file system) or that was
deleted or replaced under the host is `STORE_UNAVAILABLE`; commits slower than `SLOW_COMMIT` on
average, or more than `MAX_QUEUED_BYTES` of asks waiting for the disk, are `STORE_BUSY`. The
fault is kept in `stats` (logged once as it starts and once as it ends; `ping()` raises it), and
the store checks every `WATCH_INTERVAL` whether it has cleared (`_recover`). A file deleted
under the host is written back from the database it still holds open, so nothing committed is
lost; a replaced one is left alone, and refused, until it is put back (or the host restarts on
the new one). After every commit the store checks that its path still names the file it holds:
a write that went to a file no longer there is refused, not acknowledged.

One host per file: opening takes an exclusive lock (`<file>.lock`, released by the kernel when
the process dies, even by SIGKILL), because a second host on the same file would never hear of
the first one's questions. So this store never calls its `on_change` listeners.

Commands beside the host (`uq token`, `uq history`) open the file with `host=False`: no lock,
and WAL lets them read while the host writes. To hear at once of a token they add, change or
revoke, a host's store reads `PRAGMA data_version` every `WATCH_INTERVAL` seconds; it changes
whenever another connection has committed, and the store then tells its tokens listeners.

The store puts together the modules beside it: `_sqlite_file` (opening the file under its
lock), `_sqlite_schema` (the tables, their version and their migrations), `_sqlite_backup`
(a consistent copy of the file while a host writes to it: `backup()`, `uq backup`),
`_sqlite_worker` and `_group_commit`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import astuple, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, TypeVar

import anyio

from user_questions._lifecycle.disposer import nothing
from user_questions._lifecycle.lifetime import AsyncLifetime
from user_questions._lifecycle.listeners import Listeners
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores._group_commit import GroupCommit, Work
from user_questions.host.stores._rows import (
    COLUMNS,
    RULE_COLUMNS,
    TOKEN_COLUMNS,
    answer_edited,
    audit_body,
    encode_cursor,
    escalations_json,
    history_filter,
    history_moment,
    instant_text,
    names_json,
    origin_json,
    question_text,
    rendered_json,
    rule_record,
    settled_fields,
    settlement_text,
    stored_question,
    stored_questions,
    token_change_fields,
    token_fields,
    token_limits,
    token_record,
    vote_body,
    vote_record,
)
from user_questions.host.stores._sqlite_backup import BackupSummary, copy_store
from user_questions.host.stores._sqlite_file import lock, open_file
from user_questions.host.stores._sqlite_schema import SCHEMA_VERSION, transaction
from user_questions.host.stores._sqlite_worker import Worker
from user_questions.host.stores.audit_chain import chain_hash
from user_questions.host.stores.records import (
    AUDIT_PAGE,
    FAULT_CODES,
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
    settled_record,
    submitted_record,
)

__all__ = [
    "FREE_SPACE_MARGIN",
    "INLINE_COMMIT_LIMIT",
    "INLINE_WAIT",
    "MAX_QUEUED_BYTES",
    "SCHEMA_VERSION",
    "SLOW_COMMIT",
    "WATCH_INTERVAL",
    "BackupSummary",
    "SQLiteStore",
]

logger = logging.getLogger("user_questions.host")

WATCH_INTERVAL = 0.2
"""Seconds between a host's checks for tokens and rules changed by another process, for its
file deleted or replaced, and (during a fault) for the fault cleared."""
INLINE_COMMIT_LIMIT = 0.001
"""Seconds: while the store's commits take less than this on average, the event loop waits for
one with the loop blocked when the store's thread is idle (see the module docstring)."""
INLINE_WAIT = 0.002
"""Seconds the event loop waits for a commit with the loop blocked, at most; a commit that takes
longer is awaited like any other. Below what a page, an asker or a probe could notice."""
SLOW_COMMIT = 0.25
"""Seconds: commits slower than this on average make the store `STORE_BUSY` (the disk is slow;
`GET /readyz` says so) until they average under half of it again."""
MAX_QUEUED_BYTES = 16 * 1024 * 1024
"""The asks (their questions, search text and rendered details) waiting for a commit, at most;
a new ask beyond it is refused with `STORE_BUSY`. Answers, dismissals and withdrawals always
wait their turn: each connection has one frame in flight, so they are bounded by the
connections, and refusing them would refuse what a person did."""
FREE_SPACE_MARGIN = 4 * 1024 * 1024
"""Bytes free on the store's file system for a `STORE_FULL` to clear: room for the largest
request and the write-ahead log's growth, so that the fault does not come and go with each
write while the disk is at its edge."""
_PACE_WEIGHT = 0.25
"""The weight of the latest commit in the average: a few fast commits after a slow one bring a
commit back to the event loop."""

_COLUMNS = ", ".join(COLUMNS)
_TOKEN_COLUMNS = ", ".join(TOKEN_COLUMNS)
_RULE_COLUMNS = ", ".join(RULE_COLUMNS)
_CHAT_MESSAGES = (
    "SELECT ref, rpc_id, service, chat_id, message_id, draft, digest FROM chat_messages"
)
_PUSH_SUBSCRIPTIONS = (
    "SELECT id, person, endpoint, p256dh, auth, secret_hash, device, created_at "
    "FROM push_subscriptions"
)
_SHARES = (
    "EXISTS (SELECT 1 FROM json_each(audience) WHERE value IN (SELECT value FROM json_each(?)))"
)
"""A request's audience shares a name with the JSON array bound (`history_filter`)."""

T = TypeVar("T")


_NEXT_TARGET = "json_extract(escalate, '$[' || escalated || '][1]')"
_ESCALATE = (
    "UPDATE questions SET escalated = escalated + 1, audience = CASE WHEN audience = '[]' "
    f"OR EXISTS (SELECT 1 FROM json_each(audience) WHERE value = {_NEXT_TARGET}) "
    f"THEN audience ELSE json_insert(audience, '$[#]', {_NEXT_TARGET}) END "
    "WHERE rpc_id = ? AND state = 'pending' AND escalated = ? "
    f"AND json_array_length(escalate) > escalated RETURNING {_COLUMNS}"
)
"""Fires a request's next escalation step, if it is still the one the caller names."""
_PRUNABLE = (
    "SELECT seq, hash FROM audit WHERE seq < coalesce((SELECT min(seq) FROM audit WHERE at >= ? "
    "OR rpc_id IN (SELECT rpc_id FROM questions WHERE state = 'pending' OR settled_at >= ?)), "
    "(SELECT seq + 1 FROM audit_head)) ORDER BY seq DESC LIMIT 1"
)
"""The last audit record that may be pruned before a cutoff: of those before the first record
at or after it, or of a request kept (still pending, or settled at or after it)."""
_SUBMIT = (
    "INSERT INTO questions (rpc_id, session_id, questions, asked_at, asked_by, shown_at, "
    "origin, search, rendered, audience, approval, deadline_at, escalate, remind, state, "
    "answer, settled_via, settled_by, settled_at, asker_rpc_id, digest, approvals) "
    "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? "
    "WHERE ? IS NULL OR ? = (SELECT version FROM rules_version) "
    "ON CONFLICT (rpc_id) DO NOTHING"
)
"""Stores a new request, unless its rpcId exists or the rules moved past the version it was
decided under (`NewQuestion.rules_version`): the version is read in the statement that takes
the write lock, so no rule can change between the check and the commit."""
_REMIND = (
    "UPDATE questions SET reminded_at = ? WHERE rpc_id = ? AND state = 'pending' "
    f"AND reminded_at IS ? RETURNING {_COLUMNS}"
)


class SQLiteStore(AsyncLifetime):
    """A `Store` in one SQLite file; see the module docstring for how it differs.

    `path` is the file, or an existing folder to keep `host.db` in. `host=False` opens it beside
    a running host: without the lock, and only if the file exists.
    """

    def __init__(self, path: str | os.PathLike[str], *, host: bool = True) -> None:
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            self.path = self.path / "host.db"
        self.url = str(self.path)
        self.host = host
        self._connection: sqlite3.Connection | None = None
        self._lock_file: IO[str] | None = None
        self._worker = Worker(f"uq-store {self.path.name}")
        self._tokens_listeners: Listeners[[]] = Listeners(
            logger, f"a tokens listener of {self.url} raised"
        )
        self._rules_listeners: Listeners[[]] = Listeners(
            logger, f"a rules listener of {self.url} raised"
        )
        self._writes = GroupCommit(self._commit, MAX_QUEUED_BYTES)
        self._commit_seconds = math.inf
        """The average time of a commit (unknown at first: the first ones run in the thread)."""
        self._committed_at = 0.0
        """When the last commit ended (`time.monotonic()`)."""
        self._file: tuple[int, int] | None = None
        """The device and inode of the file the connection holds, as opened."""
        self.stats = StoreStats(url=self.url)

    def __repr__(self) -> str:
        return f"<SQLiteStore {self.url}>"

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        self._worker.start()
        stack.push_async_callback(self._worker.stop)
        await self._run(self._open)
        stack.push_async_callback(self._close_file)
        if self.host:
            watching = await stack.enter_async_context(anyio.create_task_group())
            watching.start_soon(self._watch, await self._run(self._data_version))
            stack.callback(watching.cancel_scope.cancel)
        self.stats.open = True

    async def _close_file(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._run(self._close)

    async def ping(self) -> None:
        self.stats.check()  # a full disk still reads: the fault is the answer
        await self._run(self._execute, "SELECT 1", ())

    async def backup(self, destination: str | os.PathLike[str]) -> BackupSummary:
        """Copy the store, as it is now, to the new file `destination`, while hosts go on
        writing to it (`_sqlite_backup`).

        Raises:
            UserQuestionError: `BAD_REQUEST` for a destination that exists or has no folder;
                `BAD_STORE` when the copy cannot be written or does not check out.
        """
        target = Path(destination)
        return await self._run(lambda: copy_store(self._db(), target.expanduser(), self.url))

    async def setting(self, key: str) -> str | None:
        return await self._run(self._setting, key)

    async def ensure_setting(self, key: str, default: str) -> str:
        return await self._run(self._ensure_setting, key, default)

    async def set_setting(self, key: str, value: str) -> None:
        await self._run(
            self._execute,
            "INSERT INTO settings (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    async def settings_under(self, prefix: str) -> dict[str, str]:
        rows = await self._run(
            self._execute,
            "SELECT key, value FROM settings WHERE substr(key, 1, length(?)) = ?",
            (prefix, prefix),
        )
        return {str(key): str(value) for key, value in rows}

    async def delete_setting(self, key: str) -> None:
        await self._run(self._execute, "DELETE FROM settings WHERE key = ?", (key,))

    async def submit(self, question: NewQuestion) -> tuple[StoredQuestion, bool]:
        # The row is made here, on the event loop: the store's thread only runs SQL, and does
        # not hold the interpreter while the loop has frames to handle.
        row = (
            question.rpc_id,
            question.session_id,
            question.questions_json,
            _iso(question.asked_at),
            question.asked_by,
            None if question.shown_at is None else _iso(question.shown_at),
            origin_json(question.origin),
            question_text(question.questions) + settlement_text(question.settlement),
            rendered_json(question.rendered),
            names_json(question.audience),
            origin_json(question.approval),
            None if question.deadline_at is None else _iso(question.deadline_at),
            escalations_json(question.escalate),
            question.remind,
            *settled_fields(question.settlement),
            None if question.settlement is None else _iso(question.asked_at),
            question.asker_rpc_id,
            question.digest,
            question.approvals,
            question.rules_version,  # twice: the guard is "none, or still this one"
            question.rules_version,
        )
        size = sum(len(column) for column in row if isinstance(column, str))
        return await self._write(lambda: self._atomic(self._submit, question, row), size)

    async def settle(
        self, rpc_id: str, settlement: Settlement, *, pending: StoredQuestion | None = None
    ) -> StoredQuestion | None:
        now = datetime.now(UTC)
        returning = _COLUMNS if pending is None else "shown_at"
        found = await self._write(
            lambda: self._atomic(self._settled, rpc_id, settlement, now, returning)
        )
        if not found:
            return None
        if pending is None:
            return _record(found[0])
        return settled_record(pending, settlement, now, _moment(found[0][0]))

    async def approve(self, vote: Vote, settlement: Settlement) -> Tally | None:
        now = datetime.now(UTC)

        def write() -> tuple[Tally, list[tuple[Any, ...]]] | None:
            found = self._execute(
                "SELECT approvals, digest FROM questions WHERE rpc_id = ? AND state = 'pending'",
                (vote.rpc_id,),
            )
            if not found:
                return None
            needed, card = found[0]
            added = self._execute(
                "INSERT INTO approvals (rpc_id, person, digest, call, via, at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING person",
                (vote.rpc_id, vote.person, vote.digest, vote.call, str(vote.via), _iso(vote.at)),
            )
            if added:
                self._append(vote.rpc_id, vote.at, vote_body(vote, card))
            people = tuple(
                person
                for (person,) in self._execute(
                    "SELECT person FROM approvals WHERE rpc_id = ? AND digest = ? "
                    "ORDER BY at, person",
                    (vote.rpc_id, vote.digest),
                )
            )
            tally = Tally(people, int(needed), bool(added))
            if len(people) < tally.needed:
                return tally, []
            return tally, self._settled(vote.rpc_id, settlement, now, _COLUMNS)

        outcome = await self._write(lambda: self._atomic(write))
        if outcome is None:
            return None
        tally, settled = outcome
        return replace(tally, settled=_record(settled[0])) if settled else tally

    async def votes(self, rpc_id: str) -> list[Vote]:
        rows = await self._run(
            self._execute,
            "SELECT rpc_id, person, call, via, at FROM approvals WHERE rpc_id = ? "
            "ORDER BY at, person",
            (rpc_id,),
        )
        return [vote_record(row, _moment) for row in rows]

    def _settled(
        self, rpc_id: str, settlement: Settlement, now: datetime, returning: str
    ) -> list[tuple[Any, ...]]:
        """Settle the request if pending and append its audit record (in the caller's
        savepoint); the `returning` columns of its row, none when it was not pending."""
        answer = None if settlement.answer is None else settlement.answer.model_dump_json()
        found = self._execute(
            "UPDATE questions SET state = ?, answer = ?, settled_at = ?, settled_via = ?, "
            "settled_by = ?, channel = ?, edited = ?, search = search || ? "
            f"WHERE rpc_id = ? AND state = 'pending' RETURNING digest, {returning}",
            (
                settlement.outcome,
                answer,
                _iso(now),
                settlement.via,
                settlement.by,
                settlement.detail,
                answer_edited(settlement.answer),
                settlement_text(settlement),
                rpc_id,
            ),
        )
        if not found:
            return []
        self._append(rpc_id, now, audit_body(rpc_id, found[0][0], settlement, answer, now))
        return [row[1:] for row in found]

    async def escalate(self, rpc_id: str, step: int) -> StoredQuestion | None:
        return await self._one(_ESCALATE, (rpc_id, step))

    async def remind(
        self, rpc_id: str, previous: datetime | None, at: datetime
    ) -> StoredQuestion | None:
        return await self._one(
            _REMIND, (_iso(at), rpc_id, None if previous is None else _iso(previous))
        )

    async def _one(self, sql: str, parameters: Sequence[object]) -> StoredQuestion | None:
        found = await self._write(lambda: self._execute(sql, parameters))
        return _record(found[0]) if found else None

    async def get(self, rpc_id: str) -> StoredQuestion | None:
        found = await self._run(
            self._query, f"SELECT {_COLUMNS} FROM questions WHERE rpc_id = ?", (rpc_id,)
        )
        return found[0] if found else None

    async def pending(self) -> list[StoredQuestion]:
        return await self._run(
            self._query,
            f"SELECT {_COLUMNS} FROM questions WHERE state = 'pending' ORDER BY seq",
            (),
        )

    def on_change(self, listener: ChangeListener) -> Callable[[], None]:
        return nothing

    async def mark_shown(self, rpc_ids: Sequence[str]) -> None:
        await self._run(
            self._execute,
            "UPDATE questions SET shown_at = ? WHERE shown_at IS NULL "
            "AND rpc_id IN (SELECT value FROM json_each(?))",
            (_now(), json.dumps(list(rpc_ids))),
        )

    async def history(self, query: HistoryQuery) -> HistoryPage:
        where, parameters = history_filter(query, "?", str, _SHARES)
        moment = history_moment(query)
        rows = await self._run(
            self._execute,
            f"SELECT {_COLUMNS}, {moment}, seq FROM questions WHERE {where} "
            f"ORDER BY {moment} DESC, seq DESC LIMIT ?",
            (*parameters, query.limit + 1),
        )
        total = None
        if query.count:
            where, parameters = history_filter(replace(query, before=None), "?", str, _SHARES)
            [(total,)] = await self._run(
                self._execute, f"SELECT COUNT(*) FROM questions WHERE {where}", parameters
            )
        records = [_record(row[:-2]) for row in rows[: query.limit]]
        if len(rows) <= query.limit:
            return HistoryPage(records, None, total)
        last = rows[query.limit - 1]
        return HistoryPage(records, encode_cursor(last[-2], last[-1]), total)

    async def purge(self, settled_before: datetime, seal: Seal | None = None) -> int:
        cutoff = _iso(settled_before)

        def delete() -> int:
            if seal is not None:
                self._prune_audit(cutoff, seal)
            deleted = self._execute(
                "DELETE FROM questions WHERE state <> 'pending' AND settled_at < ? RETURNING seq",
                (cutoff,),
            )
            # What the chat bots kept of them and their quorums' approvals go with them (the
            # audit log keeps its records of each), and so do the codes no one used.
            for kept in ("chat_messages", "approvals"):
                self._execute(
                    f"DELETE FROM {kept} WHERE rpc_id NOT IN (SELECT rpc_id FROM questions)", ()
                )
            self._execute("DELETE FROM chat_codes WHERE expires_at <= ?", (_now(),))
            return len(deleted)

        return await self._run(self._atomic, delete)

    def _prune_audit(self, cutoff: str, seal: Seal) -> None:
        """Delete the audit records before `cutoff` (those of requests settled before it, up to
        the first that is not: `PRUNABLE`), after a checkpoint `seal` signs says so."""
        rows = self._execute(_PRUNABLE, (cutoff, cutoff))
        if not rows:
            return
        seq, hash = int(rows[0][0]), str(rows[0][1])
        self._add_checkpoint(seal(seq, hash))
        self._execute("DELETE FROM audit WHERE seq <= ?", (seq,))

    async def audit_records(self, after: int = 0, limit: int = AUDIT_PAGE) -> list[AuditRecord]:
        rows = await self._run(
            self._execute,
            "SELECT seq, prev, hash, body FROM audit WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, limit),
        )
        return [AuditRecord(*row) for row in rows]

    async def audit_since(self, since: datetime) -> int:
        rows = await self._run(
            self._execute, "SELECT min(seq) FROM audit WHERE at >= ?", (_iso(since),)
        )
        first = rows[0][0]
        return int(first) - 1 if first is not None else (await self.audit_head())[0]

    async def audit_head(self) -> tuple[int, str]:
        rows = await self._run(self._execute, "SELECT seq, hash FROM audit_head", ())
        return int(rows[0][0]), str(rows[0][1])

    async def checkpoints(self) -> list[Checkpoint]:
        rows = await self._run(
            self._execute,
            "SELECT seq, hash, at, pruned, key, signature FROM audit_checkpoints ORDER BY id",
            (),
        )
        return [
            Checkpoint(int(seq), hash, datetime.fromisoformat(at), bool(pruned), key, signature)
            for seq, hash, at, pruned, key, signature in rows
        ]

    async def add_checkpoint(self, checkpoint: Checkpoint) -> None:
        await self._run(self._add_checkpoint, checkpoint)

    def _add_checkpoint(self, checkpoint: Checkpoint) -> None:
        self._execute(
            "INSERT INTO audit_checkpoints (seq, hash, at, pruned, key, signature) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                checkpoint.seq,
                checkpoint.hash,
                _iso(checkpoint.at),
                int(checkpoint.pruned),
                checkpoint.key,
                checkpoint.signature,
            ),
        )

    async def tokens(self) -> list[TokenRecord]:
        rows = await self._run(
            self._execute, f"SELECT {_TOKEN_COLUMNS} FROM tokens ORDER BY name", ()
        )
        return [_token(row) for row in rows]

    async def add_token(self, token: TokenRecord) -> None:
        # A revoked token of the same name is replaced; an active one is left alone.
        added = await self._run(
            self._execute,
            f"INSERT INTO tokens ({_TOKEN_COLUMNS}) "
            "VALUES (?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash, "
            "created_at = excluded.created_at, last_used_at = NULL, revoked_at = NULL, "
            "role = excluded.role, groups = excluded.groups, routes = excluded.routes, "
            "notify = excluded.notify, deadline = excluded.deadline, "
            "escalate = excluded.escalate, remind = excluded.remind, "
            "max_pending = excluded.max_pending, rate = excluded.rate, burst = excluded.burst, "
            "lang = excluded.lang, approvals = excluded.approvals "
            "WHERE tokens.revoked_at IS NOT NULL RETURNING name",
            (
                token.name,
                token.token_hash,
                _iso(token.created_at),
                *token_fields(token.role, token.groups, token.routes, token.notify),
                token.deadline,
                escalations_json(token.escalate),
                token.remind,
                *token_limits(token),
                token.lang,
            ),
        )
        if not added:
            raise UserQuestionError(
                f"a token named {json.dumps(token.name)} exists; revoke it first "
                "(uq token revoke) or choose another name",
                ErrorCode.TOKEN_EXISTS,
            )
        self._tokens_listeners.tell()

    async def revoke_token(self, name: str) -> TokenRecord | None:
        return await self._update_token(
            "UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL "
            f"RETURNING {_TOKEN_COLUMNS}",
            (_now(), name),
        )

    async def change_token(self, name: str, change: TokenChange) -> TokenRecord | None:
        return await self._update_token(
            "UPDATE tokens SET role = coalesce(?, role), groups = coalesce(?, groups), "
            "routes = coalesce(?, routes), notify = coalesce(?, notify), "
            "deadline = nullif(coalesce(?, deadline), 0), escalate = coalesce(?, escalate), "
            "remind = nullif(coalesce(?, remind), 0), "
            "max_pending = nullif(coalesce(?, max_pending), 0), "
            "rate = nullif(coalesce(?, rate), 0), burst = nullif(coalesce(?, burst), 0), "
            "approvals = coalesce(?, approvals), lang = nullif(coalesce(?, lang), '') "
            f"WHERE name = ? AND revoked_at IS NULL RETURNING {_TOKEN_COLUMNS}",
            (*token_change_fields(change), name),
        )

    async def _update_token(self, sql: str, parameters: Sequence[object]) -> TokenRecord | None:
        """The token an `UPDATE ... RETURNING` changed, once the listeners are told; `None`
        (nobody told) when it matched none."""
        rows = await self._run(self._execute, sql, parameters)
        if not rows:
            return None
        self._tokens_listeners.tell()
        return _token(rows[0])

    async def touch_token(self, name: str) -> None:
        await self._run(
            self._execute, "UPDATE tokens SET last_used_at = ? WHERE name = ?", (_now(), name)
        )

    def on_tokens_change(self, listener: TokensListener) -> Callable[[], None]:
        return self._tokens_listeners.add(listener)

    async def rules(self) -> list[RuleRecord]:
        rows = await self._run(self._execute, f"SELECT {_RULE_COLUMNS} FROM rules ORDER BY id", ())
        return [rule_record(row, _moment) for row in rows]

    async def add_rule(self, rule: Rule) -> RuleRecord:
        rows = await self._run(
            self._execute,
            "INSERT INTO rules (tool, decision, created_at, command, path, domain, asker, cwd, "
            "created_by, expires_at, approvals) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            f"RETURNING {_RULE_COLUMNS}",
            (
                rule.tool,
                str(rule.decision),
                _iso(rule.created_at),
                rule.command,
                rule.path,
                rule.domain,
                rule.asker,
                rule.cwd,
                rule.created_by,
                None if rule.expires_at is None else _iso(rule.expires_at),
                rule.approvals,
            ),
        )
        self._rules_listeners.tell()
        return rule_record(rows[0], _moment)

    async def revoke_rule(self, rule_id: int) -> RuleRecord | None:
        rows = await self._run(
            self._execute,
            "UPDATE rules SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL "
            f"RETURNING {_RULE_COLUMNS}",
            (_now(), rule_id),
        )
        if not rows:
            return None
        self._rules_listeners.tell()
        return rule_record(rows[0], _moment)

    async def rules_version(self) -> int:
        rows = await self._run(self._execute, "SELECT version FROM rules_version", ())
        return int(rows[0][0])

    def on_rules_change(self, listener: RulesListener) -> Callable[[], None]:
        return self._rules_listeners.add(listener)

    async def add_pair_code(
        self, service: str, code: str, person: str, expires_at: datetime
    ) -> None:
        await self._run(
            self._execute,
            "INSERT INTO chat_codes (code, service, person, expires_at) VALUES (?, ?, ?, ?)",
            (code, service, person, _iso(expires_at)),
        )

    async def redeem_pair_code(self, service: str, code: str) -> str | None:
        rows = await self._run(
            self._execute,
            "DELETE FROM chat_codes WHERE code = ? AND service = ? AND expires_at > ? "
            "RETURNING person",
            (code, service, _now()),
        )
        return None if not rows else str(rows[0][0])

    async def pair(self, pairing: ChatPairing) -> None:
        await self._run(
            self._execute,
            "INSERT INTO chat_pairings (service, user_id, chat_id, person, paired_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (service, user_id) DO UPDATE SET "
            "chat_id = excluded.chat_id, person = excluded.person, paired_at = excluded.paired_at",
            (pairing.service, pairing.user, pairing.chat, pairing.person, _iso(pairing.paired_at)),
        )

    async def unpair(self, service: str, person: str) -> int:
        rows = await self._run(
            self._execute,
            "DELETE FROM chat_pairings WHERE service = ? AND person = ? RETURNING 1",
            (service, person),
        )
        return len(rows)

    async def pairings(self) -> list[ChatPairing]:
        rows = await self._run(
            self._execute,
            "SELECT service, user_id, chat_id, person, paired_at FROM chat_pairings "
            "ORDER BY service, person, user_id",
            (),
        )
        return [
            ChatPairing(row[0], row[1], row[2], row[3], datetime.fromisoformat(row[4]))
            for row in rows
        ]

    async def add_chat_message(self, message: ChatMessage) -> None:
        await self._run(
            self._execute,
            "INSERT INTO chat_messages (ref, rpc_id, service, chat_id, message_id, draft, digest) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ref) DO UPDATE SET "
            "message_id = excluded.message_id",
            astuple(message),
        )

    async def chat_messages(self, rpc_id: str) -> list[ChatMessage]:
        rows = await self._run(
            self._execute, f"{_CHAT_MESSAGES} WHERE rpc_id = ? ORDER BY seq", (rpc_id,)
        )
        return [ChatMessage(*row) for row in rows]

    async def chat_message(self, ref: str) -> ChatMessage | None:
        rows = await self._run(self._execute, f"{_CHAT_MESSAGES} WHERE ref = ?", (ref,))
        return None if not rows else ChatMessage(*rows[0])

    async def chat_message_at(self, service: str, chat: str, message: str) -> ChatMessage | None:
        rows = await self._run(
            self._execute,
            f"{_CHAT_MESSAGES} WHERE service = ? AND chat_id = ? AND message_id = ?",
            (service, chat, message),
        )
        return None if not rows else ChatMessage(*rows[0])

    async def set_chat_draft(self, ref: str, draft: str) -> None:
        await self._run(
            self._execute, "UPDATE chat_messages SET draft = ? WHERE ref = ?", (draft, ref)
        )

    async def take_lease(self, name: str, holder: str, seconds: float) -> bool:
        now = datetime.now(UTC)
        rows = await self._run(
            self._execute,
            "INSERT INTO chat_leases (name, holder, expires_at) VALUES (?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, "
            "expires_at = excluded.expires_at "
            "WHERE chat_leases.holder = excluded.holder OR chat_leases.expires_at <= ? "
            "RETURNING 1",
            (name, holder, _iso(now + timedelta(seconds=seconds)), _iso(now)),
        )
        return bool(rows)

    async def add_push_subscription(self, subscription: PushSubscription) -> None:
        row = astuple(subscription)
        await self._run(
            self._execute,
            "INSERT INTO push_subscriptions (id, person, endpoint, p256dh, auth, secret_hash, "
            "device, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (endpoint) DO UPDATE "
            "SET id = excluded.id, person = excluded.person, p256dh = excluded.p256dh, "
            "auth = excluded.auth, secret_hash = excluded.secret_hash, "
            "device = excluded.device, created_at = excluded.created_at",
            (*row[:-1], _iso(subscription.created_at)),
        )

    async def push_subscriptions(self, person: str | None = None) -> list[PushSubscription]:
        where, parameters = ("", ()) if person is None else (" WHERE person = ?", (person,))
        rows = await self._run(
            self._execute, f"{_PUSH_SUBSCRIPTIONS}{where} ORDER BY created_at, id", parameters
        )
        return [_push_subscription(row) for row in rows]

    async def push_subscription(self, subscription_id: str) -> PushSubscription | None:
        rows = await self._run(
            self._execute, f"{_PUSH_SUBSCRIPTIONS} WHERE id = ?", (subscription_id,)
        )
        return _push_subscription(rows[0]) if rows else None

    async def remove_push_subscription(
        self, subscription_id: str, person: str | None = None
    ) -> bool:
        rows = await self._run(
            self._execute,
            "DELETE FROM push_subscriptions WHERE id = ? AND (? IS NULL OR person = ?) RETURNING 1",
            (subscription_id, person, person),
        )
        return bool(rows)

    async def _watch(self, version: int) -> None:
        """Tell the tokens listeners whenever another connection has committed; check that the
        file is still there; while the store is at fault, whether the fault has cleared."""
        while True:
            await anyio.sleep(WATCH_INTERVAL)
            try:
                if self.stats.fault is not None:
                    await self._recover()
                else:
                    await self._run(self._check_file)
                    self._check_pace()
                if self._tokens_listeners or self._rules_listeners:
                    now = await self._run(self._data_version)
                    if now != version:
                        version = now
                        self._tokens_listeners.tell()
                        self._rules_listeners.tell()
            except UserQuestionError as error:  # a fault, reported once by the stats
                if error.code not in FAULT_CODES:
                    logger.warning("could not check %s for changes: %s", self.url, error)

    async def _recover(self) -> None:
        """Whether the fault has cleared: the disk has room again, the file is there again (or
        is written back), the disk keeps pace again; `stats.back()` once it has."""
        fault = self.stats.fault
        assert fault is not None
        how = ""
        try:
            if fault.code == ErrorCode.STORE_BUSY:
                if time.monotonic() - self._committed_at >= WATCH_INTERVAL:
                    await self._worker.run(self._probe)  # no commit to time lately: time one
                if self._commit_seconds >= SLOW_COMMIT / 2:
                    return
            elif fault.code == ErrorCode.STORE_FULL and self._free_space() < FREE_SPACE_MARGIN:
                return
            else:
                how = await self._worker.run(self._restore_file)
                await self._worker.run(self._probe)
        except (sqlite3.Error, _FileMoved):
            return  # not yet: the fault stays as it was reported
        self.stats.back(how)

    def _check_pace(self) -> None:
        """Report a slow disk (`STORE_BUSY`) while no other fault is reported."""
        slow = SLOW_COMMIT <= self._commit_seconds < math.inf
        if slow and self.stats.fault is None:
            self.stats.lost(
                UserQuestionError(
                    f"the disk of the store {self.url} is slow: its commits take "
                    f"{self._commit_seconds:.2f} s on average",
                    ErrorCode.STORE_BUSY,
                )
            )

    def _free_space(self) -> int:
        try:
            folder = os.statvfs(self.path.parent)
        except OSError:
            return 0
        return folder.f_bavail * folder.f_frsize

    # -- in the worker thread (and, for a fast commit, with the event loop waiting) ----------

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        try:
            return await self._worker.run(function, *args)
        except (sqlite3.Error, _FileMoved) as error:
            raise self._failed(error) from None

    async def _write(self, work: Callable[[], T], size: int = 0) -> T:
        try:
            return await self._writes.run(work, size)
        except UserQuestionError as error:
            if error.code == ErrorCode.STORE_BUSY:  # refused before it was queued
                self.stats.errors += 1
            raise
        except (sqlite3.Error, _FileMoved) as error:
            raise self._failed(error) from None
        finally:
            self._check_pace()

    def _failed(self, error: sqlite3.Error | _FileMoved) -> Exception:
        """What to raise for `error`: the fault it is (counted, reported once by the stats), or
        `error` itself when it is no fault of the disk or the file (a bug)."""
        fault = self._fault(error)
        if fault is None:
            self.stats.errors += 1
            return error
        self.stats.failed(fault)
        return fault

    def _fault(self, error: sqlite3.Error | _FileMoved) -> UserQuestionError | None:
        if isinstance(error, _FileMoved):
            return UserQuestionError(str(error), ErrorCode.STORE_UNAVAILABLE)
        name = getattr(error, "sqlite_errorname", "")
        if name.startswith("SQLITE_FULL"):
            return UserQuestionError(
                f"the disk of the store {self.url} is full ({error})", ErrorCode.STORE_FULL
            )
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            return UserQuestionError(
                f"the store {self.url} is locked by another process ({error})",
                ErrorCode.STORE_BUSY,
            )
        if name.startswith(_UNAVAILABLE):
            return UserQuestionError(
                f"the store {self.url} cannot be written ({error})", ErrorCode.STORE_UNAVAILABLE
            )
        return None

    def _commit(self, batch: Sequence[Work]) -> list[Any] | Awaitable[list[Any]]:
        # Not through `_run`: `_write` counts a failure once for each write it fails, and the
        # group commit waits for it uncancelled.
        if self._commit_seconds < INLINE_COMMIT_LIMIT and self._worker.idle:
            return self._worker.call(self._commit_batch, batch, wait=INLINE_WAIT)
        return self._worker.submit(self._commit_batch, batch)

    def _commit_batch(self, batch: Sequence[Work]) -> list[Any]:
        """`_commit_writes(batch)`, timed for the average that says how commits are waited for;
        refused when the file it went to is no longer the store's (`_check_file`)."""
        began = time.perf_counter()
        try:
            outcomes = self._commit_writes(batch)
        finally:
            self._time(time.perf_counter() - began)
        self._check_file()
        return outcomes

    def _time(self, seconds: float) -> None:
        average = self._commit_seconds
        if math.isinf(average):
            self._commit_seconds = seconds
        else:
            self._commit_seconds = average + (seconds - average) * _PACE_WEIGHT
        self._committed_at = time.monotonic()

    def _probe(self) -> None:
        """One small durable commit (the schema's version, written again as it is): whether
        the disk takes a write, and how fast."""
        began = time.perf_counter()
        db = self._db()
        version = db.execute("PRAGMA user_version").fetchone()[0]
        db.execute(f"PRAGMA user_version = {int(version)}")
        self._time(time.perf_counter() - began)

    def _check_file(self) -> None:
        """Raise `_FileMoved` unless the store's path still names the file it holds open."""
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            raise _FileMoved(
                f"the store's file {self.url} was deleted while the host runs; it is written "
                "back from the open database as soon as its folder takes it"
            ) from None
        except OSError as error:
            raise _FileMoved(f"the store's file {self.url} cannot be found: {error}") from None
        if (found.st_dev, found.st_ino) != self._file:
            raise _FileMoved(
                f"the store's file {self.url} was replaced by another file while the host "
                "runs; put the host's file back, or restart the host to use the new one"
            )

    def _restore_file(self) -> str:
        """Write the open database back to its path if the file was deleted, and reopen it
        there (the lock too, if it went with it); a replaced file is left alone. What it did,
        for the log."""
        old = self._connection
        if old is not None:
            if self.path.exists():
                self._check_file()  # `_FileMoved` while it is another file
                return ""
            try:
                copy_store(old, self.path, self.url)
            except UserQuestionError as error:  # its folder is gone, read-only, full
                message = f"the store's file {self.url} cannot be written back: {error}"
                raise _FileMoved(message) from None
            old.close()  # the last connection: SQLite removes the old -wal and -shm by name
            self._connection = None
        try:
            self._connection, _ = open_file(self.path, self.url, host=False)
        except UserQuestionError as error:
            message = f"the store's file {self.url} was written back but cannot be opened: {error}"
            raise _FileMoved(message) from None
        self._file = _identity(self.path)
        self._relock()
        return "its deleted file was written back from the open database"

    def _relock(self) -> None:
        """Hold `<file>.lock` again if it was deleted with the file."""
        held = self._lock_file
        if held is None:
            return
        with contextlib.suppress(OSError):
            if os.fstat(held.fileno()).st_ino == os.stat(f"{self.path}.lock").st_ino:
                return
        with contextlib.suppress(OSError, UserQuestionError):
            self._lock_file = lock(self.path)
            held.close()

    def _commit_writes(self, batch: Sequence[Work]) -> list[Any]:
        """Run `batch` in one transaction, each write in a savepoint of its own (one that fails
        is undone alone), and commit; one write alone runs in autocommit, as it is."""
        if len(batch) == 1:
            return [_outcome(batch[0])]
        db = self._db()
        outcomes = []
        with transaction(db):
            for work in batch:
                db.execute("SAVEPOINT write")
                outcome = _outcome(work)
                if isinstance(outcome, Exception):
                    db.execute("ROLLBACK TO write")
                db.execute("RELEASE write")
                outcomes.append(outcome)
        return outcomes

    def _open(self) -> None:
        self._connection, self._lock_file = open_file(self.path, self.url, host=self.host)
        self._file = _identity(self.path)

    def _close(self) -> None:
        self._file = None
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def _data_version(self) -> int:
        version: int = self._db().execute("PRAGMA data_version").fetchone()[0]
        return version

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            if self._file is not None:  # between writing the file back and opening it again
                raise _FileMoved(f"the store's file {self.url} is being written back")
            raise RuntimeError("the store is not open: use `async with store:`")
        return self._connection

    def _execute(self, sql: str, parameters: Sequence[object]) -> list[tuple[Any, ...]]:
        # fetchall() runs the statement to its end, which is what commits it in autocommit mode.
        return self._db().execute(sql, parameters).fetchall()

    def _query(self, sql: str, parameters: Sequence[object]) -> list[StoredQuestion]:
        # Rows are read into records here, in the worker thread, not on the event loop.
        return stored_questions(self._execute(sql, parameters), _moment)

    def _setting(self, key: str) -> str | None:
        row = self._db().execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        value: str | None = None if row is None else row[0]
        return value

    def _ensure_setting(self, key: str, default: str) -> str:
        db = self._db()
        with transaction(db):
            db.execute(
                "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (key, default),
            )
            value = self._setting(key)
        assert value is not None  # stored just now, or before
        return value

    def _atomic(self, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` in a savepoint: all of its statements are committed, or none (on its
        own, the savepoint is the transaction; in a group commit's, a part of it)."""
        db = self._db()
        outermost = not db.in_transaction
        db.execute("SAVEPOINT atomic")
        try:
            outcome = work(*args)
            db.execute("RELEASE atomic")  # outermost: the commit, which may fail too
        except BaseException:
            # Never leave a transaction open: the next autocommit write would join it, and
            # be acknowledged without ever being committed.
            if db.in_transaction:  # an error such as SQLITE_FULL may have ended it already
                if outermost:
                    db.execute("ROLLBACK")
                else:
                    db.execute("ROLLBACK TO atomic")
                    db.execute("RELEASE atomic")
            raise
        return outcome

    def _append(self, rpc_id: str, at: datetime, body: str) -> None:
        """Append the audit record `body` about `rpc_id` to the chain (in the caller's
        savepoint, after the write it records)."""
        seq, own = self._execute("SELECT seq, hash FROM audit_head", ())[0]
        following = chain_hash(own, body)
        self._execute(
            "INSERT INTO audit (seq, rpc_id, at, body, prev, hash) VALUES (?, ?, ?, ?, ?, ?)",
            (seq + 1, rpc_id, _iso(at), body, own, following),
        )
        self._execute(
            "UPDATE audit_head SET seq = ?, prev = ?, hash = ?", (seq + 1, own, following)
        )

    def _submit(
        self, question: NewQuestion, row: tuple[object, ...]
    ) -> tuple[StoredQuestion, bool]:
        inserted = self._db().execute(_SUBMIT, row)
        if inserted.rowcount == 1:  # stored as given: no need to read it back
            settlement = question.settlement
            if settlement is not None:  # a rule settled it: its record goes with it
                answer = row[15]
                assert answer is None or isinstance(answer, str)
                self._append(
                    question.rpc_id,
                    question.asked_at,
                    audit_body(
                        question.rpc_id, question.digest, settlement, answer, question.asked_at
                    ),
                )
            used = question.rules_used
            if used:
                self._execute(
                    "UPDATE rules SET hits = hits + 1, last_used_at = ? "
                    f"WHERE id IN ({', '.join('?' * len(used))})",
                    (row[3], *used),
                )
            return submitted_record(question), True
        existing = self._query(
            f"SELECT {_COLUMNS} FROM questions WHERE rpc_id = ?", (question.rpc_id,)
        )
        if not existing:  # not stored, and not there: the guard of `_SUBMIT` held it back
            raise RulesMoved(f"the rules moved past version {question.rules_version}")
        return existing[0], False


class _FileMoved(Exception):
    """The store's path no longer names the file its connection holds (deleted, replaced)."""


_UNAVAILABLE = (
    "SQLITE_IOERR",
    "SQLITE_READONLY",
    "SQLITE_CANTOPEN",
    "SQLITE_CORRUPT",
    "SQLITE_NOTADB",
    "SQLITE_PERM",
)
"""The SQLite errors (and their extended codes) of a file that cannot be read or written."""


def _identity(path: Path) -> tuple[int, int]:
    found = os.stat(path)
    return found.st_dev, found.st_ino


def _outcome(work: Work) -> Any:
    """What `work` returns, or the exception it raised."""
    try:
        return work()
    except Exception as error:
        return error


def _record(row: Sequence[Any]) -> StoredQuestion:
    return stored_question(row, _moment)


def _token(row: Sequence[Any]) -> TokenRecord:
    return token_record(row, _moment)


def _push_subscription(row: Sequence[Any]) -> PushSubscription:
    return PushSubscription(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], datetime.fromisoformat(row[7])
    )


def _moment(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


_iso = instant_text
"""A UTC instant as the store writes it."""


def _now() -> str:
    return _iso(datetime.now(UTC))
