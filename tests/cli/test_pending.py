"""`uq pending`'s lines: who asks, and where the asker said it runs, safe on one line."""

from __future__ import annotations

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
