"""`uq mcp` refuses to start, with the reason and the fix, when it cannot answer questions."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from user_questions.cli import app


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        app(["mcp", *args])
    return int(exited.value.code or 0), capsys.readouterr().err


def test_a_host_without_its_token_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UQ_TOKEN", raising=False)
    code, err = run(capsys, "--url", "http://127.0.0.1:8700")
    assert code == 2
    assert err.startswith("uq mcp: RemoteProvider needs the host's token")


def test_a_host_that_is_down_fails_at_start_with_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = run(capsys, "--url", "http://127.0.0.1:9/?token=t")  # nothing listens on 9
    assert code == 1
    assert err.splitlines() == [
        "uq mcp: the host at http://127.0.0.1:9/ did not answer; is `uq serve` running? "
        "([Errno 111] Connect call failed ('127.0.0.1', 9))"
    ]


def test_host_still_works_and_says_it_is_now_url(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(capsys, "--host", "http://127.0.0.1:9/?token=t")
    assert code == 1
    assert err.splitlines()[0] == "uq mcp: --host is now --url; --host will go away"
    assert "did not answer" in err.splitlines()[1]


def test_a_busy_port_is_a_failure_said_before_claiming_to_serve(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"answers": {}}', encoding="utf-8")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, err = run(capsys, "--http", "--port", str(port), "--scripted", str(script))
    assert code == 1
    assert err.splitlines() == [
        f"uq mcp: cannot listen on 127.0.0.1:{port} (Address already in use); choose another --port"
    ]


def test_an_unreadable_script_is_refused_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"delay": 1}', encoding="utf-8")
    code, err = run(capsys, "--scripted", str(script))
    assert code == 2
    assert err.startswith(f"uq mcp: cannot read the script {str(script)!r}: 'answers'")


def test_the_scripted_option_is_a_hidden_testing_aid(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        app(["mcp", "--help"])
    shown = capsys.readouterr().out
    assert "--url" in shown
    assert "--permission-tool" in shown
    assert "--unreachable-limit" in shown
    assert "--http" in shown
    assert "--host " not in shown
    assert "--scripted" not in shown
