"""A2A messages in our vocabulary and back: what a person is asked, and how their answer travels.

The `a2a` extra (the official `a2a-sdk`, whose types are protocol buffers). Both directions of
A2A use it: the host reading an asker's `SendMessage` (`host/a2a/handler.py`), and `uq a2a watch`
reading an agent's `input-required` status (`integrations/a2a.py`). A2A has no question format,
so a message asks in one of two ways:

- **text parts**: one free-text question, its id `reply`. The first line is the question, the
  rest (markdown) its detail; several text parts are read as one text, a blank line apart;
- **a data part holding our ask** (`{"questions": [...]}`, the ask frame's vocabulary, with its
  optional `origin` and `approval`): those questions, as they are. Text parts beside it are put in
  front of the first question's detail, so that nothing sent is left unshown;
- **a data part holding an approval alone** (`{"approval": {"tool": ..., "input": ...}}`): the
  approval card for that call (`approvals.approval_question`), the text parts as its reason. The
  approval goes with the request either way, so the host's rules may decide it.

Anything else in a message (a file, a URL, raw bytes, a data part without `questions`) is listed
in `MessageContent.others`: the host refuses such a message, `uq a2a watch` shows what it is.

An answer travels as two parts: a data part `{"answers": [...]}` (the vocabulary's answer, exact)
and a text part (`answer_text`: the chosen labels or the typed text, one line per question when
there are several), for a reader that takes text only. A form's `value`, an approval's `edited`
call and a `note` travel in the data part as they are, and the text shows them too (the value and
the changed call as compact JSON, the note as typed), so a reader of text loses none of them.
A data part holds numbers as protobuf doubles: an integer of a form's value reads back as `30.0`
from the data part (its text shows `30`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a.types import Message, Part
from google.protobuf import json_format, struct_pb2

from user_questions._reading.wire import parse_wire
from user_questions.approvals import approval_question
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval, Origin
from user_questions.presentation import answer_item_text
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    WireModel,
)

__all__ = [
    "ANSWERS_KEY",
    "APPROVAL_KEY",
    "JSON_MEDIA_TYPE",
    "QUESTIONS_KEY",
    "REPLY_ID",
    "SKIPPED_TEXT",
    "TEXT_MEDIA_TYPE",
    "AskPart",
    "MessageContent",
    "answer_data",
    "answer_parts",
    "answer_text",
    "ask_data",
    "content_of",
    "data_part",
    "json_of",
    "text_part",
]

QUESTIONS_KEY = "questions"
"""The key of a data part that asks our questions."""
APPROVAL_KEY = "approval"
"""The key of a data part that asks to approve a call."""
ANSWERS_KEY = "answers"
"""The key of a data part that carries our answer."""
REPLY_ID = "reply"
"""The id of the free-text question a message of text parts asks."""
JSON_MEDIA_TYPE = "application/json"
TEXT_MEDIA_TYPE = "text/plain"
SKIPPED_TEXT = "(skipped)"
"""How `answer_text` shows a question the person skipped."""


class AskPart(WireModel):
    """What a data part that asks holds: the ask frame's vocabulary, without its ids (the task
    is the request); `questions`, or an `approval` alone."""

    questions: list[AskUserQuestionItem] | None = None
    origin: Origin | None = None
    """Where the ask comes from, shown with the request."""
    approval: Approval | None = None
    """What an approval card approves: a host's rules may decide it."""


@dataclass(frozen=True, slots=True)
class MessageContent:
    """What a message says, sorted by what the inbox can ask from it."""

    text: str
    """Its text parts, a blank line apart; empty when it has none."""
    ask: AskPart | None = None
    """Its data part holding questions, when it has one."""
    others: tuple[str, ...] = field(default=())
    """What else it holds, one line each (`a file report.pdf (application/pdf)`): parts the
    inbox cannot show as a question."""

    def questions(self) -> list[AskUserQuestionItem]:
        """The questions a person is asked: the data part's, else one free-text question.

        Raises:
            UserQuestionError: `EMPTY_QUESTIONS` when the message holds neither.
        """
        if self.ask is not None and self.ask.questions is not None:
            return _with_text(self.ask.questions, self.text)
        if self.ask is not None and self.ask.approval is not None:
            approval = self.ask.approval
            reason = self.text.strip() or None
            return [approval_question(approval.tool, approval.input, reason=reason)]
        if not self.text.strip():
            raise UserQuestionError(
                "the message holds no text and no data part with questions: nothing to ask",
                ErrorCode.EMPTY_QUESTIONS,
            )
        first, _, rest = self.text.strip().partition("\n")
        return [
            AskUserQuestionItem(id=REPLY_ID, question=first.strip(), detail=rest.strip() or None)
        ]


