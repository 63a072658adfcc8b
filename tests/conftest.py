"""Shared fixtures: a real kernel with the core services, and the anyio backend; a deadline on
every async test.

Why the deadline: pytest-timeout's signal interrupts the event loop where it waits, and leaves
the test's coroutine suspended inside anyio's test runner, which runs one coroutine at a time;
the test's fixtures then wait for ever to be torn down behind it, and the run never ends. So
every async test is cancelled inside its loop after `TEST_DEADLINE` (it fails, cleans up, and
the session goes on), and pytest-timeout, which ends the whole process (`timeout_method =
"thread"`), is left for a test that cannot be cancelled.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.deadlines import TEST_DEADLINE, within
from tests.fuzz import profiles
from tests.pg import pg_cluster, pg_url  # noqa: F401 - PostgreSQL fixtures, one server per session
from tests.standin import StandIn
from user_questions import AgentRegistry, Context, ToolRegistry, UserQuestionService

profiles.register()  # before the hypothesis plugin loads one (`--hypothesis-profile long`)
# The product speaks the language of its environment (UQ_LANG, LC_ALL, LC_MESSAGES, LANG): the
# tests read its English whatever the machine's locale, and those of another language set their own.
os.environ["UQ_LANG"] = "en"


MARKED_FOLDERS: dict[str, tuple[str, ...]] = {
    "e2e": ("e2e",),
    "e2e/web": ("e2e", "browser"),
    "faults": ("faults",),
    "fuzz": ("fuzz",),
}
"""The markers each folder of tests/ gives its tests (pyproject.toml describes them): the quick
loop, `pytest -m "not e2e and not faults"`, leaves out what starts whole systems or breaks them."""

_TESTS = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.parent.relative_to(_TESTS).as_posix()
        for marked, names in MARKED_FOLDERS.items():
            if folder == marked or folder.startswith(marked + "/"):
                for name in names:
                    item.add_marker(name)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def ctx() -> Context:
    """A fresh app with `ctx.agents`, `ctx.user_questions` and `ctx.tools`."""
    context = Context()
    context.plugin(AgentRegistry)
    context.plugin(UserQuestionService)
    context.plugin(ToolRegistry)
    return context


@pytest.fixture(scope="session")
def stand_in() -> Iterator[StandIn]:
    """The misbehaving stand-in host (tests/standin.py), one for the whole run: each case is a
    path of its own, and what each saw is kept apart."""
    running = StandIn().start()
    yield running
    running.stop()


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Run an async test under `TEST_DEADLINE` (anyio's plugin runs it, inside this wrapper)."""
    test = pyfuncitem.obj
    if not inspect.iscoroutinefunction(test):
        return (yield)

    @functools.wraps(test)
    async def bounded(**kwargs: Any) -> Any:
        with within(TEST_DEADLINE, "the test to end (TEST_DEADLINE); it was cancelled"):
            return await test(**kwargs)

    pyfuncitem.obj = bounded
    try:
        return (yield)
    finally:
        pyfuncitem.obj = test
