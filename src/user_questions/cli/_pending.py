"""`uq pending`: list the questions waiting on a host, from any terminal (over SSH too).

Extra `web`. Reads `GET /api/pending` of a running host (`_host_client`). Without `--json` it prints
one line per request, oldest first: its rpcId (what `uq answer RPC_ID` takes), how long ago it was
asked, its session (and where the asker said it comes from) and its first question, with how many
times it was asked when the line stands for identical requests of one asker (one answer settles
them all), and where its quorum stands when its call needs several approvals (`1 of 2 approved:
alice`). With `--json`, one JSON object per request and line: `{"rpcId", "sessionId", "askedAt",
"origin"?, "group"?, "quorum"?, "questions"}`.
The lines a person reads follow the terminal's language (`UQ_LANG`, `LC_ALL`, `LC_MESSAGES`,
`LANG`, as `uq ask` does); `--json` and the error messages stay English (docs/translating.md).
Exit statuses: 0 listed (an empty list too), 1 the host cannot be reached or refused the token, 2
bad input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated

import anyio
from cyclopts import Parameter

from user_questions._languages import N_, gettext, ngettext
from user_questions._reading.text import printable
from user_questions.cli._host_client import (
    CA_HELP,
    URL_HELP,
    HostAddress,
    HostClient,
    Pending,
    chosen_url,
    host_address,
)
from user_questions.cli._serve import fail
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Origin, QuestionRequestedFrame

__all__ = [
    "TOKEN_HELP",
    "age",
    "asked_times",
    "asker_text",
    "from_line",
    "one_line",
    "pending",
    "quorum_text",
    "summary",
]

TOKEN_HELP = "The host's token, or a named token. Default: the URL's, else $UQ_TOKEN."
SUMMARY_CHARS = 80
"""The longest question text shown on one line."""

_UNITS = (
    (86_400, N_("{count} d ago")),
    (3_600, N_("{count} h ago")),
    (60, N_("{count} min ago")),
)
_BAD_INPUT = frozenset({ErrorCode.BAD_REQUEST, ErrorCode.BAD_TOKEN})


def pending(
    *,
    url: Annotated[str | None, Parameter(env_var="UQ_URL", help=URL_HELP)] = None,
    token: Annotated[str | None, Parameter(help=TOKEN_HELP)] = None,
    ca: Annotated[str | None, Parameter(help=CA_HELP)] = None,
    json_: Annotated[bool, Parameter(name="--json", negative="")] = False,
    host: Annotated[str | None, Parameter(show=False)] = None,
) -> None:
    """List the questions waiting on a host, oldest first.

    Parameters
    ----------
    json_
        One JSON object per request and line: {"rpcId", "sessionId", "askedAt", "origin"?,
        "group"?, "quorum"?, "questions"}.
    host
        The old name of --url (deprecated).
    """
    try:
        listed = anyio.run(_pending, host_address(chosen_url("pending", url, host), token, ca))
    except UserQuestionError as error:
        fail("pending", error.message, 2 if error.code in _BAD_INPUT else 1)
    if json_:
        for frame in listed.frames:
            print(json.dumps(_json_line(frame), ensure_ascii=False, separators=(",", ":")))
    else:
        _print_table(listed.frames, bool(listed.unreadable))
    for rpc_id, why in listed.unreadable:
        print(f"uq pending: cannot read request {one_line(rpc_id)}: {why}", file=sys.stderr)


async def _pending(address: HostAddress) -> Pending:
    async with HostClient(address) as client:
        return await client.pending()


def _json_line(frame: QuestionRequestedFrame) -> dict[str, object]:
    line: dict[str, object] = {
        "rpcId": frame.rpc_id,
        "sessionId": frame.payload.session_id,
        "askedAt": frame.asked_at,
    }
    if frame.origin is not None:
        line["origin"] = frame.origin.model_dump(mode="json")
    if frame.group is not None:
        line["group"] = frame.group.model_dump(mode="json")
    if frame.quorum is not None:
        line["quorum"] = frame.quorum.model_dump(mode="json", by_alias=True)
    line["questions"] = [question.model_dump(mode="json") for question in frame.payload.questions]
    return line


def _print_table(frames: Sequence[QuestionRequestedFrame], more: bool) -> None:
    if not frames:
        if not more:  # the unreadable ones are waiting too: said on stderr
            print(gettext("No questions are waiting."))
        return
    now = datetime.now(UTC)
    rows = [
        (one_line(frame.rpc_id), age(frame.asked_at, now), from_line(frame)) for frame in frames
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for (rpc_id, asked, session), frame in zip(rows, frames, strict=True):
        cells = rpc_id.ljust(widths[0]), asked.rjust(widths[1]), session.ljust(widths[2])
        print("  ".join((*cells, summary(frame))))


def summary(frame: QuestionRequestedFrame) -> str:
    """The first question's text on one line, and how many more the request holds."""
    questions = frame.payload.questions
    first = one_line(questions[0].question) if questions else ""
    if len(first) > SUMMARY_CHARS:
        first = first[: SUMMARY_CHARS - 1] + "…"
    more = len(questions) - 1
    if more > 0:
        first = gettext("{question} (+{count} more)").format(question=first, count=more)
    return first + asked_times(frame) + quorum_text(frame)


def asked_times(frame: QuestionRequestedFrame) -> str:
    """How many identical requests of its asker the request stands for, when more than one."""
    if frame.group is None:
        return ""
    count = frame.group.count
    return " " + ngettext("(asked {count} time)", "(asked {count} times)", count).format(
        count=count
    )


def quorum_text(frame: QuestionRequestedFrame) -> str:
    """Where the request's quorum stands, when its call needs several approvals:
    ` (1 of 2 approved: alice)`."""
    quorum = frame.quorum
    if quorum is None:
        return ""
    counts = {"approved": len(quorum.approved_by), "needed": quorum.needed}
    if not quorum.approved_by:
        return f" ({gettext('{approved} of {needed} approved').format(**counts)})"
    people = ", ".join(one_line(name) for name in quorum.approved_by)
    tally = gettext("{approved} of {needed} approved: {people}")
    return f" ({tally.format(**counts, people=people)})"


def from_line(frame: QuestionRequestedFrame) -> str:
    """Who asks a pending request, on one line (`asker_text`)."""
    return asker_text(frame.payload.session_id, frame.origin)


def asker_text(session_id: str, origin: Origin | None) -> str:
    """Who asks, on one line: the session, then where the asker said it is, as
    `session (client · cwd)` (either part of the origin may be absent)."""
    session = one_line(session_id)
    parts = [] if origin is None else [part for part in (origin.client, origin.cwd) if part]
    return f"{session} ({' · '.join(one_line(part) for part in parts)})" if parts else session


def one_line(text: str) -> str:
    """Model-written `text` safe for one terminal line: no control characters, no line breaks."""
    return " ".join(printable(text).split())


def age(asked_at: str, now: datetime) -> str:
    """How long ago `asked_at` (ISO 8601) was: `just now`, `5 min ago`, `3 h ago`, `2 d ago` (in
    the language being spoken)."""
    try:
        moment = datetime.fromisoformat(asked_at)
    except ValueError:
        return "?"
    seconds = (now - moment).total_seconds()
    if seconds < 60:
        return gettext("just now")
    size, words = next((size, words) for size, words in _UNITS if seconds >= size)
    return gettext(words).format(count=int(seconds // size))