def content_of(message: Message) -> MessageContent:
    """Sort the parts of `message` (see the module docstring).

    Raises:
        UserQuestionError: `BAD_REQUEST` for a data part with malformed questions, or for more
            than one data part with questions.
    """
    texts: list[str] = []
    asks: list[AskPart] = []
    others: list[str] = []
    for part in message.parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            texts.append(part.text)
        elif kind == "data":
            data = json_of(part.data)
            if isinstance(data, dict) and (QUESTIONS_KEY in data or APPROVAL_KEY in data):
                asks.append(parse_wire(AskPart, data, what="request", code=ErrorCode.BAD_REQUEST))
            else:
                others.append(f"data {_brief_json(data)}")
        else:
            others.append(_described(part, kind))
    if len(asks) > 1:
        raise UserQuestionError(
            f"the message holds {len(asks)} data parts with questions; send one",
            ErrorCode.BAD_REQUEST,
        )
    text = "\n\n".join(text.strip() for text in texts if text.strip())
    return MessageContent(text, asks[0] if asks else None, tuple(others))


def answer_text(questions: Sequence[AskUserQuestionItem], answer: AskUserQuestionAnswer) -> str:
    """The answer as plain text: the chosen labels (comma-separated) or the typed text; with
    several questions, one `header or question: answer` line each."""
    values = [answer_item_text(item, skipped=SKIPPED_TEXT) for item in answer.answers]
    if len(values) == 1:
        return values[0]
    by_id = {question.id: question for question in questions}
    lines = []
    for item, value in zip(answer.answers, values, strict=True):
        question = by_id.get(item.id)
        title = item.id if question is None else (question.header or question.question)
        lines.append(f"{title}: {value}")
    return "\n".join(lines)


def answer_data(answer: AskUserQuestionAnswer) -> dict[str, Any]:
    """The answer as the data part carries it: `{"answers": [...]}`, wire JSON."""
    data: dict[str, Any] = answer.model_dump(mode="json")
    return data


def ask_data(ask: AskPart) -> dict[str, Any]:
    """The ask as a data part carries it: `{"questions": [...], ...}`, wire JSON."""
    data: dict[str, Any] = ask.model_dump(mode="json")
    return data


def answer_parts(
    questions: Sequence[AskUserQuestionItem], answer: AskUserQuestionAnswer
) -> list[Part]:
    """The answer as A2A parts: the data part (exact), then its text rendering."""
    return [data_part(answer_data(answer)), text_part(answer_text(questions, answer))]


def data_part(data: Any) -> Part:
    """A data part holding `data` (any JSON), labelled `application/json`."""
    value = struct_pb2.Value()
    json_format.ParseDict(data, value)
    return Part(data=value, media_type=JSON_MEDIA_TYPE)


def text_part(text: str) -> Part:
    """A text part, labelled `text/plain`."""
    return Part(text=text, media_type=TEXT_MEDIA_TYPE)


def json_of(value: struct_pb2.Value) -> Any:
    """A data part's value as parsed JSON (numbers come back as floats, as protobuf holds them)."""
    return json_format.MessageToDict(value)


def _with_text(questions: list[AskUserQuestionItem], text: str) -> list[AskUserQuestionItem]:
    """`questions`, with `text` (the message's text parts) in front of the first one's detail."""
    if not text.strip() or not questions:
        return questions
    first = questions[0]
    detail = text.strip() if first.detail is None else f"{text.strip()}\n\n{first.detail}"
    return [first.model_copy(update={"detail": detail}), *questions[1:]]


def _described(part: Part, kind: str | None) -> str:
    """One line saying what a part the inbox does not ask from holds."""
    media = f" ({part.media_type})" if part.media_type else ""
    name = f" {part.filename}" if part.filename else ""
    if kind == "url":
        return f"a file{name}{media} at {part.url}"
    if kind == "raw":
        return f"a file{name}{media} of {len(part.raw)} bytes"
    return f"an empty part{media}"


def _brief_json(data: Any, limit: int = 2_000) -> str:
    """`data` as compact JSON, cut to `limit` characters."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"
