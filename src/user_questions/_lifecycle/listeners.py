"""`Listeners`: functions told of something, in the order they were added.

Each is added with the disposer that removes it (that registration alone: a stale disposer never
removes a later one, and calling it twice is harmless). One that raises is logged, with a line that
says which listeners and about what, and the others are still told: a notifier or an audit log must
never break what it observes, nor keep the rest from learning of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Generic, ParamSpec

from user_questions._lifecycle.disposer import Disposer

__all__ = ["Listeners"]

P = ParamSpec("P")


class Listeners(Generic[P]):
    """The listeners of one thing, told with `tell(*args)`.

    `raised` says in the log which listeners raised: a line, or a function of `tell`'s arguments
    that writes it (`lambda record: f"an event listener raised on question {record.rpc_id}"`).
    """

    __slots__ = ("_added", "_logger", "_raised")

    def __init__(self, logger: logging.Logger, raised: str | Callable[P, str]) -> None:
        self._logger = logger
        self._raised = raised
        self._added: dict[object, Callable[P, object]] = {}

    def __bool__(self) -> bool:
        return bool(self._added)

    def __len__(self) -> int:
        return len(self._added)

    def __iter__(self) -> Iterator[Callable[P, object]]:
        """The listeners, in the order they were added."""
        return iter(tuple(self._added.values()))

    def add(self, listener: Callable[P, object]) -> Disposer:
        """Tell `listener` from now on; returns the function that stops it."""
        key = object()
        self._added[key] = listener
        return lambda: self._added.pop(key, None) and None

    def clear(self) -> None:
        """Forget every listener (their disposers become harmless)."""
        self._added.clear()

    def tell(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """Call every listener with the arguments, in the order they were added; those added or
        removed meanwhile are told, or not, from the next call on."""
        for listener in tuple(self._added.values()):
            try:
                listener(*args, **kwargs)
            except Exception:
                said = self._raised
                self._logger.exception(said if isinstance(said, str) else said(*args, **kwargs))
