"""Fuzzing a real `uq serve` over real sockets, on SQLite and on PostgreSQL: inputs on all three
channels in any order, each answered as documented, a real ask served after every one, and not
one error in the host's log when it stops."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.e2e.host_process import HostProcess
from tests.fuzz.hosts import Channels
from tests.fuzz.oracle import fail
from tests.fuzz.profiles import fuzz_settings
from tests.fuzz.strategies import Probe, channel_probes

CHANNELS = st.sampled_from(["ask", "page", "http"]).flatmap(
    lambda channel: channel_probes(channel).map(lambda probe: (channel, probe))
)


@pytest.fixture(params=["sqlite", "postgresql"])
def host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HostProcess]:
    if request.param == "postgresql":
        running = HostProcess(None, args=("--store", request.getfixturevalue("pg_url")))
    else:
        running = HostProcess(tmp_path / "uq.db")
    running.start()
    yield running
    if running.process is not None and running.process.poll() is None:
        running.stop()


@contextlib.contextmanager
def drained(host: HostProcess) -> Iterator[list[str]]:
    """What the host writes to stderr, read as it comes (a host that logs a lot must never block
    on a full pipe), until the block stops it with SIGTERM; it must then exit 0."""
    process = host.process
    assert process is not None
    assert process.stderr is not None
    stderr, lines = process.stderr, list[str]()
    reader = threading.Thread(
        target=lambda: lines.extend(line.decode() for line in stderr), daemon=True
    )
    reader.start()
    try:
        yield lines
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        reader.join(timeout=30)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def test_a_real_host_answers_every_input_on_every_channel_as_documented(
    host: HostProcess,
) -> None:
    channels = Channels(host.base, host.token)

    @fuzz_settings(percent=50)
    @given(CHANNELS)
    def each(sent: tuple[str, Probe]) -> None:
        channels.try_on(*sent)
        channels.real_ask()

    with drained(host) as logged_lines:
        try:
            each()
        finally:
            channels.close()
    logged = "".join(logged_lines).strip()
    if logged:
        fail("log", f"uq serve wrote to stderr: {logged[:2000]}")
