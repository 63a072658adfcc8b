"""What both store backends compute the same way: the search text and the history cursor.

Level 8: imports `types` and `errors`. The search text of a request is kept in a column of its
own, casefolded, so that a history search is a plain `LIKE` on both backends and never matches
the JSON around the words (a search for "label" must not find every request).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from datetime import datetime

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = ["answer_text", "decode_cursor", "encode_cursor", "like_pattern", "question_text"]


def question_text(questions: Iterable[AskUserQuestionItem]) -> str:
    """The searchable text of a request: headers, questions, details, labels, descriptions."""
    parts: list[str] = []
    for question in questions:
        parts += [question.header or "", question.question, question.detail or ""]
        for option in question.options or ():
            parts += [option.label, option.description or ""]
    return _joined(parts)


def answer_text(answer: AskUserQuestionAnswer | None) -> str:
    """The searchable text an answer adds: its custom (typed) text."""
    if answer is None:
        return ""
    return _joined(item.custom or "" for item in answer.answers)


def _joined(parts: Iterable[str]) -> str:
    # Words never span two parts: a search term holds no whitespace, and parts end in a newline.
    return "".join(f"{part}\n" for part in parts if part).casefold()


def like_pattern(term: str) -> str:
    """A `LIKE ... ESCAPE '\\'` pattern matching `term` anywhere, wildcards taken literally."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def encode_cursor(settled_at: str, seq: int) -> str:
    """The opaque cursor after a row: its settled time (as the store compares it) and its seq."""
    return base64.urlsafe_b64encode(f"{settled_at}|{seq}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, int]:
    """The settled time and seq inside a cursor made by `encode_cursor`.

    Raises:
        UserQuestionError: `BAD_REQUEST` for anything else.
    """
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        settled_at, _, seq = text.rpartition("|")
        datetime.fromisoformat(settled_at)
        return settled_at, int(seq)
    except (ValueError, binascii.Error):
        raise UserQuestionError(
            f"invalid history cursor {cursor[:80]!r}; pass the `next` of a previous page",
            ErrorCode.BAD_REQUEST,
        ) from None
