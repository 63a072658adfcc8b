"""`uq serve`'s notification flags: bad ones are refused in one line before anything listens, and
`--print-notify-secret` shows the secret webhooks are signed with.

Hosts that notify are tested in tests/e2e/test_notify_host.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from user_questions.cli import app


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as caught:
        app(["serve", *args])
    code = caught.value.code
    captured = capsys.readouterr()
    return (code if isinstance(code, int) else 0), captured.out, captured.err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--notify-webhook", "ftp://example.com/hook"],
            "uq serve: a notify webhook must be an http:// or https:// URL, got "
            "'ftp://example.com/hook'\n",
        ),
        (
            ["--notify-webhook", "http://example.com:port/hook"],
            "uq serve: a notify webhook must be an http:// or https:// URL, got "
            "'http://example.com:port/hook'\n",
        ),
        (
            ["--notify-command", "notify-send 'unclosed"],
            'uq serve: cannot read the notify command "notify-send \'unclosed": '
            "No closing quotation\n",
        ),
        (
            ["--notify-command", "surely-not-a-program-here"],
            "uq serve: the notify command 'surely-not-a-program-here' is not found "
            "(or not executable)\n",
        ),
        (
            ["--notify-webhook", "https://example.com/hook", "--notify-secret", "too-short"],
            "uq serve: a notify secret must be at least 16 characters, got 9\n",
        ),
        (
            ["--notify", "nosuchservice://secret-token@example.com/x"],
            "uq serve: a --notify URL apprise cannot use (nosuchservice://…): see apprise's "
            "list of services and their URLs\n",
        ),
        (
            ["--notify", "ntfy://ntfy.example.com/topic", "--answer-links", "forever"],
            "uq serve: --answer-links takes off, on, or a lifetime from 1m to 30d such as 24h, "
            "got 'forever'\n",
        ),
        (
            ["--answer-links", "31d"],
            "uq serve: --answer-links takes off, on, or a lifetime from 1m to 30d such as 24h, "
            "got '31d'\n",
        ),
    ],
)
def test_an_unusable_notify_flag_is_bad_input_before_the_store_is_touched(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    message: str,
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.delenv("UQ_STORE", raising=False)
    monkeypatch.delenv("UQ_DB", raising=False)
    monkeypatch.delenv("UQ_NOTIFY", raising=False)
    status, out, err = run(capsys, "--port", "0", *flags)
    assert (status, out, err) == (2, "", message)
    assert not (tmp_path / "user-questions").exists()


def test_the_notify_secret_is_made_once_and_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UQ_NOTIFY_SECRET", raising=False)
    db = str(tmp_path / "host.db")
    status, first, err = run(capsys, "--store", db, "--print-notify-secret")
    assert (status, err) == (0, "")
    assert len(first.strip()) >= 16
    assert run(capsys, "--store", db, "--print-notify-secret")[1] == first


def test_a_given_notify_secret_replaces_the_stored_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "host.db")
    monkeypatch.setenv("UQ_NOTIFY_SECRET", "from-the-environment-1")
    assert run(capsys, "--store", db, "--print-notify-secret")[1] == "from-the-environment-1\n"
    monkeypatch.delenv("UQ_NOTIFY_SECRET")
    given = run(
        capsys, "--store", db, "--notify-secret", "from-the-flag-0001", "--print-notify-secret"
    )
    assert given[1] == "from-the-flag-0001\n"
    assert run(capsys, "--store", db, "--print-notify-secret")[1] == "from-the-flag-0001\n"
