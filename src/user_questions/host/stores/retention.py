"""Retention: the records of settled requests deleted once they are older than asked.

`keep_records` deletes, when `uq serve --retain-days N` asks for it, the requests settled more than
N days ago, at start-up and every `RETENTION_INTERVAL`. Pending requests are never deleted, however
old.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import anyio

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import HistoryStore, Seal

__all__ = [
    "MAX_RETAIN_DAYS",
    "RETENTION_INTERVAL",
    "check_retain_days",
    "keep_records",
]

logger = logging.getLogger("user_questions.host")

RETENTION_INTERVAL = 3600.0
"""Seconds between two deletions of expired records."""
MAX_RETAIN_DAYS = 36_500
"""The longest retention `--retain-days` takes (a hundred years); omit it to keep everything."""


def check_retain_days(days: int) -> int:
    """`days` if it can serve as a retention period.

    Raises:
        UserQuestionError: `BAD_REQUEST` unless it is 1 to `MAX_RETAIN_DAYS`.
    """
    if not 1 <= days <= MAX_RETAIN_DAYS:
        raise UserQuestionError(
            f"--retain-days must be a whole number of days from 1 to {MAX_RETAIN_DAYS}, "
            f"got {days}; leave it out to keep every record",
            ErrorCode.BAD_REQUEST,
        )
    return days


async def keep_records(store: HistoryStore, days: int, seal: Seal | None = None) -> None:
    """Delete the requests settled more than `days` days ago, now and every
    `RETENTION_INTERVAL`, until cancelled. A failure is logged and tried again next time.

    Their audit records go too when `seal` signs the checkpoint that says so (the host's audit
    key); without it they are kept, and the chain stays whole."""
    while True:
        cutoff = datetime.now(UTC) - timedelta(days=days)
        try:
            deleted = await store.purge(cutoff, seal)
        except UserQuestionError as error:
            logger.warning("could not delete records settled before %s: %s", cutoff, error)
        else:
            if deleted:
                logger.info("deleted %d records settled before %s", deleted, cutoff)
        await anyio.sleep(RETENTION_INTERVAL)
