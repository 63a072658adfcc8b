"""`Record`: what a frozen dataclass gives the hook's small value classes (equality, a hash, a
repr, no new attributes), without importing `dataclasses`.

`dataclasses` imports `inspect` (and with it `ast`, `dis`, `tokenize`): milliseconds of every
`uq hook` process's start, which Claude Code and Codex pay on every tool call (docs/performance.md,
"A call a rule decides"). A subclass lists its fields in `__slots__` and sets them in its own
`__init__`, where mypy checks its signature.
"""

from __future__ import annotations

__all__ = ["Record"]


class Record:
    """A value made of the fields in its class's `__slots__`, compared, hashed and shown by them
    in that order; `_UNCOMPARED` names fields left out of equality and the hash (a start time)."""

    __slots__ = ()
    _UNCOMPARED: frozenset[str] = frozenset()

    def _names(self) -> tuple[str, ...]:
        return self.__slots__

    def _compared(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._names() if name not in self._UNCOMPARED)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or type(other) is not type(self):
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names())
        return f"{type(self).__name__}({fields})"
