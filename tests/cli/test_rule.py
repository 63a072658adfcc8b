"""`uq rule` beside a store: `list` gives one aligned row per rule, saying who made it (`uq rule
add` records the OS user), never a table without rules; `add` refuses a field that does not fit
the tool (exit 2, naming the tool's kind); `check` says which rule decides a call or why none
can."""

from __future__ import annotations

import getpass
import json
from pathlib import Path

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


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        (["--tool", "Bash", "--path", "/home/dev/shop/**"], "Bash is a shell tool"),
        (["--tool", "Bash", "--domain", "example.com"], "--command"),
        (["--tool", "Read", "--command", "cat"], "Read is a file tool: its rules match a path"),
        (["--tool", "WebFetch", "--path", "/x"], "WebFetch is a web tool"),
        (["--tool", "Bash", "--command", "git status && ls"], "one simple command"),
    ],
)
def test_a_field_that_does_not_fit_the_tool_exits_2_naming_its_kind_and_makes_nothing(
    capsys: pytest.CaptureFixture[str], db: str, rule: list[str], says: str
) -> None:
    status, out, err = uq(capsys, "rule", "add", *rule, "--allow", "--store", db)
    assert (status, out) == (2, "")
    assert err.startswith("uq rule: invalid rule: ")
    assert says in err
    status, out, _ = uq(capsys, "rule", "list", "--json", "--store", db)
    assert out == ""


def test_check_says_which_rule_decides_a_call_or_why_none_can(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    for rule in (
        ["--tool", "Bash", "--command", "git status", "--allow", "--cwd", "/home/dev/shop"],
        ["--tool", "*", "--command", "rm -rf", "--deny"],
        ["--tool", "apply_patch", "--path", "/home/dev/shop/**", "--allow"],
    ):
        uq(capsys, "rule", "add", *rule, "--store", db)

    def check(*args: str) -> tuple[object, str]:
        status, out, _ = uq(capsys, "rule", "check", *args, "--store", db)
        return status, out.strip()

    assert check("--tool", "Bash", "--command", "git status -s", "--cwd", "/home/dev/shop") == (
        None,
        "rule 1 allows it: allow Bash git status in /home/dev/shop",
    )
    assert check("--tool", "Bash", "--command", "git status", "--cwd", "/") == (
        None,
        "no rule decides it, a person is asked: no rule for this tool, asker and folder allows it",
    )
    assert check("--tool", "Bash", "--command", "sudo rm -fr /") == (
        None,
        "rule 2 denies it: deny every tool rm -rf",
    )
    command = "git status ${x:=\\$\\(touch\\ pwned\\)}${x@P}"
    assert check("--tool", "Bash", "--command", command, "--cwd", "/home/dev/shop") == (
        None,
        "no rule decides it, a person is asked: not a plain command: a parameter expansion at "
        "column 12",
    )
    patch = tmp_path / "move.patch"
    patch.write_text(
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: /home/dev/.bashrc\n@@\n-a\n+b\n"
        "*** End Patch\n"
    )
    assert check("--tool", "apply_patch", "--patch", str(patch), "--cwd", "/home/dev/shop") == (
        None,
        "no rule decides it, a person is asked: the patch moves a file to /home/dev/.bashrc, "
        "which no rule allows",
    )
    status, out = check("--tool", "Bash", "--input", '{"command": "git status"}', "--json",
                        "--cwd", "/home/dev/shop")  # fmt: skip
    shown = json.loads(out)
    assert (status, shown["decision"], shown["rule"]["id"]) == (None, "allow", 1)
    status, _, err = uq(capsys, "rule", "check", "--tool", "Bash", "--command", "ls", "--url",
                        "https://x", "--store", db)  # fmt: skip
    assert status == 2
    assert "give one of" in err


def test_an_allow_rule_may_ask_for_a_quorum_and_a_deny_may_not(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    rule = ["--tool", "Bash", "--command", "kubectl apply", "--allow", "--approvals", "2"]
    status, _, err = uq(capsys, "rule", "add", *rule, "--store", db)
    assert status in (0, None), err
    assert "allow Bash kubectl apply once 2 people approve" in err
    _, out, _ = uq(capsys, "rule", "list", "--store", db)
    assert "once 2 people approve" in out.splitlines()[1]
    for refused, says in (
        (["--allow", "--approvals", "11"], "invalid approvals"),
        (["--deny", "--approvals", "2"], "a quorum of approvals goes with an allow rule"),
    ):
        status, _, err = uq(capsys, "rule", "add", "--tool", "Bash", *refused, "--store", db)
        assert status == 2
        assert says in err
