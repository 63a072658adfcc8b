"""`uq backup`: a copy of the SQLite store taken while a host writes to it opens, checks out and
holds every request committed before it began, in the state it had then or later."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from tests.host.stores.test_store_contract import ANSWER, QUESTIONS
from user_questions.cli import app
from user_questions.host.stores import NewQuestion, Settlement
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Outcome, RequestState, Surface

pytestmark = pytest.mark.anyio

BEFORE_BACKUP = 300
"""Requests committed before the backup starts."""


def uq(*args: str) -> int:
    """Run `uq` in this thread; its exit status."""
    with pytest.raises(SystemExit) as ended:
        app(list(args))
    code = ended.value.code
    return code if isinstance(code, int) else 1


async def test_a_backup_taken_under_load_holds_every_committed_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, copy = tmp_path / "host.db", tmp_path / "backup.db"
    committed: dict[str, RequestState] = {}
    """Every request the host's store has committed, and the state it committed last."""
    enough = anyio.Event()
    backing_up = anyio.Event()
    written_during_backup = 0

    async with SQLiteStore(db) as host:  # the host's own handle, holding the lock

        async def load() -> None:
            """Ask and answer as fast as the store takes it, as a busy host would."""
            nonlocal written_during_backup
            number = 0
            while True:
                rpc_id = f"r{number}"
                asked = datetime.now(UTC)
                await host.submit(NewQuestion(rpc_id, "load", QUESTIONS, asked))
                committed[rpc_id] = RequestState.PENDING
                if number % 2:
                    await host.settle(rpc_id, Settlement(Outcome.ANSWERED, ANSWER, Surface.WEB))
                    committed[rpc_id] = RequestState.ANSWERED
                if backing_up.is_set():
                    written_during_backup += 1
                number += 1
                if number == BEFORE_BACKUP:
                    enough.set()

        async with anyio.create_task_group() as writers:
            writers.start_soon(load)
            with anyio.fail_after(30):
                await enough.wait()
            before = dict(committed)
            backing_up.set()
            status = await anyio.to_thread.run_sync(uq, "backup", "--store", str(db), str(copy))
            during = written_during_backup
            writers.cancel_scope.cancel()

    assert status == 0
    printed = capsys.readouterr().out
    assert printed.startswith("backed up ")
    assert printed.endswith(f" to {copy}\n")
    assert len(before) <= int(printed.split()[2]) <= len(committed)
    assert during > 0, "the host never wrote while the backup ran: this proves nothing"
    check_file(copy)
    async with SQLiteStore(copy, host=False) as restored:
        for rpc_id, state in before.items():
            record = await restored.get(rpc_id)
            assert record is not None, f"{rpc_id} was committed before the backup and is missing"
            assert record.state == state or state == RequestState.PENDING
            if record.state == RequestState.ANSWERED:
                assert record.answer == ANSWER


def check_file(copy: Path) -> None:
    """The copy is one private, self-contained file that SQLite finds intact."""
    assert not Path(f"{copy}-wal").exists()
    assert copy.stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(copy) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_a_restored_backup_serves_as_the_store_again(tmp_path: Path) -> None:
    db, copy, restored = tmp_path / "host.db", tmp_path / "backup.db", tmp_path / "new" / "host.db"
    async with SQLiteStore(db) as host:
        await host.submit(NewQuestion("waiting", "s", QUESTIONS, datetime.now(UTC)))
        summary = await host.backup(copy)
    assert (summary.requests, summary.pending) == (1, 1)
    restored.parent.mkdir()
    restored.write_bytes(copy.read_bytes())  # stop the host, copy the backup in place
    async with SQLiteStore(restored) as host:
        assert [record.rpc_id for record in await host.pending()] == ["waiting"]


def test_a_backup_never_overwrites_and_says_what_to_do_instead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, copy = tmp_path / "host.db", tmp_path / "backup.db"
    anyio.run(_create, db)
    copy.write_text("something precious")
    assert uq("backup", "--store", str(db), str(copy)) == 2
    assert capsys.readouterr().err == (
        f"uq backup: {copy} exists already; give a new file name (a backup never overwrites)\n"
    )
    assert copy.read_text() == "something precious"
    assert uq("backup", "--store", str(db), str(tmp_path / "no" / "such" / "folder.db")) == 2
    assert "there is no folder" in capsys.readouterr().err
    assert uq("backup", "--store", "postgresql://uq@/uq?host=/nowhere", str(copy) + "2") == 2
    assert "is not a SQLite store: back it up with pg_dump" in capsys.readouterr().err
    assert uq("backup", "--store", str(tmp_path / "missing.db"), str(copy) + "3") == 2
    assert "there is no store at" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir() if "partial" in path.name) == []


async def _create(db: Path) -> None:
    async with SQLiteStore(db):
        pass
