"""`uq history` on a store: the same entries as `GET /api/history`, for people and for scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.cli.test_token import uq
from tests.host.stores.test_store_contract import ANSWER, QUESTIONS, new
from user_questions.cli import _history
from user_questions.host.stores import Settlement
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Outcome, Surface

SETTLED: list[tuple[str, str, Outcome, str | None]] = [
    ("r1", "agent-a", Outcome.ANSWERED, "alice"),
    ("r2", "agent-b", Outcome.DISMISSED, "bob"),
    ("r3", "agent-a", Outcome.TIMED_OUT, None),
    ("r4", "agent-b", Outcome.ANSWERED, "bob"),
]


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A store with four settled requests (r4 settled last) and one pending."""

    async def fill() -> None:
        async with SQLiteStore(tmp_path / "host.db") as store:
            await store.submit(new("waiting"))
            for rpc_id, session, outcome, by in SETTLED:
                await store.submit(new(rpc_id, session))
                answer = ANSWER if outcome == Outcome.ANSWERED else None
                via = Surface.ASKER if outcome == Outcome.TIMED_OUT else Surface.WEB
                await store.settle(rpc_id, Settlement(outcome, answer, via=via, by=by))

    anyio.run(fill)
    return str(tmp_path / "host.db")


def lines(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    status, out, err = uq(capsys, "history", "--json", *args)
    assert (status, err) == (None, ""), err
    return [json.loads(line) for line in out.splitlines()]


def test_json_prints_one_entry_per_line_newest_first(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    entries = lines(capsys, "--store", db)
    assert [entry["rpcId"] for entry in entries] == ["r4", "r3", "r2", "r1"]
    newest = entries[0]
    assert (newest["outcome"], newest["by"], newest["via"]) == ("answered", "bob", "web")
    assert newest["answer"] == ANSWER.model_dump(mode="json")
    assert newest["questions"] == [question.model_dump(mode="json") for question in QUESTIONS]
    assert "rendered" not in newest
    assert entries[1]["outcome"] == "timed-out"
    assert "by" not in entries[1]
    assert entries[2]["outcome"] == "dismissed"


def test_filters_narrow_the_entries(capsys: pytest.CaptureFixture[str], db: str) -> None:
    def ids(*args: str) -> list[str]:
        return [entry["rpcId"] for entry in lines(capsys, "--store", db, *args)]

    assert ids("--session", "agent-a") == ["r3", "r1"]
    assert ids("--outcome", "dismissed") == ["r2"]
    assert ids("--by", "bob") == ["r4", "r2"]
    assert ids("--search", "INBOX") == ["r4", "r1"]  # the typed answer, any case
    assert ids("--limit", "3") == ["r4", "r3", "r2"]


def test_a_limit_beyond_one_page_reads_page_after_page(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_history, "MAX_LIMIT", 1)
    assert [entry["rpcId"] for entry in lines(capsys, "--store", db)] == ["r4", "r3", "r2", "r1"]
    assert [entry["rpcId"] for entry in lines(capsys, "--store", db, "--limit", "2")] == [
        "r4",
        "r3",
    ]


def test_people_get_a_block_per_question_with_who_answered_and_the_answers(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    status, out, _ = uq(capsys, "history", "--store", db, "--limit", "2")
    assert status is None
    blocks = out.split("\n\n")
    newest = blocks[0].splitlines()
    assert newest[0].endswith("  answered by bob via web  ·  session agent-b")
    assert newest[1:] == [
        "  Which database?",
        "    → SQLite",
        "  Name it",
        '    → "inbox"',
    ]
    assert blocks[1].splitlines()[0].endswith("  timed-out via asker  ·  session agent-a")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--outcome", "maybe"), 'uq history: unknown outcome "maybe"'),
        (("--limit", "0"), "uq history: --limit must be at least 1, got 0"),
    ],
)
def test_bad_filters_are_bad_input(
    capsys: pytest.CaptureFixture[str], db: str, args: tuple[str, ...], message: str
) -> None:
    status, out, err = uq(capsys, "history", "--store", db, *args)
    assert (status, out) == (2, "")
    assert err.startswith(message)


def test_nothing_matching_says_so_on_stderr(capsys: pytest.CaptureFixture[str], db: str) -> None:
    assert uq(capsys, "history", "--store", db, "--session", "nobody") == (
        None,
        "",
        "no settled questions match\n",
    )


def test_a_store_and_a_host_at_once_are_bad_input(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    status, out, err = uq(capsys, "history", "--store", db, "--url", "http://127.0.0.1:8765/")
    assert (status, out) == (2, "")
    assert err == "uq history: give --store (a store) or --url (a running host), not both\n"


def test_a_withdrawals_note_is_shown_on_one_line_and_in_the_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    async def fill() -> None:
        async with SQLiteStore(tmp_path / "host.db") as store:
            await store.submit(new("r1"))
            note = "answered in the editor:\n\x1b[31mAllow once"
            settlement = Settlement(Outcome.WITHDRAWN, via=Surface.ASKER, by="agents", note=note)
            await store.settle("r1", settlement)

    anyio.run(fill)
    db = str(tmp_path / "host.db")
    status, out, _ = uq(capsys, "history", "--store", db)
    assert status is None
    first, second, *_ = out.splitlines()
    assert first.endswith("  withdrawn via asker  ·  session agent-1")
    assert second == "  note: answered in the editor: [31mAllow once"
    (entry,) = lines(capsys, "--store", db)
    assert entry["note"] == "answered in the editor:\n\x1b[31mAllow once"
