"""A host on SQLite whose disk turns slow under load, each fsync taking 0.5 to 2 s
(`slow_fsync.c`, preloaded into the real `uq serve`): asks queue and are committed together, none
is refused for the pace alone and none times out; pages stay live (a ping is answered at once);
`/healthz` keeps answering at once and `/readyz` says `STORE_BUSY`; the log says it once as it
starts and once as it ends; the host is ready again by itself once the disk is fast."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import anyio
import pytest

from tests.e2e.host_process import HostProcess
from tests.faults.conftest import SlowDisk
from tests.faults.harness import (
    Asker,
    Page,
    fault_lines,
    health,
    page_pongs,
    readiness,
    tracebacks,
    until_ready,
)

pytestmark = pytest.mark.anyio

ASKERS = 8
SLOW_SECONDS = 8.0
"""How long the disk stays slow: several commits, each of 0.5 to 2 s."""


async def test_a_slow_disk_queues_asks_keeps_pages_live_and_says_so(
    slow_disk: SlowDisk, tmp_path: Path
) -> None:
    log = tmp_path / "host.log"
    host = HostProcess(tmp_path / "uq.db", log=log, env=slow_disk.env)
    host.start()
    waits: list[float] = []
    replies: list[str] = []
    rtts: list[float] = []
    try:
        with health(host.base) as monitor:
            page = Page(host)
            stop = anyio.Event()

            async def ask_on(asker: Asker, prefix: str) -> None:
                index = 0
                while not stop.is_set():
                    began = time.monotonic()
                    reply = await asker.ask(f"{prefix}-{index}")
                    waits.append(time.monotonic() - began)
                    replies.append(reply.get("code", reply["type"]))
                    index += 1

            async with contextlib.AsyncExitStack() as stack:
                asked = [await stack.enter_async_context(Asker(host).open()) for _ in range(ASKERS)]
                await stack.enter_async_context(page.running())
                async with anyio.create_task_group() as load:
                    load.start_soon(page_pongs, host, rtts, stop)
                    for number, asker in enumerate(asked):
                        load.start_soon(ask_on, asker, f"a{number}")
                    await anyio.sleep(1)  # a fast disk first
                    slow_disk.slow()
                    slowed = time.monotonic()
                    await until_ready(host, 503, SLOW_SECONDS)
                    assert await readiness(host) == (503, "STORE_BUSY")
                    await anyio.sleep(slowed + SLOW_SECONDS - time.monotonic())
                    slow_disk.fast()
                    recovery = await until_ready(host, 200, 20)
                    stop.set()
                for asker in asked:
                    await asker.all_settled(asker.acked)
            rpc_ids = {rpc_id for asker in asked for rpc_id in asker.acked}
        print(
            f"slow disk: {len(replies)} asks, {replies.count('ask/pending')} acknowledged, "
            f"the longest waited {max(waits):.2f} s for its reply; page pongs within "
            f"{max(rtts):.3f} s; ready again {recovery:.2f} s after the disk was fast; "
            f"{monitor.report()}"
        )
        assert set(replies) == {"ask/pending"}  # queued, none refused, none timed out
        assert len(rpc_ids) == len(replies)
        assert all(len(asker.settled[rpc_id]) == 1 for asker in asked for rpc_id in asker.acked)
        assert max(rtts) < 1.0  # the page is live while the disk is slow
        monitor.check()
    finally:
        assert host.stop() == 0
    lines = fault_lines(log)
    assert len(lines) == 2, lines
    assert "STORE_BUSY" in lines[0]
    assert "cleared" in lines[1]
    assert tracebacks(log) == 0
