"""`uq pending` and `uq answer` against a real host (`uq serve`), in a real pseudo-terminal.

The host and the agents are subprocesses (`host_process.py`): an agent asks through
`RemoteProvider` and the real service and prints what its ask returned, so every test checks
what the agent received. `uq answer` runs in a 100x30 xterm (`pty_terminal.py`), driven by keys
sent once the screen shows the prompt they answer.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.host_process import ROOT, AskerProcess, HostProcess, answer_body, free_port
from tests.e2e.pty_terminal import ENTER, ESC, UQ, PtyTerminal
from user_questions import AskUserQuestionAnswer
from user_questions.cli import _answer
from user_questions.frames import AnswerResult, ClientResponse, QuestionRequestedFrame

HINT = "esc dismiss"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    running = HostProcess(tmp_path_factory.mktemp("host") / "uq.db", port=free_port())
    running.start()
    yield running
    running.stop()


@pytest.fixture
def asking(host: HostProcess) -> Iterator[list[AskerProcess]]:
    """Agents started by a test; any still waiting at the end is stopped, its asks dismissed."""
    agents: list[AskerProcess] = []
    yield agents
    for frame in host.pending():
        host.respond(_dismissal(frame["rpcId"]))
    for agent in agents:
        agent.close()


def ask(host: HostProcess, asking: list[AskerProcess], session: str, *names: str) -> AskerProcess:
    """An agent asking one yes/no question per name; returns once every one is waiting."""
    before = len(host.pending())
    agent = AskerProcess(host.url, names, session=session)
    asking.append(agent)
    host.wait_pending(before + len(names))
    return agent


def uq_answer(spawn: type[PtyTerminal], host: HostProcess, *args: str) -> PtyTerminal:
    """`uq answer` in a new terminal, with the host's URL in $UQ_URL."""
    return spawn([UQ, "answer", *args], env={"UQ_URL": host.url})


def rpc_ids(host: HostProcess, session: str) -> list[str]:
    return [f["rpcId"] for f in host.pending() if f["payload"]["sessionId"] == session]


def _dismissal(rpc_id: str) -> dict[str, Any]:
    return {
        "type": "client-response",
        "rpcId": rpc_id,
        "result": {"ok": False, "error": {"code": "cancelled", "message": "cleanup"}},
    }


def test_enter_answers_and_the_agent_receives_the_answer(
    host: HostProcess, asking: list[AskerProcess], spawn: type[PtyTerminal]
) -> None:
    agent = ask(host, asking, "ci-bot", "deploy")
    (rpc_id,) = rpc_ids(host, "ci-bot")
    terminal = uq_answer(spawn, host)
    screen = terminal.wait_for(HINT)
    assert screen.splitlines()[:6] == [
        f"From ci-bot · asked just now · rpcId {rpc_id}",
        "Go ahead with deploy?",
        "❯ 1. yes",
        "  2. no",
        "  3. Other…",
        "  4. Skip",
    ]
    terminal.send("2" + ENTER)
    assert terminal.wait_exit() == _answer.EXIT_ANSWERED
    assert terminal.display.splitlines()[-2:] == ["  ✔ no", "uq answer: answer sent"]
    assert agent.results() == {"deploy": {"answers": [{"id": "deploy", "selected": ["no"]}]}}


def test_escape_dismisses_and_the_agent_gets_ask_cancelled(
    host: HostProcess, asking: list[AskerProcess], spawn: type[PtyTerminal]
) -> None:
    agent = ask(host, asking, "ci-bot", "migrate")
    terminal = uq_answer(spawn, host)
    terminal.wait_for(HINT)
    terminal.send(ESC)
    assert terminal.wait_exit() == _answer.EXIT_DISMISSED
    assert terminal.display.splitlines()[-1] == (
        "uq answer: dismissed; the asker is told so (ASK_CANCELLED)"
    )
    assert agent.results() == {"migrate": "ASK_CANCELLED"}


