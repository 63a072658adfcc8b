"""Bounded waits: a block of a test that must end in time, or the test fails saying what it
was waiting for, with the traceback of where it waited.

Every wait in an async test is bounded, so a broken test fails instead of hanging; `within`
is `anyio.fail_after` with a message. The whole of every async test is bounded the same way
(`TEST_DEADLINE`, applied in tests/conftest.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import anyio
import pytest

__all__ = ["TEST_DEADLINE", "within"]

TEST_DEADLINE = 60.0
"""Seconds an async test may run before it is cancelled and fails. Cancelling it inside its
event loop runs its cleanup and lets the session go on; pytest-timeout (`timeout` in
pyproject.toml, longer) only ends the whole run, for a test that cannot be cancelled."""


@contextlib.contextmanager
def within(seconds: float, what: str) -> Iterator[None]:
    """Fail the test ("waited N s for `what`") unless the block ends within `seconds`.

    A `TimeoutError` of a deadline inside the block passes through as it is.
    """
    try:
        with anyio.fail_after(seconds) as scope:
            yield
    except TimeoutError:
        if not scope.cancelled_caught:
            raise
        pytest.fail(f"waited {seconds:g} s for {what}")
