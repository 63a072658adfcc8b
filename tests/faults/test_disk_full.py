"""A host on SQLite whose disk fills while askers ask and a page answers (a tmpfs of its own):
every ask and answer the disk cannot take is refused with `STORE_FULL`, none with a bug's code;
`/readyz` says so and `/healthz` keeps answering at once; the log says it once as it starts and
once as it ends; and once space is freed the host takes asks again by itself. Nothing it
acknowledged is lost, and an asker through `RemoteProvider` waits the fault out."""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest

from tests.e2e.host_process import HostProcess
from tests.faults.harness import (
    SESSION,
    Asker,
    Page,
    fault_lines,
    fill,
    health,
    readiness,
    tracebacks,
    until_ready,
)
from user_questions import AskUserQuestionItem, AskUserQuestionOption, AskUserQuestionRequest
from user_questions.providers.remote import RemoteProvider

pytestmark = pytest.mark.anyio

DETAIL = "x" * 20_000
"""A detail that makes each ask a row of some 60 KB (its text, search text, rendered HTML)."""


async def remote_ask(host: HostProcess, results: dict[str, str]) -> None:
    item = AskUserQuestionItem(
        id="remote",
        question="Asked while the disk is full?",
        options=[AskUserQuestionOption(label="yes"), AskUserQuestionOption(label="no")],
    )
    async with RemoteProvider(host.url, session=SESSION) as provider:
        answer = await provider.ask(AskUserQuestionRequest(questions=[item]))
    results["remote"] = answer.answers[0].selected[0]


async def test_a_full_disk_refuses_with_store_full_loses_nothing_and_recovers(
    small_disk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "host.log"
    host = HostProcess(small_disk / "uq.db", log=log)
    host.start()
    acked: list[str] = []
    refused: dict[str, str] = {}
    results: dict[str, str] = {}
    try:
        with health(host.base) as monitor:
            page = Page(host)
            async with page.running(), Asker(host).open() as asker:
                for index in range(5):
                    assert (await asker.ask(f"before-{index}", DETAIL))["type"] == "ask/pending"
                    acked.append(f"before-{index}")
                filler = fill(small_disk)
                for index in range(30):
                    rpc_id = f"during-{index}"
                    reply = await asker.ask(rpc_id, DETAIL)
                    if reply["type"] == "ask/pending":
                        acked.append(rpc_id)
                    else:
                        refused[rpc_id] = reply["code"]
                assert refused, "the disk never filled"
                assert set(refused.values()) == {"STORE_FULL"}
                assert await readiness(host) == (503, "STORE_FULL")
                async with anyio.create_task_group() as waiting:
                    waiting.start_soon(remote_ask, host, results)
                    await anyio.sleep(1)  # it is refused, and waits
                    assert "remote" not in results
                    freed = time.monotonic()
                    filler.unlink()
                    recovery = await until_ready(host, 200, 15)
                    for rpc_id in refused:  # the asker asks again what was refused
                        assert (await asker.ask(rpc_id, DETAIL))["type"] == "ask/pending"
                        acked.append(rpc_id)
                    await asker.all_settled(acked)
                took = time.monotonic() - freed
        print(
            f"disk full: {len(acked) - len(refused)} asks acknowledged, {len(refused)} refused "
            f"(STORE_FULL), page refused {dict(page.errors)}; ready {recovery:.2f} s after "
            f"space was freed, everything answered {took:.2f} s after; {monitor.report()}"
        )
        assert results == {"remote": "yes"}
        monitor.check()
        assert set(page.errors) <= {"STORE_FULL"}
        assert all(len(asker.settled[rpc_id]) == 1 for rpc_id in acked)  # each exactly once
    finally:
        assert host.stop() == 0
    with sqlite3.connect(small_disk / "uq.db") as db:
        states = dict(db.execute("SELECT rpc_id, state FROM questions").fetchall())
    assert {rpc_id: states.get(rpc_id) for rpc_id in acked} == dict.fromkeys(acked, "answered")
    lines = fault_lines(log)
    assert len(lines) == 2, lines
    assert "STORE_FULL" in lines[0]
    assert "cleared" in lines[1]
    assert tracebacks(log) == 0
    assert Counter(states.values())["pending"] == 0
