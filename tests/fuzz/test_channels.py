"""Fuzzing the host's three channels in this process (uvicorn in a thread, real sockets): every
input gets a documented reply with a code, the socket stays open where the protocol keeps it
open, the host serves a real ask after every input, and it logs no error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given

from tests.fuzz.hosts import TOKEN, Channels, HostLog, in_process_host
from tests.fuzz.oracle import (
    check_asker_reply,
    check_http_reply,
    check_page_reply,
    fail,
)
from tests.fuzz.profiles import fuzz_settings
from tests.fuzz.strategies import Probe, asker_probes, page_probes


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Channels, HostLog]]:
    with in_process_host(tmp_path_factory.mktemp("fuzz")) as (base, log):
        channels = Channels(base, TOKEN)
        yield channels, log
        channels.close()


def no_errors_logged(log: HostLog) -> None:
    if log.errors:
        fail("log", f"the host logged {len(log.errors)} errors, first: {log.errors[0]}")


def test_the_asker_socket_answers_every_frame_with_a_documented_reply(
    host: tuple[Channels, HostLog],
) -> None:
    channels, log = host

    @fuzz_settings()
    @given(asker_probes())
    def each(probe: Probe) -> None:
        check_asker_reply(probe, channels.ask_socket(probe))
        channels.real_ask()

    each()
    no_errors_logged(log)


def test_the_page_socket_answers_every_frame_with_a_documented_reply(
    host: tuple[Channels, HostLog],
) -> None:
    channels, log = host

    @fuzz_settings()
    @given(page_probes())
    def each(probe: Probe) -> None:
        check_page_reply(probe, channels.page_socket(probe))
        channels.real_ask()

    each()
    no_errors_logged(log)


def test_the_http_api_answers_every_body_with_a_documented_status(
    host: tuple[Channels, HostLog],
) -> None:
    channels, log = host

    @fuzz_settings()
    @given(page_probes())
    def each(probe: Probe) -> None:
        check_http_reply(probe, channels.respond(probe))
        channels.real_ask()

    each()
    no_errors_logged(log)
