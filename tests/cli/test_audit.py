"""`uq audit verify | export | checkpoint` on a SQLite store, as an operator or an auditor runs
them (the pinned `--db PATH` spelling included); the store and its chain are made through the
store itself, as a host makes them."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from tests.cli.test_token import uq
from user_questions.host.stores import NewQuestion, Settlement
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

PICK = AskUserQuestionItem(
    id="pick",
    question="Ship it?",
    options=[AskUserQuestionOption(label="Yes"), AskUserQuestionOption(label="No")],
)


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A store with three settled requests."""

    async def create() -> None:
        async with SQLiteStore(tmp_path / "host.db") as store:
            for number in range(3):
                await store.submit(NewQuestion(f"r{number}", "s", (PICK,), datetime.now(UTC)))
                dismissal = Settlement(Outcome.DISMISSED, via=Surface.WEB, by="alice")
                await store.settle(f"r{number}", dismissal)

    anyio.run(create)
    return str(tmp_path / "host.db")


def test_verify_says_the_chain_holds_and_then_names_a_changed_answer(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    status, out, err = uq(capsys, "audit", "verify", "--db", db)
    assert (status, out, err) == (None, "3 records, chain intact, never signed\n", "")
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE questions SET settled_by = 'mallory' WHERE rpc_id = 'r1'")
    connection.close()
    status, out, err = uq(capsys, "audit", "verify", "--store", db)
    assert (status, out) == (1, 'record 2: request "r1" as stored differs from it in by\n')


def test_checkpoint_signs_and_verify_reports_when(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    status, out, _ = uq(capsys, "audit", "checkpoint", "--db", db)
    assert status is None
    assert out.startswith("signed record 3 at ")
    signed_at = out.removeprefix("signed record 3 at ").strip()
    key = Path(f"{db}.audit-key")
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    assert Path(f"{db}.audit-key.pub").read_text().startswith("-----BEGIN PUBLIC KEY-----")
    _, out, _ = uq(capsys, "audit", "verify", "--db", db)
    assert out == f"3 records, chain intact, last signed at {signed_at}\n"


def test_an_export_is_json_lines_only_and_verifies_offline(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    uq(capsys, "audit", "checkpoint", "--db", db)
    status, out, err = uq(capsys, "audit", "export", "--db", db)
    assert (status, err) == (None, "")
    lines = out.splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["seq"] for r in records] == [1, 2, 3]
    assert all(r["prev"] and r["hash"] for r in records)
    assert records[1]["prev"] == records[0]["hash"]
    assert records[2]["signed"][0]["key"]  # the public key that signed it
    export = tmp_path / "export.jsonl"
    export.write_text(out)
    public = f"{db}.audit-key.pub"
    status, out, _ = uq(capsys, "audit", "verify", "--file", str(export), "--key", public)
    assert status is None
    assert out.startswith("3 records, chain intact, last signed at ")
    export.write_text(lines[0] + "\n" + lines[2] + "\n")
    status, out, _ = uq(capsys, "audit", "verify", "--file", str(export), "--key", public)
    assert (status, out) == (
        1,
        "record 3: it follows record 1 (record 2 is missing or out of order)\n",
    )


def test_export_since_a_time_starts_there_and_verifies_from_there(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    _, out, _ = uq(capsys, "audit", "export", "--db", db)
    second = json.loads(out.splitlines()[1])["at"]
    _, out, _ = uq(capsys, "audit", "export", "--db", db, "--since", second)
    assert [json.loads(line)["seq"] for line in out.splitlines()] == [2, 3]
    uq(capsys, "audit", "checkpoint", "--db", db)
    export = tmp_path / "since.jsonl"
    _, out, _ = uq(capsys, "audit", "export", "--db", db, "--since", second)
    export.write_text(out)
    key = f"{db}.audit-key.pub"
    _, out, _ = uq(capsys, "audit", "verify", "--file", str(export), "--key", key)
    assert out.startswith("2 records (from record 2), chain intact, last signed at ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "--since", "yesterday"], "uq audit export: --since must be an ISO 8601 time"),
        (["verify", "--file", "x.jsonl"], "uq audit verify: --file needs --key"),
        (["verify", "--file", "missing.jsonl", "--key", "{db}"], "uq audit verify: cannot read"),
        (["verify", "--key", "missing.pub"], "uq audit verify: cannot read the key missing.pub"),
        (
            ["verify", "--store", "postgresql://nobody@/nothing"],
            "uq audit: a PostgreSQL store's audit key is not beside it: give --key",
        ),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], db: str, args: list[str], message: str
) -> None:
    uq(capsys, "audit", "checkpoint", "--db", db)  # a key beside the store
    given = [arg.replace("{db}", f"{db}.audit-key.pub") for arg in args]
    store = [] if "--store" in given else ["--db", db]
    status, out, err = uq(capsys, "audit", *given, *store)
    assert (status, out) == (2, "")
    assert err.startswith(message), err
    assert err.count("\n") == 1
