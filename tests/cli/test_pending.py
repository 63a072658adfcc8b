"""`uq pending`'s lines: who asks, and where the asker said it runs, safe on one line; a
request it cannot read is named, never the end of the whole list."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from tests.receivers import serving
from user_questions.cli._pending import _json_line, from_line
from user_questions.frames import Origin, QuestionRequested, QuestionRequestedFrame
from user_questions.types import AskUserQuestionItem


def frame(origin: Origin | None) -> QuestionRequestedFrame:
    return QuestionRequestedFrame(
        rpc_id="r1",
        payload=QuestionRequested(
            session_id="agent-1", questions=[AskUserQuestionItem(id="q", question="?")]
        ),
        rendered={},
        asked_at="2025-01-02T03:04:05.000Z",
        origin=origin,
    )


def test_a_line_names_the_session_and_where_its_asker_runs() -> None:
    assert from_line(frame(None)) == "agent-1"
    assert from_line(frame(Origin(client="codex"))) == "agent-1 (codex)"
    both = Origin(client="claude-code", cwd="/home/ada/src/shop")
    assert from_line(frame(both)) == "agent-1 (claude-code · /home/ada/src/shop)"
    hostile = Origin(client="evil\x1b[2J\nclient", cwd="/tmp")
    assert from_line(frame(hostile)) == "agent-1 (evil[2J client · /tmp)"  # no escape, one line


def test_json_lines_carry_the_origin_only_when_there_is_one() -> None:
    assert "origin" not in _json_line(frame(None))
    assert _json_line(frame(Origin(cwd="/srv")))["origin"] == {"cwd": "/srv"}
    assert list(_json_line(frame(Origin(cwd="/srv")))) == [
        "rpcId",
        "sessionId",
        "askedAt",
        "origin",
        "questions",
    ]


class _NewerHost(BaseHTTPRequestHandler):
    """A host of a later version at its network edge: one request whose question this `uq`
    cannot read (a question type it does not know) beside one it can."""

    def do_GET(self) -> None:
        readable = QuestionRequestedFrame(
            rpc_id="r-old",
            payload=QuestionRequested(
                session_id="agent",
                questions=[AskUserQuestionItem(id="q", question="Deploy now?")],
            ),
            rendered={},
            asked_at="2026-12-02T10:00:00+00:00",
        ).model_dump(mode="json", by_alias=True, exclude_none=True)
        unknown = json.loads(json.dumps(readable))
        unknown["rpcId"] = "r-new"
        unknown["payload"]["questions"][0]["kind"] = "slider"  # not a field this uq knows
        unknown["payload"]["questions"][0]["options"] = "0..10"
        body = json.dumps({"pending": [readable, unknown]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def newer_host() -> Iterator[str]:
    with serving(_NewerHost) as address:
        yield f"http://{address}/?token=t"


def test_a_request_this_uq_cannot_read_is_named_and_the_rest_are_listed(newer_host: str) -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "user_questions.cli", "pending", "--url", newer_host],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.splitlines()
    assert line.startswith("r-old")
    assert line.endswith("Deploy now?")
    assert listed.stderr.startswith("uq pending: cannot read request r-new: ")
    answered = subprocess.run(
        [sys.executable, "-m", "user_questions.cli", "answer", "r-new", "--url", newer_host],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answered.returncode == 6
    assert 'question "r-new" cannot be shown here' in answered.stderr
    assert "answer it on the host's page" in answered.stderr
