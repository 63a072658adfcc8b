"""Fuzzing the host's three channels in this process (uvicorn in a thread, real sockets): every
input gets a documented reply with a code, the socket stays open where the protocol keeps it
open, the host serves a real ask after every input, and it logs no error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given

from tests.fuzz.hosts import TOKEN, Channels, HostLog, in_process_host
from tests.fuzz.oracle import fail
from tests.fuzz.profiles import fuzz_settings
from tests.fuzz.strategies import Probe, channel_probes


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Channels, HostLog]]:
    with in_process_host(tmp_path_factory.mktemp("fuzz")) as (base, log):
        channels = Channels(base, TOKEN)
        yield channels, log
        channels.close()


@pytest.mark.parametrize(
    "channel",
    [
        pytest.param("ask", id="the asker socket"),
        pytest.param("page", id="the page socket"),
        pytest.param("http", id="POST /api/respond"),
    ],
)
def test_every_input_gets_a_documented_reply_and_the_host_serves_on(
    host: tuple[Channels, HostLog], channel: str
) -> None:
    channels, log = host

    @fuzz_settings()
    @given(channel_probes(channel))
    def each(probe: Probe) -> None:
        channels.try_on(channel, probe)
        channels.real_ask()

    each()
    if log.errors:
        fail("log", f"the host logged {len(log.errors)} errors, first: {log.errors[0]}")
