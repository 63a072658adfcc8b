"""`uq a2a watch` refuses bad input before reaching anything, and says when the agent is not
there (its answering of an agent is tests/integrations/test_a2a_watch.py's)."""

from __future__ import annotations

import pytest

from tests.e2e.host_process import free_port
from user_questions.cli import app

HOST = "http://127.0.0.1:8765/?token=abcdefgh"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        app(["a2a", "watch", *args])
    return int(exited.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["ftp://agent", "--task", "t"], "the agent's URL must start with http:// or https://"),
        (["http://agent", "--task", "t", "--agent-header", "nocolon"], "is not NAME: VALUE"),
        (
            ["http://agent", "--task", "t", "--poll", "0"],
            "--poll takes a number of seconds above 0",
        ),
        (["http://agent", "--task", "t", "--timeout", "-1"], "--timeout takes a number of seconds"),
    ],
)
def test_bad_input_is_refused_with_status_2(
    capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    code, err = run(capsys, *args, "--url", HOST)
    assert code == 2
    assert err.startswith("uq a2a: ")
    assert said in err


def test_a_host_without_its_token_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UQ_TOKEN", raising=False)
    code, err = run(capsys, "http://agent", "--task", "t", "--url", "http://127.0.0.1:8765")
    assert code == 2
    assert err.startswith("uq a2a: the host's token is needed")


def test_an_agent_that_is_not_there_fails_with_status_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    agent = f"http://127.0.0.1:{free_port()}"
    code, err = run(capsys, agent, "--task", "t", "--url", HOST)
    assert code == 1
    assert err.startswith(f"uq a2a: cannot use the agent's card at {agent}")
