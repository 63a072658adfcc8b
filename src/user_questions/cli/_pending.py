"""`uq pending`: list the questions waiting on a host, from any terminal (over SSH too).

Level 10, extra `web`. Reads `GET /api/pending` of a running host (`_host_client`). Without
`--json` it prints one line per request, oldest first: its rpcId (what `uq answer RPC_ID`
takes), how long ago it was asked, its session and its first question. With `--json`, one JSON
object per request and line: `{"rpcId", "sessionId", "askedAt", "questions"}`. Exit statuses:
0 listed (an empty list too), 1 the host cannot be reached or refused the token, 2 bad input.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated

import anyio
from cyclopts import Parameter

from user_questions.cli._host_client import HostAddress, HostClient, host_address
from user_questions.cli._serve import fail
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import QuestionRequestedFrame
from user_questions.providers._terminal_view import printable

__all__ = ["HOST_HELP", "TOKEN_HELP", "age", "one_line", "pending", "summary"]

HOST_HELP = "URL of the host, as `uq serve` printed it (its ?token= is used)."
TOKEN_HELP = "The host's token, or a named token. Default: the URL's, else $UQ_TOKEN."
SUMMARY_CHARS = 80
"""The longest question text shown on one line."""

_UNITS = (("d", 86_400), ("h", 3_600), ("min", 60))
_BAD_INPUT = frozenset({ErrorCode.BAD_REQUEST, ErrorCode.BAD_TOKEN})


def pending(
    *,
    host: Annotated[str | None, Parameter(env_var="UQ_URL", help=HOST_HELP)] = None,
    token: Annotated[str | None, Parameter(help=TOKEN_HELP)] = None,
    json_: Annotated[bool, Parameter(name="--json", negative="")] = False,
) -> None:
    """List the questions waiting on a host, oldest first.

    Parameters
    ----------
    json_
        One JSON object per request and line: {"rpcId", "sessionId", "askedAt", "questions"}.
    """
    try:
        frames = anyio.run(_pending, host_address(host, token))
    except UserQuestionError as error:
        fail("pending", error.message, 2 if error.code in _BAD_INPUT else 1)
    if json_:
        for frame in frames:
            print(json.dumps(_json_line(frame), ensure_ascii=False, separators=(",", ":")))
    else:
        _print_table(frames)


async def _pending(address: HostAddress) -> list[QuestionRequestedFrame]:
    async with HostClient(address) as client:
        return await client.pending()


def _json_line(frame: QuestionRequestedFrame) -> dict[str, object]:
    return {
        "rpcId": frame.rpc_id,
        "sessionId": frame.payload.session_id,
        "askedAt": frame.asked_at,
        "questions": frame.payload.questions,
    }


def _print_table(frames: Sequence[QuestionRequestedFrame]) -> None:
    if not frames:
        print("No questions are waiting.")
        return
    now = datetime.now(UTC)
    rows = [
        (one_line(frame.rpc_id), age(frame.asked_at, now), one_line(frame.payload.session_id))
        for frame in frames
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for (rpc_id, asked, session), frame in zip(rows, frames, strict=True):
        cells = rpc_id.ljust(widths[0]), asked.rjust(widths[1]), session.ljust(widths[2])
        print("  ".join((*cells, summary(frame))))


def summary(frame: QuestionRequestedFrame) -> str:
    """The first question's text on one line, and how many more the request holds."""
    questions = frame.payload.questions
    first = one_line(str(questions[0].get("question", ""))) if questions else ""
    if len(first) > SUMMARY_CHARS:
        first = first[: SUMMARY_CHARS - 1] + "…"
    more = len(questions) - 1
    return f"{first} (+{more} more)" if more > 0 else first


def one_line(text: str) -> str:
    """Model-written `text` safe for one terminal line: no control characters, no line breaks."""
    return " ".join(printable(text).split())


def age(asked_at: str, now: datetime) -> str:
    """How long ago `asked_at` (ISO 8601) was: `just now`, `5 min ago`, `3 h ago`, `2 d ago`."""
    try:
        moment = datetime.fromisoformat(asked_at)
    except ValueError:
        return "?"
    seconds = (now - moment).total_seconds()
    if seconds < 60:
        return "just now"
    unit, size = next((unit, size) for unit, size in _UNITS if seconds >= size)
    return f"{int(seconds // size)} {unit} ago"
