"""`uq mcp` refuses to start, with the reason and the fix, when it cannot answer questions."""

from __future__ import annotations

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
    code, err = run(capsys, "--host", "http://127.0.0.1:8700")
    assert code == 2
    assert err.startswith("uq mcp: RemoteProvider needs the host's token")


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
    assert "--host" in shown
    assert "--http" in shown
    assert "--scripted" not in shown
