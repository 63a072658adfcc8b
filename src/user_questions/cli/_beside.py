"""What `uq token` and `uq history` share: opening a host's store beside the running host.

The store is the one `uq serve` uses (`--store`, `UQ_STORE`, else the default state folder), opened
with `host=False`: no lock and no listening, so the host keeps running while a command reads or
changes the store. Errors become one line on stderr and an exit status: 2 for bad input (an unknown
or unusable store, a bad name, ...), 1 for a store that cannot be reached.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TypeVar

import anyio

from user_questions.cli._serve import fail
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import Store, default_store_path, open_store

__all__ = ["local_time", "print_columns", "with_store"]

T = TypeVar("T")

_UNREACHABLE = frozenset({ErrorCode.STORE_UNAVAILABLE})


def with_store(command: str, db: str | None, work: Callable[[Store], Awaitable[T]]) -> T:
    """Run `work` on the store `db` names, beside any host running on it; a failure is one line
    on stderr (`uq <command>: ...`) and exit status 2 (bad input) or 1 (store unreachable)."""

    async def run() -> T:
        async with open_store(db or str(default_store_path()), host=False) as store:
            return await work(store)

    try:
        return anyio.run(run)
    except UserQuestionError as error:
        fail(command, error.message, 1 if error.code in _UNREACHABLE else 2)


def local_time(moment: datetime | None) -> str:
    """`moment` in this machine's time zone, to the minute; `-` for none."""
    return "-" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M")


def print_columns(rows: Sequence[Sequence[str]], sized: int) -> None:
    """Print `rows` (the header first) as a table: the first `sized` columns as wide as their
    longest cell, the others (`local_time`s) 16 characters each."""
    widths = [max(len(row[column]) for row in rows) for column in range(sized)]
    for row in rows:
        head = "".join(f"{cell:<{width}}  " for cell, width in zip(row, widths, strict=False))
        print(head + "  ".join(f"{time:<16}" for time in row[sized:]).rstrip())
