"""`uq serve` refuses what it cannot use, in one line and with an exit status, before listening.

Running hosts are tested in tests/e2e/test_host_cli.py.
"""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import pytest

from user_questions.cli import app
from user_questions.host.stores.sqlite import SQLiteStore


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as caught:
        app(["serve", *args])
    code = caught.value.code
    assert isinstance(code, int)
    return code, capsys.readouterr().err


def test_a_bad_token_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, err = run(capsys, "--store", str(tmp_path / "h.db"), "--token", "two words")
    assert status == 2
    assert err == "uq serve: a host token must be 8 to 512 characters from A-Z a-z 0-9 . _ ~ -\n"


def test_an_unknown_store_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run(capsys, "--store", "redis://localhost/0")
    assert status == 2
    assert err.startswith("uq serve: unknown store 'redis://localhost/0'")


def test_a_store_in_use_is_a_failure_to_start(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    async def hold_and_serve() -> tuple[int, str]:
        async with SQLiteStore(tmp_path / "h.db"):
            return await anyio.to_thread.run_sync(
                run, capsys, "--store", str(tmp_path / "h.db"), "--port", "0"
            )

    status, err = anyio.run(hold_and_serve)
    assert status == 1
    assert err.startswith("uq serve: another host is using the store")


def test_a_bad_token_is_refused_before_the_default_store_is_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    status, _ = run(capsys, "--token", "x")
    assert status == 2
    assert not (tmp_path / "user-questions").exists()


def test_a_retention_that_is_not_a_positive_number_of_days_is_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, err = run(capsys, "--store", str(tmp_path / "h.db"), "--retain-days", "0")
    assert status == 2
    assert err.startswith("uq serve: --retain-days must be a whole number of days from 1 to")
    assert not (tmp_path / "h.db").exists()


def test_a_public_url_that_cannot_be_used_is_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, err = run(capsys, "--store", str(tmp_path / "h.db"), "--public-url", "uq.example.com")
    assert status == 2
    assert err.startswith("uq serve: --public-url 'uq.example.com' cannot be used: ")
    assert not (tmp_path / "h.db").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ("--tls-cert", "{missing}", "--tls-key", "{missing}"),
            "cannot use --tls-cert '{missing}'",
        ),
        (("--tls-cert", "{junk}", "--tls-key", "{junk}"), "it holds no PEM certificate"),
        (("--tls-cert", "{junk}"), "give --tls-cert and --tls-key together"),
        (("--trust-proxy", "proxy.internal"), "--trust-proxy 'proxy.internal' cannot be used"),
        (("--metrics-bind", "127.0.0.1:metrics"), "--metrics-bind '127.0.0.1:metrics' cannot"),
    ],
)
def test_a_deployment_flag_that_cannot_be_used_is_one_line_before_anything_starts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    files = {"missing": str(tmp_path / "missing.pem"), "junk": str(tmp_path / "junk.pem")}
    (tmp_path / "junk.pem").write_text("junk\n")
    given = [flag.format(**files) for flag in flags]
    status, err = run(capsys, "--store", str(tmp_path / "h.db"), *given)
    assert status == 2
    assert message.format(**files) in err
    assert err.startswith("uq serve: ")
    assert err.count("\n") == 1
    assert not (tmp_path / "h.db").exists()


def test_a_busy_metrics_address_is_a_failure_to_start(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        status, err = run(
            capsys, "--store", str(tmp_path / "h.db"), "--port", "0", "--metrics-bind", str(port)
        )
    assert status == 1
    assert err == (
        f"uq serve: cannot listen on 127.0.0.1:{port} (Address already in use); "
        "choose another --metrics-bind\n"
    )