def test_a_question_answered_elsewhere_while_shown_is_withdrawn(
    host: HostProcess, asking: list[AskerProcess], spawn: type[PtyTerminal]
) -> None:
    agent = ask(host, asking, "ci-bot", "rollback")
    (rpc_id,) = rpc_ids(host, "ci-bot")
    terminal = uq_answer(spawn, host, rpc_id)
    terminal.wait_for(HINT)
    chosen = {"id": "rollback", "selected": ["yes"]}
    assert host.respond(answer_body(rpc_id, "ci-bot", chosen)) == {"accepted": True}
    assert terminal.wait_exit() == _answer.EXIT_NOT_PENDING
    lines = terminal.display.splitlines()
    assert lines[-1] == f"uq answer: question {rpc_id} was answered elsewhere; nothing was sent"
    assert HINT not in terminal.display  # the list is gone; the question stays as a record
    assert "Go ahead with rollback?" in lines
    assert agent.results() == {"rollback": {"answers": [chosen]}}


def test_sigterm_withdraws_the_prompt_and_sends_nothing(
    host: HostProcess, asking: list[AskerProcess], spawn: type[PtyTerminal]
) -> None:
    ask(host, asking, "patient", "wait")
    (rpc_id,) = rpc_ids(host, "patient")
    terminal = uq_answer(spawn, host)
    terminal.wait_for(HINT)
    terminal.child.kill(signal.SIGTERM)
    assert terminal.wait_exit() == 128 + signal.SIGTERM
    assert terminal.display.splitlines()[-1] == "uq answer: stopped by SIGTERM; nothing was sent"
    assert HINT not in terminal.display
    assert rpc_ids(host, "patient") == [rpc_id]  # still waiting for someone


def test_pick_lists_the_waiting_requests_and_answers_the_chosen_one(
    host: HostProcess, asking: list[AskerProcess], spawn: type[PtyTerminal]
) -> None:
    agent = ask(host, asking, "release-bot", "tag", "publish")
    terminal = uq_answer(spawn, host, "--pick")
    screen = terminal.wait_for(HINT)
    assert "2 requests are waiting. Which one do you answer?" in screen
    assert "❯ 1. release-bot: Go ahead with tag?" in screen
    assert "  2. release-bot: Go ahead with publish?" in screen
    terminal.send("2" + ENTER)
    screen = terminal.wait_for("Go ahead with publish?\n❯ 1. yes")
    assert "From release-bot · asked just now" in screen
    assert "· 1 more waiting" in screen
    terminal.send(ENTER)
    assert terminal.wait_exit() == _answer.EXIT_ANSWERED
    ((waiting, tag),) = [(f["rpcId"], f) for f in host.pending()]
    assert tag["payload"]["questions"][0]["id"] == "tag"
    host.respond(_dismissal(waiting))
    assert agent.results() == {
        "tag": "ASK_CANCELLED",
        "publish": {"answers": [{"id": "publish", "selected": ["yes"]}]},
    }


def test_pick_takes_an_rpc_id_typed_under_other_in_the_line_dialogue(
    host: HostProcess, asking: list[AskerProcess]
) -> None:
    agent = ask(host, asking, "typist", "one", "two")
    _, second = rpc_ids(host, "typist")
    typed = f"3\n{second}\n2\n"  # Other…, the rpcId, then "no" to the question it picks
    done = _uq("answer", "--pick", "--url", host.url, typed=typed)
    assert done.returncode == _answer.EXIT_ANSWERED, done.stderr
    assert "Go ahead with two?" in done.stderr
    assert done.stderr.splitlines()[-1] == "uq answer: answer sent"
    (first,) = rpc_ids(host, "typist")
    host.respond(_dismissal(first))
    assert agent.results() == {
        "one": "ASK_CANCELLED",
        "two": {"answers": [{"id": "two", "selected": ["no"]}]},
    }


