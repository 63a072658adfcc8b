"""A host on SQLite whose file is deleted, replaced, or whose folder is made read-only while
askers ask and a page answers (on a tmpfs of its own, whose fsyncs never turn slow on a busy
machine).

- Deleted (the file and its write-ahead log): the host still holds the database open, so it
  writes it back to its path and carries on; a write caught in between is refused with
  `STORE_UNAVAILABLE`, never acknowledged into a file that is gone. Nothing is lost.
- Replaced by another file: writes are refused with `STORE_UNAVAILABLE` (`/readyz` says so) until
  the host's own file is put back; then it carries on, nothing lost.
- The folder made read-only: a running host keeps writing to the files it holds open (the kernel
  checks permissions when a file is opened); what needs the folder is writing a deleted file
  back, which waits, refused with `STORE_UNAVAILABLE`, until the folder takes it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import anyio
import pytest

from tests.e2e.host_process import HostProcess
from tests.faults.harness import (
    Asker,
    Page,
    fault_lines,
    health,
    readiness,
    tracebacks,
    until_ready,
)

pytestmark = pytest.mark.anyio

WITHOUT_OVERRIDE = (
    "setpriv",
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
    "--",
)
"""Runs a command as root without the power to ignore a folder's permissions."""


async def ask_through(asker: Asker, prefix: str, count: int) -> dict[str, str]:
    """`count` asks in a row: the kind of each reply (`ask/pending`, or the refusal's code)."""
    replies = {}
    for index in range(count):
        reply = await asker.ask(f"{prefix}-{index}")
        replies[f"{prefix}-{index}"] = reply.get("code", reply["type"])
    return replies


def stored(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as connection:
        return dict(connection.execute("SELECT rpc_id, state FROM questions").fetchall())


async def test_a_deleted_file_is_written_back_and_nothing_is_lost(
    small_disk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "host.log"
    folder = small_disk
    host = HostProcess(folder / "uq.db", log=log)
    host.start()
    try:
        with health(host.base) as monitor:
            async with Page(host).running(), Asker(host).open() as asker:
                before = await ask_through(asker, "before", 5)
                await anyio.sleep(0.5)  # the probe watches a host at work
                deleted = time.monotonic()
                for name in ("uq.db", "uq.db-wal", "uq.db-shm"):
                    (folder / name).unlink()
                during = await ask_through(asker, "during", 20)
                back = await until_ready(host, 200, 10)
                again = {rpc_id: (await asker.ask(rpc_id))["type"] for rpc_id in during}
                await asker.all_settled(asker.acked)
            took = time.monotonic() - deleted
        print(
            f"file deleted: {list(during.values()).count('ask/pending')} of {len(during)} asks "
            f"acknowledged at once, the others {set(during.values()) - {'ask/pending'}}; "
            f"ready {back:.2f} s after, everything answered {took:.2f} s after; "
            f"{monitor.report()}"
        )
        assert set(before.values()) == {"ask/pending"}
        assert set(during.values()) <= {"ask/pending", "STORE_UNAVAILABLE"}
        assert set(again.values()) <= {"ask/pending", "ask/settled"}
        monitor.check()
    finally:
        assert host.stop() == 0
    states = stored(folder / "uq.db")
    assert {rpc_id: states.get(rpc_id) for rpc_id in asker.acked} == dict.fromkeys(
        asker.acked, "answered"
    )
    lines = fault_lines(log)
    assert len(lines) == 2, lines
    assert "deleted" in lines[0]
    assert "written back" in lines[1]
    assert tracebacks(log) == 0


async def test_a_replaced_file_is_refused_until_it_is_put_back(
    small_disk: Path, tmp_path: Path
) -> None:
    log = tmp_path / "host.log"
    db = small_disk / "uq.db"
    host = HostProcess(db, log=log)
    host.start()
    try:
        with health(host.base) as monitor:
            async with Page(host).running(), Asker(host).open() as asker:
                await ask_through(asker, "before", 5)
                db.rename(small_disk / "aside.db")
                shutil.copyfile(small_disk / "aside.db", db)  # another file, the same rows
                await until_ready(host, 503, 5)
                assert await readiness(host) == (503, "STORE_UNAVAILABLE")
                during = await ask_through(asker, "during", 5)
                assert set(during.values()) == {"STORE_UNAVAILABLE"}
                await anyio.sleep(1)  # the fault lasts; the host keeps answering its probes
                (small_disk / "aside.db").rename(db)
                back = await until_ready(host, 200, 10)
                again = await ask_through(asker, "during", 5)
                await asker.all_settled(asker.acked)
        print(f"file replaced: refused throughout; ready {back:.2f} s after it was put back")
        assert set(again.values()) == {"ask/pending"}
        monitor.check()
    finally:
        assert host.stop() == 0
    states = stored(db)
    assert {rpc_id: states.get(rpc_id) for rpc_id in asker.acked} == dict.fromkeys(
        asker.acked, "answered"
    )
    lines = fault_lines(log)
    assert len(lines) == 2, lines
    assert "replaced" in lines[0]
    assert tracebacks(log) == 0


async def test_a_read_only_folder_holds_back_a_deleted_file_until_it_is_writable(
    small_disk: Path, tmp_path: Path
) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv, to run a host that a folder's permissions bind")
    log = tmp_path / "host.log"
    folder = small_disk
    host = HostProcess(folder / "uq.db", log=log, wrapper=WITHOUT_OVERRIDE)
    host.start()
    try:
        async with Page(host).running(), Asker(host).open() as asker:
            folder.chmod(0o500)
            kept = await ask_through(asker, "read-only", 5)
            assert set(kept.values()) == {"ask/pending"}  # its open files still take writes
            (folder / "uq.db").unlink()
            await until_ready(host, 503, 5)
            assert await readiness(host) == (503, "STORE_UNAVAILABLE")
            held = await ask_through(asker, "held", 3)
            assert set(held.values()) == {"STORE_UNAVAILABLE"}
            await anyio.sleep(0.5)
            folder.chmod(0o700)
            back = await until_ready(host, 200, 10)
            again = await ask_through(asker, "held", 3)
            assert set(again.values()) == {"ask/pending"}
            await asker.all_settled(asker.acked)
        print(f"read-only folder: ready {back:.2f} s after it was writable again")
    finally:
        folder.chmod(0o700)
        assert host.stop() == 0
    states = stored(folder / "uq.db")
    assert {rpc_id: states.get(rpc_id) for rpc_id in asker.acked} == dict.fromkeys(
        asker.acked, "answered"
    )
    assert len(fault_lines(log)) == 2
    assert tracebacks(log) == 0
