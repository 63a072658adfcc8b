"""`--notify-command`: a program run per event, the event's JSON on its stdin, no shell, bounded."""

from __future__ import annotations

import json
import logging
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.host.conftest import PICK, answer
from tests.host.notify.helpers import notifying_hub
from user_questions import ErrorCode, UserQuestionError
from user_questions.host.notify.command import CommandNotifier
from user_questions.outcomes import Surface

pytestmark = pytest.mark.anyio

RECORD = """
import json, os, sys
event = json.loads(sys.stdin.read())
names = ("UQ_EVENT", "UQ_RPC_ID", "UQ_SESSION_ID", "UQ_SUMMARY", "UQ_TOKEN", "UQ_NOTIFY_SECRET")
seen = {name: os.environ.get(name) for name in names}
with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(json.dumps({"event": event, "env": seen, "argv": sys.argv[2:]}) + "\\n")
"""


def python(code: str, *args: str) -> str:
    """A command line running `code` with this Python, as a person would write it."""
    return shlex.join([sys.executable, "-c", code, *args])


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_the_command_reads_each_event_on_stdin_with_its_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UQ_TOKEN", "the-host-token")
    monkeypatch.setenv("UQ_NOTIFY_SECRET", "the-notify-secret")
    out = tmp_path / "events.jsonl"
    notifier = CommandNotifier(python(RECORD, str(out), "two words", "$HOME;rm -rf /"))
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "agent-1", [PICK])
        await hub.respond(
            answer("r1", "agent-1", {"id": "pick", "selected": ["a"]}), via=Surface.WEB
        )
        with anyio.fail_after(20):
            await notifier.drained()
    pending, settled = lines(out)
    assert pending["event"] == {
        "type": "question/pending",
        "id": "r1:pending",
        "rpcId": "r1",
        "sessionId": "agent-1",
        "questions": [PICK.model_dump(mode="json")],
        "askedAt": pending["event"]["askedAt"],
        "at": pending["event"]["askedAt"],
    }
    assert settled["event"]["outcome"] == "answered"
    assert settled["event"]["answer"] == {"answers": [{"id": "pick", "selected": ["a"]}]}
    assert pending["env"] == {
        "UQ_EVENT": "question/pending",
        "UQ_RPC_ID": "r1",
        "UQ_SESSION_ID": "agent-1",
        "UQ_SUMMARY": "Which one?",
        "UQ_TOKEN": None,  # the host's secrets stay with the host
        "UQ_NOTIFY_SECRET": None,
    }
    assert settled["env"]["UQ_EVENT"] == "question/settled"
    assert pending["argv"] == ["two words", "$HOME;rm -rf /"]  # no shell: nothing expanded
    assert (notifier.delivered, notifier.failed) == (2, 0)


async def test_a_command_that_runs_too_long_is_killed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "user_questions.host.notify")
    notifier = CommandNotifier(python("import time; time.sleep(60)"), timeout=0.5)
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [PICK])
        with anyio.fail_after(20):
            await notifier.drained()
    assert notifier.failed == 1
    program = Path(sys.executable).name
    assert caplog.records[0].getMessage().startswith(f"command {sys.executable}: ")
    assert (
        caplog.records[0]
        .getMessage()
        .endswith("question/pending of question r1 killed after 0.5 s")
    )
    assert program in caplog.text


async def test_a_failing_command_is_one_log_line_and_the_next_event_still_runs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "user_questions.host.notify")
    notifier = CommandNotifier(python("import sys; sys.stdin.read(); sys.exit(3)"))
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [PICK])
        await hub.withdraw("r1", via=Surface.ASKER)
        with anyio.fail_after(20):
            await notifier.drained()
    assert [record.getMessage() for record in caplog.records] == [
        f"command {sys.executable}: question/pending of question r1 exited 3",
        f"command {sys.executable}: question/settled of question r1 exited 3",
    ]


async def test_a_command_that_ignores_its_stdin_is_fine(tmp_path: Path) -> None:
    notifier = CommandNotifier(python("pass"))
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [PICK])
        with anyio.fail_after(20):
            await notifier.drained()
    assert (notifier.delivered, notifier.failed) == (1, 0)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("notify-send 'unbalanced", 'cannot read the notify command "notify-send \'unbalanced"'),
        ("   ", "the notify command is empty"),
        ("no-such-program-here --flag", "the notify command 'no-such-program-here' is not found"),
    ],
)
def test_an_unusable_command_is_refused_with_a_code(command: str, message: str) -> None:
    with pytest.raises(UserQuestionError) as caught:
        CommandNotifier(command)
    assert caught.value.code == ErrorCode.BAD_NOTIFIER
    assert caught.value.message.startswith(message)
