"""The store under test: every contract test runs against each backend listed in `STORES`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from user_questions.host.stores import Store, open_store

StoreFactory = Callable[..., Store]
"""`make_store()` opens a host's handle; `make_store(host=False)` a command's, beside it."""

STORES = ["sqlite", "postgresql"]
"""Backends the contract tests run against (PostgreSQL: a real server, see `tests/pg.py`)."""
TELLS_CHANGES = {"sqlite": False, "postgresql": True}
"""Whether a host's store of the backend tells its change listeners of writes made through other
handles: SQLite has one host per file, so it never calls them."""


@pytest.fixture(params=STORES)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Opens (with `async with`) new handles on one fresh store of the backend."""
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")  # a fresh database for this test
        return lambda host=True: open_store(url, host=host)
    return lambda host=True: open_store(tmp_path / "host.db", host=host)


@pytest.fixture
async def store(make_store: StoreFactory) -> AsyncIterator[Store]:
    async with make_store() as opened:
        yield opened


@pytest.fixture
def tells_changes(make_store: StoreFactory, request: pytest.FixtureRequest) -> bool:
    """Whether `make_store`'s backend calls change listeners (`TELLS_CHANGES`)."""
    return TELLS_CHANGES[request.node.callspec.params["make_store"]]
