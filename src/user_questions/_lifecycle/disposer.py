"""`Disposer`, a function that undoes a registration, and `nothing`, the one that undoes nothing.

A registration that never took effect (a listener added to a signal that has already aborted, a
store that never calls its listeners) still hands back a disposer, so callers never test for `None`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

__all__ = ["Disposer", "nothing"]

Disposer: TypeAlias = Callable[[], None]
"""Undoes one registration; calling it again is harmless."""


def nothing() -> None:
    """The disposer of a registration that left nothing to undo."""
