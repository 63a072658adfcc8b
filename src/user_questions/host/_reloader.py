"""`Reloader`: keep a host's copy of something the store holds (the tokens, the rules) up to
date with the store's notices that it changed.

anyio only. Notices come as calls from the store (another process wrote, a node sent a NOTIFY);
several that arrive during one reload make one more reload, not several, and a reload that fails
(the store cannot be read for now) is tried again after `retry` seconds, logged once per try,
never raised: the copy stays as it was until the store answers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio

from user_questions.errors import UserQuestionError

__all__ = ["Reloader"]

logger = logging.getLogger("user_questions.host")


class Reloader:
    """Runs `reload` after each `changed()` notice, one reload at a time, while `follow()` runs."""

    def __init__(self, reload: Callable[[], Awaitable[None]], what: str, retry: float) -> None:
        self._reload = reload
        self._what = what
        self._retry = retry
        self._changed = anyio.Event()

    def __repr__(self) -> str:
        return f"<Reloader of {self._what}>"

    def changed(self) -> None:
        """The store's notice: reload soon (at once if no reload is running)."""
        self._changed.set()

    async def follow(self) -> None:
        """Reload after each notice, until cancelled; retry while the store cannot be read."""
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            try:
                await self._reload()
            except UserQuestionError as error:
                logger.warning("could not reload %s: %s", self._what, error)
                await anyio.sleep(self._retry)
                self._changed.set()
