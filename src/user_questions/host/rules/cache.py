"""`Rules`: a host's copy of the rules, current for every decision.

A rule made, changed or revoked decides every call asked after the command or request that made
it returned, whichever process or node made it: before each decision the host reads the store's
rules version (`RuleStore.rules_version`, one small read), and reads the rules again when it has
moved. Between decisions the copy also follows the store's notices of a change
(`RuleStore.on_rules_change`), so that the read before a decision rarely has anything to load.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
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
        try:
            version = await self.store.rules_version()
        except UserQuestionError:
            self.loaded = False
            raise
        if version != self._version or not self.loaded:
            await self.reload()
        return self._rules

    async def decide(self, approval: Approval, asked_by: str | None) -> Verdict | None:
        """What the rules as they are now make of `approval`; `None` when they cannot be
        read (a person decides: a failure never allows)."""
        try:
            rules = await self.current()
        except UserQuestionError:
            return None
        if _weight(approval.input) <= INLINE_READ:
            return explain(rules, approval, asked_by)
        return await anyio.to_thread.run_sync(
            explain, rules, approval, asked_by, limiter=self._reading
        )

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
