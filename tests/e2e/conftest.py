"""Fixtures shared by the whole-system tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.host_process import HostProcess
from tests.e2e.pty_terminal import PtyTerminal


@pytest.fixture
def spawn() -> Iterator[type[PtyTerminal]]:
    """Start programs in pseudo-terminals; every one still running at the end is killed."""
    started: list[PtyTerminal] = []

    class Started(PtyTerminal):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            started.append(self)

    yield Started
    for terminal in started:
        terminal.close()


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostProcess]:
    """`uq serve` on a store of its own, for this test alone: the e2e tests' one host. Stopped
    after the test, cleanly (exit status 0), unless the test stopped it already."""
    running = HostProcess(tmp_path / "uq.db")
    running.start()
    yield running
    if running.process is not None and running.process.poll() is None:
        assert running.stop() == 0
