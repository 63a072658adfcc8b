"""`uq token add | change | list | revoke` on a store, as a person runs them beside a host."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from user_questions.cli import _store_option, app
from user_questions.host.gate.tokens import hash_token
from user_questions.host.stores import TokenRecord
from user_questions.host.stores.sqlite import SQLiteStore


def uq(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[object, str, str]:
    """Run `uq ARGS` in process: `(exit status, stdout, stderr)`."""
    try:
        status = app(list(args), result_action="return_value")
    except SystemExit as exit:
        status = exit.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A host's store, created as `uq serve` creates it."""

    async def create() -> None:
        async with SQLiteStore(tmp_path / "host.db"):
            pass

    anyio.run(create)
    return str(tmp_path / "host.db")


def tokens(db: str) -> list[TokenRecord]:
    async def read() -> list[TokenRecord]:
        async with SQLiteStore(db, host=False) as store:
            return await store.tokens()

    return anyio.run(read)


def test_add_prints_the_token_once_and_the_page_url_with_it(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    status, out, err = uq(capsys, "token", "add", "alice", "--store", db, "--url", "http://h:9/")
    assert status in (None, 0)
    token, url = out.splitlines()
    assert url == f"http://h:9/?token={token}"
    assert err == (
        "alice's person token is shown this once: the store keeps only its hash. "
        "Running hosts accept it now.\n"
    )
    (record,) = tokens(db)
    assert (record.name, record.token_hash, record.role) == ("alice", hash_token(token), "person")


def test_a_token_gets_its_role_groups_and_routes_and_they_can_change(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    uq(capsys, "token", "add", "alice", "--group", "oncall", "--group", "ops", "--store", db)
    uq(capsys, "token", "add", "pager", "--role", "asker", "--route", "@oncall", "--store", db)
    alice, pager = tokens(db)
    assert (alice.role, alice.groups, alice.routes) == ("person", ("oncall", "ops"), ())
    assert (pager.role, pager.groups, pager.routes) == ("asker", (), ("@oncall",))
    status, _, err = uq(capsys, "token", "change", "alice", "--role", "admin", "--store", db)
    assert status in (None, 0)
    assert err == "alice is now: admin in oncall, ops\n"
    status, _, err = uq(capsys, "token", "change", "pager", "--route", "alice", "--store", db)
    assert err == "pager is now: asker routed to alice\n"
    assert [(t.name, t.role, t.groups, t.routes) for t in tokens(db)] == [
        ("alice", "admin", ("oncall", "ops"), ()),
        ("pager", "asker", (), ("alice",)),
    ]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("add", "x", "--role", "asker", "--group", "g"), "an asker is in no group"),
        (("add", "x", "--route", "bob"), "only an asker's questions are routed"),
        (("add", "x", "--role", "asker", "--route", "@no good"), "a route must be"),
        (("change", "nobody", "--role", "admin"), 'no active token is called "nobody"'),
    ],
)
def test_what_a_role_cannot_have_is_bad_input(
    capsys: pytest.CaptureFixture[str], db: str, args: tuple[str, ...], says: str
) -> None:
    status, out, err = uq(capsys, "token", *args, "--store", db)
    assert (status, out) == (2, "")
    assert says in err
    assert tokens(db) == []


