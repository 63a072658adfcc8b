"""Fixtures shared by the whole-system tests."""

from __future__ import annotations

import os
import subprocess
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


def start_hook(command: list[str], event: str, folder: Path) -> subprocess.Popen[str]:
    """The hook `command` as Claude Code runs it, with `event` on its stdin (a file, so that the
    test may act while it waits); the environment's UQ_ variables left out."""
    (folder / "event.json").write_text(event, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    with (folder / "event.json").open(encoding="utf-8") as stdin:
        return subprocess.Popen(
            command,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )


@pytest.fixture
def hooks() -> Iterator[list[subprocess.Popen[str]]]:
    """Hooks a test starts; any still running at its end is killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        with process:
            if process.poll() is None:
                process.kill()