def test_with_nothing_waiting_answer_says_so(host: HostProcess) -> None:
    assert host.pending() == []
    done = _uq("answer", env={"UQ_URL": host.url})
    assert (done.returncode, done.stderr) == (
        _answer.EXIT_NOTHING,
        "uq answer: no question is waiting\n",
    )
    unknown = _uq("answer", "no-such-id", "--url", host.url)
    assert (unknown.returncode, unknown.stderr) == (
        _answer.EXIT_NOT_PENDING,
        'uq answer: no question waiting has rpcId "no-such-id"\n',
    )


def test_pending_lists_oldest_first_for_people_and_scripts(
    host: HostProcess, asking: list[AskerProcess]
) -> None:
    ask(host, asking, "lister", "first")
    ask(host, asking, "lister", "second")
    first, second = rpc_ids(host, "lister")
    listed = _uq("pending", "--url", host.base, "--token", host.token)
    assert listed.returncode == 0, listed.stderr
    # The host is shared by this module: an earlier test's question may still be withdrawing.
    ours = [line for line in listed.stdout.splitlines() if "  lister  " in line]
    assert ours == [
        f"{first}  just now  lister  Go ahead with first?",
        f"{second}  just now  lister  Go ahead with second?",
    ]
    as_json = _uq("pending", "--json", env={"UQ_URL": host.base, "UQ_TOKEN": host.token})
    every = [json.loads(line) for line in as_json.stdout.splitlines()]
    objects = [item for item in every if item["sessionId"] == "lister"]
    assert [item["rpcId"] for item in objects] == [first, second]
    assert objects[0] == {
        "rpcId": first,
        "sessionId": "lister",
        "askedAt": objects[0]["askedAt"],
        "questions": [
            {
                "id": "first",
                "question": "Go ahead with first?",
                "options": [{"label": "yes"}, {"label": "no"}],
            }
        ],
    }


def test_pending_refuses_a_wrong_token_and_a_missing_one(host: HostProcess) -> None:
    wrong = _uq("pending", "--url", host.base, "--token", "not-the-token")
    assert wrong.returncode == 1
    assert wrong.stderr == (
        f"uq pending: the host at {host.base}/ refused the token (HTTP 401); use the token "
        "`uq serve` printed, or a named token (`uq token add`)\n"
    )
    missing = _uq("pending", "--url", host.base, env={"UQ_TOKEN": ""})
    assert missing.returncode == 2
    assert missing.stderr.startswith("uq pending: the host's token is needed")


def test_the_old_host_option_still_works_for_a_release_with_a_line_saying_so(
    host: HostProcess,
) -> None:
    listed = _uq("pending", "--json", "--host", host.base, "--token", host.token)
    assert listed.returncode == 0
    assert listed.stderr == (
        "uq pending: --host is deprecated here and will be removed in the next release; use --url\n"
    )


