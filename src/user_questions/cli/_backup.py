"""`uq backup DEST`: a consistent copy of a host's SQLite store, taken while the host runs.

Opens the store as `uq token` does, beside the running host (`_beside`), and copies it with SQLite's
online backup API (`SQLiteStore.backup`): the copy holds every request committed when it began, and
the host is never paused. Prints one line on stdout, what the copy holds. A PostgreSQL store is
backed up with PostgreSQL's own tools (`pg_dump`), which the error says. Exit statuses: 0 copied, 1
the copy could not be written, 2 bad input (a destination that exists, no store there, a PostgreSQL
store).
"""

from __future__ import annotations

from user_questions.cli._beside import with_store
from user_questions.cli._serve import fail
from user_questions.cli._store_option import OldDb, StoreOption, chosen_store
from user_questions.errors import UserQuestionError
from user_questions.host.stores import Store, default_store_path, open_store
from user_questions.host.stores.sqlite import BackupSummary, SQLiteStore

__all__ = ["backup"]


def backup(
    destination: str,
    /,
    *,
    store: StoreOption = None,
    db: OldDb = None,
) -> None:
    """Copy a host's SQLite store to DESTINATION, a new file, while the host runs.

    Parameters
    ----------
    destination
        The file to write; it must not exist.
    """
    chosen = chosen_store("backup", store, db)
    try:
        kind = open_store(chosen or str(default_store_path()), host=False)
    except UserQuestionError as error:
        fail("backup", error.message, 2)
    if not isinstance(kind, SQLiteStore):
        fail("backup", f"{kind.url} is not a SQLite store: back it up with pg_dump", 2)

    async def work(opened: Store) -> BackupSummary:
        assert isinstance(opened, SQLiteStore)
        return await opened.backup(destination)

    summary = with_store("backup", chosen, work)
    print(
        f"backed up {summary.requests} requests ({summary.pending} pending) to "
        f"{summary.destination}",
        flush=True,
    )