def test_a_name_that_is_taken_or_unusable_is_bad_input(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    uq(capsys, "token", "add", "alice", "--store", db)
    status, out, err = uq(capsys, "token", "add", "alice", "--store", db)
    assert (status, out) == (2, "")
    assert err == (
        'uq token: a token named "alice" exists; revoke it first (uq token revoke) '
        "or choose another name\n"
    )
    status, _, err = uq(capsys, "token", "add", "owner", "--store", db)
    assert status == 2
    assert err.startswith('uq token: "owner" is the host\'s start-up token')
    status, _, err = uq(capsys, "token", "add", "two words", "--store", db)
    assert status == 2
    assert err.startswith("uq token: a token name must be 1 to 64 characters")


def test_list_shows_names_and_times_but_never_a_token(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UQ_STORE", db)
    _, alice, _ = uq(capsys, "token", "add", "alice")
    uq(capsys, "token", "add", "bob")
    uq(capsys, "token", "revoke", "bob")
    status, out, _ = uq(capsys, "token", "list")
    assert status in (None, 0)
    header, alice_row, bob_row = out.splitlines()
    columns = "NAME ROLE GROUPS / ROUTES TIMERS CREATED LAST USED REVOKED"
    assert header.split() == columns.split()
    assert alice_row.split()[:4] == ["alice", "person", "-", "-"]
    assert alice_row.endswith("-")
    assert bob_row.startswith("bob    ")
    assert not bob_row.endswith("-")
    assert alice.splitlines()[0] not in out
    _, out, _ = uq(capsys, "token", "list", "--json")
    listed = [json.loads(line) for line in out.splitlines()]
    assert [sorted(item) for item in listed] == [
        ["createdAt", "name", "role"],
        ["createdAt", "name", "revokedAt", "role"],
    ]
    assert listed[0]["name"] == "alice"
    assert listed[0]["createdAt"].endswith("Z")


def test_an_empty_list_says_how_to_add_one(capsys: pytest.CaptureFixture[str], db: str) -> None:
    assert uq(capsys, "token", "list", "--store", db) == (
        None,
        "",
        "no named tokens yet; add one with `uq token add NAME`\n",
    )


def test_revoking_twice_says_there_is_no_such_token(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    uq(capsys, "token", "add", "alice", "--store", db)
    assert uq(capsys, "token", "revoke", "alice", "--store", db) == (
        None,
        "",
        "revoked alice's token; hosts refuse it from now on\n",
    )
    status, _, err = uq(capsys, "token", "revoke", "alice", "--store", db)
    assert status == 2
    assert err == 'uq token: no active token is called "alice" (uq token list shows them)\n'
    assert not tokens(db)[0].active


def test_a_store_that_does_not_exist_is_never_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _, err = uq(capsys, "token", "add", "alice", "--store", str(tmp_path / "typo.db"))
    assert status == 2
    assert err.startswith(f"uq token: there is no store at {tmp_path / 'typo.db'}")
    assert not (tmp_path / "typo.db").exists()


def test_an_askers_escalation_steps_and_reminders_are_listed_as_written(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UQ_STORE", db)
    argv = ["token", "add", "ci", "--role", "asker", "--escalate", "1h:admin"]
    status, _, _ = uq(capsys, *argv, "--escalate", "10m:@oncall", "--remind", "5m")
    assert status in (None, 0)
    _, out, _ = uq(capsys, "token", "list")
    assert "escalate 10m:@oncall, escalate 1h:admin, remind 5m" in out.splitlines()[1]
    _, out, _ = uq(capsys, "token", "list", "--json")
    shown = json.loads(out)
    assert (shown["escalate"], shown["remind"]) == (["10m:@oncall", "1h:admin"], 300)
    status, _, err = uq(capsys, "token", "change", "ci", "--escalate", "soon")
    assert status == 2
    assert "AFTER:TARGET" in err
    status, _, err = uq(capsys, "token", "add", "bob", "--remind", "5m")
    assert status == 2
    assert "a reminder period is an asker's" in err


def test_an_askers_share_is_kept_listed_changed_and_bounded(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UQ_STORE", db)
    status, _, _ = uq(capsys, "token", "add", "ci", "--role", "asker", "--max-pending", "200")
    assert status in (None, 0)
    (ci,) = tokens(db)
    assert (ci.max_pending, ci.rate) == (200, None)
    status, _, err = uq(capsys, "token", "change", "ci", "--rate", "5:50")
    assert status in (None, 0)
    assert "max-pending 200, rate 5:50" in err
    _, out, _ = uq(capsys, "token", "list")
    assert "max-pending 200, rate 5:50" in out.splitlines()[1]
    _, out, _ = uq(capsys, "token", "list", "--json")
    assert (json.loads(out)["maxPending"], json.loads(out)["rate"]) == (200, "5:50")
    status, _, _ = uq(capsys, "token", "change", "ci", "--max-pending", "default")
    assert status in (None, 0)
    assert tokens(db)[0].max_pending is None
    for option, value, said in (
        ("--max-pending", "0", "invalid pending cap"),
        ("--max-pending", "50001", "invalid pending cap"),
        ("--rate", "fast", "invalid rate"),
    ):
        status, _, err = uq(capsys, "token", "change", "ci", option, value)
        assert status == 2
        assert said in err
    status, _, err = uq(capsys, "token", "add", "bob", "--max-pending", "5")
    assert status == 2
    assert "a pending cap is an asker's" in err


def test_an_askers_quorum_is_kept_listed_changed_and_bounded(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UQ_STORE", db)
    status, _, _ = uq(capsys, "token", "add", "deploy", "--role", "asker", "--approvals", "2")
    assert status in (None, 0)
    assert tokens(db)[0].approvals == 2
    _, out, _ = uq(capsys, "token", "list")
    assert "approvals 2" in out.splitlines()[1]
    _, out, _ = uq(capsys, "token", "list", "--json")
    assert json.loads(out)["approvals"] == 2
    status, _, err = uq(capsys, "token", "change", "deploy", "--approvals", "3")
    assert status in (None, 0)
    assert "approvals 3" in err
    assert tokens(db)[0].approvals == 3
    for value in ("0", "11", "two"):
        status, _, err = uq(capsys, "token", "change", "deploy", "--approvals", value)
        assert status == 2
        assert "invalid approvals" in err
    assert tokens(db)[0].approvals == 3
    status, _, err = uq(capsys, "token", "add", "bob", "--approvals", "2")
    assert status == 2
    assert "a quorum of approvals is an asker's" in err


# -- --store, and its deprecated old names --db and UQ_DB ------------------------------------

DB_LINE = "uq token: --db is deprecated and will be removed in the next release; use --store\n"
ENV_LINE = "uq token: UQ_DB is deprecated and will be removed in the next release; use UQ_STORE\n"


@pytest.fixture
def fresh_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test is a new `uq` process: nothing said yet, no store in the environment."""
    monkeypatch.setattr(_store_option, "_said", set())
    monkeypatch.delenv("UQ_STORE", raising=False)
    monkeypatch.delenv("UQ_DB", raising=False)


@pytest.mark.usefixtures("fresh_process")
def test_the_old_flag_still_names_the_store_and_says_so_once(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    status, _, err = uq(capsys, "token", "add", "alice", "--db", db)
    assert status in (None, 0)
    assert err.startswith(DB_LINE)
    status, _, err = uq(capsys, "token", "add", "bob", "--db", db)
    assert status in (None, 0)
    assert "deprecated" not in err
    assert [token.name for token in tokens(db)] == ["alice", "bob"]


@pytest.mark.usefixtures("fresh_process")
def test_the_old_variable_still_names_the_store_and_says_so_once(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UQ_DB", db)
    status, _, err = uq(capsys, "token", "add", "alice")
    assert status in (None, 0)
    assert err.startswith(ENV_LINE)
    assert uq(capsys, "token", "revoke", "alice")[2].count("deprecated") == 0
    assert [token.name for token in tokens(db)] == ["alice"]


@pytest.mark.usefixtures("fresh_process")
def test_the_new_names_win_and_say_nothing(
    capsys: pytest.CaptureFixture[str],
    db: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    elsewhere = str(tmp_path_factory.mktemp("elsewhere") / "other.db")
    monkeypatch.setenv("UQ_DB", elsewhere)
    monkeypatch.setenv("UQ_STORE", db)
    status, _, err = uq(capsys, "token", "add", "alice")
    assert (status in (None, 0), "deprecated" in err) == (True, False)
    status, _, err = uq(capsys, "token", "add", "bob", "--store", db, "--db", elsewhere)
    assert (status in (None, 0), "deprecated" in err) == (True, False)
    assert [token.name for token in tokens(db)] == ["alice", "bob"]


@pytest.mark.usefixtures("fresh_process")
def test_the_old_flag_is_not_shown_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = uq(capsys, "token", "add", "--help")
    assert "--store" in out
    assert "--db" not in out


def test_a_persons_language_is_kept_listed_changed_and_checked(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UQ_STORE", db)
    status, _, _ = uq(capsys, "token", "add", "alice", "--lang", "ko")
    assert status in (None, 0)
    assert tokens(db)[0].lang == "ko"
    _, out, _ = uq(capsys, "token", "list")
    assert "person (ko)" in out.splitlines()[1]
    _, out, _ = uq(capsys, "token", "list", "--json")
    assert json.loads(out)["lang"] == "ko"
    status, _, err = uq(capsys, "token", "change", "alice", "--lang", "zh-CN")
    assert (status, err) == (None, "alice is now: person (zh_Hans)\n")
    uq(capsys, "token", "change", "alice", "--lang", "none")
    assert tokens(db)[0].lang is None
    status, out, err = uq(capsys, "token", "change", "alice", "--lang", "fr")
    assert (status, out) == (2, "")
    assert 'the language "fr" has no catalog; use one of en, ko, zh_Hans, ja' in err
    status, _, _ = uq(capsys, "token", "add", "bob", "--lang", "klingon")
    assert status == 2
    assert [token.name for token in tokens(db)] == ["alice"]