def test_an_answer_the_host_refuses_exits_6_and_the_question_stays(
    host: HostProcess,
    asking: list[AskerProcess],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The terminal only builds valid answers, so a refusal is provoked: the answer claims
    another session, which the host refuses (`bad-response`), as it would any broken answer."""
    ask(host, asking, "strict", "check")
    (rpc_id,) = rpc_ids(host, "strict")
    respond = _answer._response

    def for_another_session(
        frame: QuestionRequestedFrame, given: AskUserQuestionAnswer | None
    ) -> ClientResponse:
        response = respond(frame, given)
        assert isinstance(response.result, AnswerResult)
        value = response.result.value.model_copy(update={"session_id": "someone-else"})
        result = response.result.model_copy(update={"value": value})
        return response.model_copy(update={"result": result})

    monkeypatch.setattr(_answer, "_response", for_another_session)
    read, write = os.pipe()
    os.write(write, b"1\n")
    os.close(write)
    with io.TextIOWrapper(io.FileIO(read)) as answers:  # the person types "1", Enter
        monkeypatch.setattr(sys, "stdin", answers)
        status = _answer.answer(rpc_id, host=host.url)
    assert status == _answer.EXIT_REFUSED
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        f'uq answer: the host refused the answer: question "{rpc_id}" belongs to session '
        '"strict", not "someone-else"'
    )
    assert rpc_ids(host, "strict") == [rpc_id]  # still waiting


def _uq(
    *args: str, env: dict[str, str] | None = None, typed: str = ""
) -> subprocess.CompletedProcess[str]:
    """`uq ARGS` with `typed` as its stdin (the line dialogue), without the caller's UQ_*."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    return subprocess.run(
        [sys.executable, "-m", "user_questions.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**environment, **(env or {})},
        input=typed,
    )


def test_n_adds_a_note_beside_the_choice_and_the_agent_receives_both(
    host: HostProcess, asking: list[AskerProcess], spawn: type[PtyTerminal]
) -> None:
    agent = ask(host, asking, "note-bot", "release")
    terminal = uq_answer(spawn, host)
    assert "n note" in terminal.wait_for(HINT)
    terminal.send("n")
    terminal.wait_for("enter keep the note")
    terminal.send("after the freeze" + ENTER)
    screen = terminal.wait_for("Note: after the freeze")
    assert "  Note: after the freeze" in screen.splitlines()
    terminal.send("1" + ENTER)
    assert terminal.wait_exit() == _answer.EXIT_ANSWERED
    assert terminal.display.splitlines()[-2:] == [
        "  ✔ yes (note: after the freeze)",
        "uq answer: answer sent",
    ]
    assert agent.results() == {
        "release": {"answers": [{"id": "release", "selected": ["yes"], "note": "after the freeze"}]}
    }


JAPANESE = {"UQ_LANG": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": "ja_JP.UTF-8"}
"""A Japanese shell: the tests' own `UQ_LANG=en` cleared."""


def test_answer_speaks_the_terminals_language(
    host: HostProcess, asking: list[AskerProcess], spawn: type[PtyTerminal]
) -> None:
    agent = ask(host, asking, "ja-bot", "deploy")
    (rpc_id,) = rpc_ids(host, "ja-bot")
    terminal = spawn([UQ, "answer", rpc_id], env={"UQ_URL": host.url, **JAPANESE})
    screen = terminal.wait_for("esc 取り消し")
    assert screen.splitlines()[:6] == [
        f"送信元：ja-bot · 質問：たった今 · rpcId {rpc_id}",
        "Go ahead with deploy?",  # the agent's words, as asked
        "❯ 1. yes",
        "  2. no",
        "  3. その他…",
        "  4. スキップ",
    ]
    terminal.send("1" + ENTER)
    assert terminal.wait_exit() == _answer.EXIT_ANSWERED
    assert terminal.display.splitlines()[-1] == "uq answer: 回答を送信しました"
    assert agent.results() == {"deploy": {"answers": [{"id": "deploy", "selected": ["yes"]}]}}


def test_pending_speaks_the_terminals_language_and_its_json_stays_english(
    host: HostProcess, asking: list[AskerProcess]
) -> None:
    ask(host, asking, "ja-lister", "first")
    (rpc_id,) = rpc_ids(host, "ja-lister")
    address = {"UQ_URL": host.base, "UQ_TOKEN": host.token}
    listed = _uq("pending", env={**JAPANESE, **address})
    assert listed.returncode == 0, listed.stderr
    ours = [line for line in listed.stdout.splitlines() if "  ja-lister  " in line]
    assert ours == [f"{rpc_id}  たった今  ja-lister  Go ahead with first?"]
    as_json = _uq("pending", "--json", env={**JAPANESE, **address})
    (line,) = [line for line in as_json.stdout.splitlines() if rpc_id in line]
    assert json.loads(line)["askedAt"].startswith("20")  # data, not words
    assert "たった今" not in as_json.stdout
