"""`Rules`: a host's copy of the rules, current for every decision.

A rule made, changed or revoked decides every call asked after the command or request that made
it returned, whichever process or node made it. The copy follows the store's notices of a change
(`RuleStore.on_rules_change`), which may come late; what keeps each decision current is the
store's rules version (`RuleStore.rules_version`, moved in the same transaction as any change):

- a call a rule of the copy decides is decided at once, and the decision names the version it
  was made at (`Verdict.version`); the store commits the settled record only if its rules are
  still at that version, in the same transaction (`NewQuestion.rules_version`), and otherwise
  writes nothing (`RulesMoved`): the hub then reads the rules again and decides again, a few
  times at most, and then asks a person (never an allow on a doubt). So a rule revoked a moment
  ago by another process never settles a call, and a decided call costs no read of its own;
- a call no rule of the copy decides would go to a person: the host first reads the store's
  version (one small read) and, when it moved, the rules, and decides again, so that a rule
  another process made a moment ago still decides the very next call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import anyio

from user_questions._lifecycle.lifetime import AsyncLifetime
from user_questions.errors import UserQuestionError
from user_questions.frames import Approval
from user_questions.host._reloader import Reloader
from user_questions.host.rules.matching import Verdict, explain
from user_questions.host.stores import RuleRecord, RuleStore

__all__ = ["INLINE_READ", "RELOAD_RETRY", "Rules"]

RELOAD_RETRY = 1.0
"""Seconds before reloading the rules again when the store could not be read."""
INLINE_READ = 8192
"""Characters of a call's text read on the event loop (a few hundred microseconds at most);
a larger call (a long script, a big patch) is read in a worker thread, so that the host
serves its pages meanwhile."""


class Rules(AsyncLifetime):
    """A host's copy of the rules; use as `async with Rules(store) as rules`.

    `loaded` is `False` while the rules could not be read: the hub then asks a person (a
    failure never allows).
    """

    def __init__(self, store: RuleStore) -> None:
        self.store = store
        self._rules: tuple[RuleRecord, ...] = ()
        self._version: int | None = None
        self.loaded = False
        self._reloader = Reloader(self.reload, "the rules", RELOAD_RETRY)
        self._reloading = anyio.Lock()
        self._reading = anyio.CapacityLimiter(1)
        """One large call read at a time, off the event loop."""

    def __repr__(self) -> str:
        return f"<Rules {len(self._rules)} active, version {self._version}>"

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        stack.callback(self.store.on_rules_change(self._reloader.changed))
        await self.reload()
        following = await stack.enter_async_context(anyio.create_task_group())
        following.start_soon(self._reloader.follow)
        stack.callback(following.cancel_scope.cancel)

    async def current(self) -> tuple[RuleRecord, ...]:
        """The active rules as the store has them now: read again if its version moved.

        Raises:
            UserQuestionError: the store's code when it cannot be read (`loaded` is then
                `False`).
        """
        return (await self._current())[0]

    async def _current(self) -> tuple[tuple[RuleRecord, ...], int | None]:
        """`current()`, with the version the rules are at."""
        try:
            version = await self.store.rules_version()
        except UserQuestionError:
            self.loaded = False
            raise
        if version != self._version or not self.loaded:
            await self.reload()
        return self._rules, self._version

    async def decide(
        self, approval: Approval, asked_by: str | None, *, fresh: bool = False
    ) -> Verdict | None:
        """What the rules make of `approval`, with the version they were at; `None` when they
        cannot be read (a person decides: a failure never allows).

        A rule of this host's copy that decides the call decides it as it is (the store checks
        the version as it commits the decision); otherwise the copy is brought up to the
        store's first, so that a rule made elsewhere a moment ago decides it. `fresh`: the copy
        is brought up first in any case (the store said the rules moved: `RulesMoved`).
        """
        verdict = None
        if self.loaded and not fresh:
            rules, version = self._rules, self._version
            verdict = await self._explain(rules, approval, asked_by, version)
            if verdict.match is not None:
                return verdict
        try:
            rules, version = await self._current()
        except UserQuestionError:
            return None
        if verdict is not None and verdict.version == version:
            return verdict  # nothing moved: the copy's answer stands
        return await self._explain(rules, approval, asked_by, version)

    async def _explain(
        self,
        rules: tuple[RuleRecord, ...],
        approval: Approval,
        asked_by: str | None,
        version: int | None,
    ) -> Verdict:
        """`explain`, on the event loop for a small call and in a worker thread for a large
        one, naming `version`, the one `rules` are at."""
        if _weight(approval.input) <= INLINE_READ:
            verdict = explain(rules, approval, asked_by)
        else:
            verdict = await anyio.to_thread.run_sync(
                explain, rules, approval, asked_by, limiter=self._reading
            )
        return replace(verdict, version=version)

    async def reload(self) -> None:
        """Read the rules and their version again now."""
        async with self._reloading:
            try:
                version = await self.store.rules_version()
                records = await self.store.rules()
            except BaseException:
                self.loaded = False
                raise
            now = datetime.now(UTC)
            self._rules = tuple(record for record in records if record.active(now))
            self._version = version
            self.loaded = True


def _weight(arguments: Mapping[str, Any]) -> int:
    """The characters of a call's text arguments (its command, its patch, its words)."""
    total = 0
    for value in arguments.values():
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, list):
            total += sum(len(item) for item in value if isinstance(item, str))
    return total
