"""`uq acp` refuses bad input before starting anything, and exits as its agent does."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.host_process import ROOT, free_port, read_line
from user_questions.cli import app

UQ_ACP = (sys.executable, "-m", "user_questions.cli", "acp")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        app(["acp", *args])
    return int(exited.value.code or 0), capsys.readouterr().err


def test_without_an_agent_command_it_says_how_to_name_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = run(capsys, "--url", "http://127.0.0.1:8765/?token=abcdefgh")
    assert (code, err) == (
        2,
        "uq acp: name the agent to run after --, as in: uq acp -- AGENT [ARGS...]\n",
    )


def test_a_host_without_its_token_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UQ_TOKEN", raising=False)
    code, err = run(capsys, "--url", "http://127.0.0.1:8765", "--", "my-agent")
    assert code == 2
    assert err.startswith("uq acp: the host's token is needed")


def uq_acp(*command: str) -> subprocess.CompletedProcess[str]:
    """`uq acp -- COMMAND` with the inbox down and the editor gone at once."""
    url = f"http://127.0.0.1:{free_port()}/?token=abcdefgh"
    return subprocess.run(
        [*UQ_ACP, "--url", url, "--", *command],
        input="",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def test_an_agent_that_cannot_be_started_is_bad_input() -> None:
    result = uq_acp("/nonexistent/agent", "--flag")
    assert (result.returncode, result.stderr) == (
        2,
        "uq acp: cannot start the agent '/nonexistent/agent': No such file or directory\n",
    )


def test_the_exit_status_and_the_stderr_are_the_agents() -> None:
    agent = "import sys; sys.stdin.read(); print('agent log', file=sys.stderr); sys.exit(3)"
    result = uq_acp(sys.executable, "-c", agent)
    assert (result.returncode, result.stdout, result.stderr) == (3, "", "agent log\n")


def test_sigterm_stops_the_agent_and_exits_128_plus_15() -> None:
    agent = "import sys, time; print('started', file=sys.stderr, flush=True); time.sleep(120)"
    url = f"http://127.0.0.1:{free_port()}/?token=abcdefgh"
    proxy = subprocess.Popen(
        [*UQ_ACP, "--url", url, "--", sys.executable, "-c", agent],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proxy.stderr is not None
        assert read_line(proxy.stderr, 30) == "started\n"  # the agent's stderr is the proxy's
        proxy.send_signal(signal.SIGTERM)
        assert proxy.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        proxy.kill()
        out, err = proxy.communicate(timeout=30)  # the agent, too, has let go of the pipes
    assert (out, err) == ("", "")


def test_a_ca_file_that_cannot_be_read_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "ca.pem").write_text("not a certificate\n")
    url = "https://127.0.0.1:8765/?token=abcdefgh"
    code, err = run(capsys, "--url", url, "--ca", str(tmp_path / "ca.pem"), "--", "my-agent")
    assert code == 2
    assert err.startswith(f"uq acp: cannot use the CA file '{tmp_path / 'ca.pem'}'")
