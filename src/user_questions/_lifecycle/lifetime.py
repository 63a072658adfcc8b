"""`AsyncLifetime`: the base of an object used as `async with obj:` that runs things meanwhile.

A subclass enters what it runs (task groups, stores, other lifetimes) in `_start` on an
`AsyncExitStack`, with callbacks that stop them; leaving the `async with` unwinds that stack in
reverse. Nothing enters or leaves a context by hand, and a failure halfway through `_start` unwinds
what had started.
"""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import Self

__all__ = ["AsyncLifetime"]


class AsyncLifetime:
    """Base of an async context manager whose resources live on an `AsyncExitStack`."""

    _exit_stack: contextlib.AsyncExitStack | None = None

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        """Enter what runs while the object is open; leaving unwinds `stack` in reverse."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        async with contextlib.AsyncExitStack() as stack:
            await self._start(stack)
            self._exit_stack = stack.pop_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._exit_stack = self._exit_stack, None
        if stack is not None:
            await stack.aclose()
