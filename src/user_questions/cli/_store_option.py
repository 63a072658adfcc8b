"""`--store` (else `$UQ_STORE`): the store of a host, as `uq serve` and every command beside it
name it.

Its old names, `--db` and `$UQ_DB`, still work: the first use in a process says once on stderr
that it is deprecated and will be removed in the next release (as `--host` was retired for
`--url`). A name given on the command line wins over one in the environment, the new name over
the old.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

from cyclopts import Parameter

__all__ = ["STORE_HELP", "OldDb", "StoreOption", "chosen_store", "given_store"]

STORE_HELP = (
    "The host's store: a SQLite file or a store URL (postgresql://...). Default: $UQ_STORE, else "
    "host.db in $XDG_STATE_HOME/user-questions (~/.local/state/user-questions)."
)

StoreOption = Annotated[str | None, Parameter(name="--store", help=STORE_HELP)]
OldDb = Annotated[str | None, Parameter(name="--db", show=False)]
"""`--db`, the old name of `--store` (deprecated)."""

_said: set[str] = set()


def given_store(command: str, store: str | None, db: str | None) -> str | None:
    """The store named on the command line: `--store`, else `--db` (deprecated)."""
    if store is not None or db is None:
        return store
    _deprecated(command, "--db", "--store")
    return db


def chosen_store(command: str, store: str | None, db: str | None) -> str | None:
    """The store a command is given: `--store`, `--db` (deprecated), `$UQ_STORE`, `$UQ_DB`
    (deprecated), in that order; `None` for the default one."""
    given = given_store(command, store, db)
    if given is not None:
        return given
    if "UQ_STORE" in os.environ:
        return os.environ["UQ_STORE"]
    if "UQ_DB" in os.environ:
        _deprecated(command, "UQ_DB", "UQ_STORE")
        return os.environ["UQ_DB"]
    return None


def _deprecated(command: str, old: str, new: str) -> None:
    if old in _said:
        return
    _said.add(old)
    print(
        f"uq {command}: {old} is deprecated and will be removed in the next release; use {new}",
        file=sys.stderr,
    )
