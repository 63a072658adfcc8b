"""A host stopped with SIGSTOP for 30 s, then continued, while askers wait and a page answers:
the page's answers sent meanwhile wait in the socket, the askers' and the page's connections
time out and come back, and every ask is answered exactly once (one answer accepted per request,
one answer per ask), with `/healthz` answering at once before and after."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio
import pytest

from tests.e2e.host_process import HostProcess
from tests.faults.harness import SESSION, Page, health
from tests.faults.test_postgres import Asks, stored_sqlite
from user_questions.providers.remote import RemoteProvider

pytestmark = pytest.mark.anyio

STOPPED = 30.0
"""Seconds the host is stopped (the issue's figure): longer than a WebSocket keepalive's 20 s."""


async def test_a_host_stopped_and_continued_loses_no_answer_and_doubles_none(
    tmp_path: Path,
) -> None:
    host = HostProcess(tmp_path / "uq.db", log=tmp_path / "host.log")
    host.start()
    assert host.process is not None
    try:
        with health(host.base) as monitor:
            page = Page(host)
            provider = RemoteProvider(host.url, session=SESSION)
            async with page.running(answering=False), provider, anyio.create_task_group() as tasks:
                asks = Asks(provider, tasks)
                for index in range(5):
                    asks.ask(f"waiting-{index}")
                await anyio.to_thread.run_sync(host.wait_pending, 5)
                await anyio.sleep(1)  # the probe watches a host at work first
                os.kill(host.process.pid, signal.SIGSTOP)
                stopped = time.monotonic()
                page.go.set()  # answers, into the socket of a host that does not read
                await anyio.sleep(STOPPED)
                os.kill(host.process.pid, signal.SIGCONT)
                continued = time.monotonic()
                for index in range(3):
                    asks.ask(f"after-{index}")
                await asks.all_answered(8, 40)
                took = time.monotonic() - continued
                await anyio.sleep(1)  # and after
        print(
            f"SIGSTOP {STOPPED:g} s: every ask answered {took:.2f} s after SIGCONT; the page "
            f"connected {page.connections} times; {monitor.report((stopped, continued))}"
        )
        assert asks.answers == {name: ["yes"] for name in asks.answers}
        assert sorted(page.accepted) == sorted(set(page.accepted))  # no request answered twice
        monitor.check((stopped, continued))
    finally:
        if host.process.poll() is None:
            os.kill(host.process.pid, signal.SIGCONT)
        assert host.stop() == 0
    assert stored_sqlite(tmp_path / "uq.db") == dict.fromkeys(asks.answers, "answered")
