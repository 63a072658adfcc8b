"""Binding and announcing: loopback detection, a bound socket, the printed URL; the process a
host runs in."""

from __future__ import annotations

import gc
import os
import signal
import socket

import pytest
from starlette.applications import Starlette

from user_questions.host.server import FULL_COLLECTION_AFTER, bind, host_url, is_loopback, run


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("example.com", False),
    ],
)
def test_only_this_machine_counts_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_port_zero_binds_a_free_port_and_the_url_carries_it() -> None:
    with bind("127.0.0.1", 0) as sock:
        port = sock.getsockname()[1]
        assert port != 0
        assert host_url(sock, "127.0.0.1", "tok") == f"http://127.0.0.1:{port}/?token=tok"


def test_a_busy_port_is_an_os_error() -> None:
    with bind("127.0.0.1", 0) as first:
        first.listen()
        with pytest.raises(OSError):  # noqa: PT011 - the errno depends on the platform
            bind("127.0.0.1", first.getsockname()[1])


def test_an_ipv6_url_puts_the_address_in_brackets() -> None:
    try:
        sock = bind("::1", 0)
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with sock:
        assert host_url(sock, "::1", "t").startswith("http://[::1]:")
        assert sock.family == socket.AF_INET6


def test_a_hosts_process_considers_full_collections_less_often_and_young_ones_as_before() -> None:
    before = gc.get_threshold()
    with bind("127.0.0.1", 0) as sock:
        sock.listen()
        try:  # stopped as soon as it serves, as Ctrl-C stops it
            run(Starlette(), [sock], started=lambda: os.kill(os.getpid(), signal.SIGINT))
            serving = gc.get_threshold()
        finally:
            gc.set_threshold(*before)
    assert serving == (before[0], before[1], FULL_COLLECTION_AFTER)
