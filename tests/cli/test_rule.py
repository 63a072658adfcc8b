"""`uq rule list` beside a store: one aligned row per rule, saying who made it (`uq rule add`
records the OS user), never a table without rules."""

from __future__ import annotations

import getpass
import json

import pytest

from tests.cli.test_token import db, uq

__all__ = ["db"]  # the fixture, used by name


def test_list_shows_one_aligned_row_per_rule(capsys: pytest.CaptureFixture[str], db: str) -> None:
    for rule in (
        ["--tool", "Bash", "--command", "npm run test", "--allow"],
        ["--tool", "*", "--command", "rm -rf", "--deny"],
    ):
        status, _, err = uq(capsys, "rule", "add", *rule, "--store", db)
        assert status in (0, None), err
    status, out, _ = uq(capsys, "rule", "list", "--store", db)
    assert status in (0, None)
    header, *rows = out.splitlines()
    assert header.split() == [
        "ID",
        "RULE",
        "MADE",
        "BY",
        "HITS",
        "LAST",
        "USED",
        "EXPIRES",
        "REVOKED",
    ]
    assert len(rows) == 2
    assert rows[0].startswith("1 ")
    assert "allow Bash npm run test" in rows[0]
    assert rows[1].startswith("2 ")
    assert "rm -rf" in rows[1]
    hits = header.index("HITS")
    assert {row[hits] for row in rows} == {"0"}  # the columns line up under the header
    made_by = header.index("MADE BY")
    maker = f"cli:{getpass.getuser()}"
    assert {row[made_by:].split()[0] for row in rows} == {maker}
    status, out, _ = uq(capsys, "rule", "list", "--json", "--store", db)
    assert [json.loads(line)["createdBy"] for line in out.splitlines()] == [maker, maker]


def test_an_empty_list_says_how_to_add_one(capsys: pytest.CaptureFixture[str], db: str) -> None:
    status, out, err = uq(capsys, "rule", "list", "--store", db)
    assert (status in (0, None), out) == (True, "")
    assert "uq rule add" in err
