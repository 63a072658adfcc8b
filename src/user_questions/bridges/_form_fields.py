"""The fields of an elicitation form as our questions, each answer as a typed value, and back.

Pure (no SDK import). Shared by the clients that answer forms through our providers, MCP's
`elicitation_handler` and ACP's `acp_client_handlers`. An elicitation form is a flat JSON object
schema whose properties are strings (with `format`, `minLength`, `maxLength`, `pattern`), numbers
and integers (with `minimum`, `maximum`), booleans, single-selects (`enum`, `enum` + `enumNames`, or
`oneOf` of `const`/`title`, with an optional `description` per entry in ACP) and multi-selects
(`type: array` with `items.enum` or `items.anyOf`). Each property becomes one question; the value
typed or chosen for it comes back as JSON of the type the schema asks for, or as a `Problem` that
says what to fix. Nothing is ever filled in for the user: a schema `default` is shown as a
suggestion, never sent.

`fill_form(provider, fields)` asks the fields (again, for those whose answer did not fit) and
says how it ended, whatever the protocol; `FieldQuestion.answer_item(value)` turns a value some
other surface gave back into our answer, for recording it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal, TypeGuard
from urllib.parse import urlsplit

from user_questions._checks import check_answer, check_request, quoted
from user_questions.errors import ErrorCode, HarnessError
from user_questions.service import AskUserQuestionRequest, UserQuestionProvider
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
)

__all__ = [
    "GIVE_UP",
    "MAX_ATTEMPTS",
    "MAX_FIELDS",
    "NO",
    "SKIPPED",
    "YES",
    "Choice",
    "FieldQuestion",
    "Filled",
    "FormOutcome",
    "Problem",
    "Skipped",
    "Unfilled",
    "Unsupported",
    "ask_checked",
    "fill_form",
    "form_fields",
    "unique_choices",
]

MAX_ATTEMPTS = 3
"""Rounds of asking one form: the first, then re-asks of the fields whose answer did not fit."""
MAX_FIELDS = 64
"""The most fields one form may hold."""
GIVE_UP = frozenset({ErrorCode.ASK_CANCELLED, ErrorCode.ASK_ABORTED, ErrorCode.ASK_TIMED_OUT})
"""The codes of an ask that ended without an answer: dismissed, aborted, timed out."""

YES, NO = "Yes", "No"
Kind = Literal["string", "number", "integer", "boolean", "enum", "multi"]
Choice = tuple[str, str, str | None]
"""An option of a select: its label, the value it sends, its description."""
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class Unsupported(ValueError):
    """The form holds a field this client cannot ask; the message names it."""


class Problem(ValueError):
    """An answer that does not fit its field; the message tells the user what to fix."""


class Skipped:
    """The user gave no answer for the field."""


SKIPPED = Skipped()


@dataclass(slots=True)
class FieldQuestion:
    """One property of the form, asked as one question."""

    key: str
    kind: Kind
    schema: Mapping[str, Any]
    required: bool
    question: AskUserQuestionItem
    choices: dict[str, str] = field(default_factory=dict)
    """Option label to the `const` it sends, for selects."""

    def answer_item(self, value: object) -> AskUserQuestionAnswerItem | None:
        """The answer that gives `value` (`None`: the field left empty, a skip); `None` when no
        answer to the question gives it."""
        if value is None:
            return AskUserQuestionAnswerItem(id=self.key, selected=[])
        labels = {const: label for label, const in self.choices.items()}
        if self.kind == "boolean":
            chosen = [YES if value else NO] if isinstance(value, bool) else None
        elif self.kind == "enum":
            chosen = [labels[value]] if isinstance(value, str) and value in labels else None
        elif self.kind == "multi" and isinstance(value, list):
            valid = all(item in labels for item in value)
            chosen = [labels[const] for const in labels if const in value] if valid else None
        elif self.kind == "multi":
            chosen = None
        elif self.kind == "string":
            return _custom(self.key, value) if isinstance(value, str) else None
        else:
            return _custom(self.key, json.dumps(value)) if _is_number(value) else None
        return None if chosen is None else AskUserQuestionAnswerItem(id=self.key, selected=chosen)

    def retry(self, problem: str) -> AskUserQuestionItem:
        """The question asked again, saying why the last answer was not taken."""
        note = f"Your last answer was not accepted: {problem}."
        detail = note if not self.question.detail else f"{note}\n\n{self.question.detail}"
        return self.question.model_copy(update={"detail": detail})

    def value(self, item: AskUserQuestionAnswerItem) -> object:
        """The JSON value the answer gives, or `SKIPPED`.

        Raises:
            Problem: the answer does not fit the field.
        """
        if not item.selected and item.custom is None:
            return SKIPPED
        if self.kind in ("enum", "multi", "boolean"):
            return self._choice(item)
        text = item.custom or ""
        if self.kind == "string":
            return self._string(text)
        return self._number(text)

    def _choice(self, item: AskUserQuestionAnswerItem) -> object:
        labels = list(item.selected)
        if item.custom is not None:
            label = self._label_of(item.custom)
            if label is None:
                raise Problem("choose one of the options rather than typing an answer")
            labels.append(label)
        if self.kind == "boolean":
            return labels[0] == YES
        consts = [self.choices[label] for label in labels]
        if self.kind == "enum":
            return consts[0]
        low, high = self.schema.get("minItems"), self.schema.get("maxItems")
        if isinstance(low, int) and len(consts) < low:
            raise Problem(f"choose at least {low}")
        if isinstance(high, int) and len(consts) > high:
            raise Problem(f"choose at most {high}")
        return consts

    def _label_of(self, text: str) -> str | None:
        wanted = text.strip().casefold()
        if self.kind == "boolean":
            return {"yes": YES, "true": YES, "no": NO, "false": NO}.get(wanted)
        for label, const in self.choices.items():
            if wanted in (label.casefold(), const.casefold()):
                return label
        return None

    def _string(self, text: str) -> str:
        schema = self.schema
        low, high = schema.get("minLength"), schema.get("maxLength")
        if isinstance(low, int) and len(text) < low:
            raise Problem(f"type at least {low} characters")
        if isinstance(high, int) and len(text) > high:
            raise Problem(f"type at most {high} characters")
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and re.search(pattern, text) is None:
            raise Problem(f"the text must match the pattern {quoted(pattern)}")
        fmt = schema.get("format")
        if isinstance(fmt, str) and not _fits_format(fmt, text):
            raise Problem(f"type a valid {fmt}")
        return text

    def _number(self, text: str) -> int | float:
        number = _parse_number(text.strip(), integer=self.kind == "integer")
        low, high = self.schema.get("minimum"), self.schema.get("maximum")
        if _is_number(low) and number < low:
            raise Problem(f"type a number of at least {low}")
        if _is_number(high) and number > high:
            raise Problem(f"type a number of at most {high}")
        return number


@dataclass(frozen=True, slots=True)
class Filled:
    """Every field answered or skipped: the values to send, skipped optional fields left out."""

    content: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Unfilled:
    """The form ends without content: `decline` (a required field skipped) or `cancel`."""

    action: Literal["decline", "cancel"]
    reason: HarnessError | None = None
    """For `cancel`: the dismissal, abort or timeout that ended the ask; `None` when the answers
    still did not fit after `MAX_ATTEMPTS` rounds."""


FormOutcome = Filled | Unfilled


async def fill_form(
    provider: UserQuestionProvider,
    fields: Sequence[FieldQuestion],
    max_attempts: int = MAX_ATTEMPTS,
) -> FormOutcome:
    """Ask `fields` through `provider` until every answer fits, for at most `max_attempts`
    rounds; a later round asks only the fields whose answer did not fit, saying why.

    Raises:
        HarnessError: the provider failed otherwise than by a dismissal, an abort or a timeout.
    """
    if not fields:
        return Filled({})
    content: dict[str, Any] = {}
    pending = {one.key: one.question for one in fields}
    by_key = {one.key: one for one in fields}
    for _ in range(max_attempts):
        answer = await ask_checked(provider, list(pending.values()))
        if isinstance(answer, Unfilled):
            return answer
        problems: dict[str, str] = {}
        for item in answer.answers:
            one = by_key[item.id]
            try:
                value = one.value(item)
            except Problem as problem:
                problems[item.id] = str(problem)
                continue
            if value is SKIPPED:
                if one.required:
                    return Unfilled("decline")
                continue
            content[item.id] = value
        if not problems:
            return Filled(content)
        pending = {key: by_key[key].retry(problem) for key, problem in problems.items()}
    return Unfilled("cancel")


async def ask_checked(
    provider: UserQuestionProvider, questions: list[AskUserQuestionItem]
) -> AskUserQuestionAnswer | Unfilled:
    """The provider's checked answer, or `Unfilled("cancel")` when the ask ended without one.

    Raises:
        HarnessError: the provider failed otherwise than by a dismissal, an abort or a timeout.
    """
    try:
        check_request(questions, None, None, None)
        answer = await provider.ask(AskUserQuestionRequest(questions=questions))
        return check_answer(questions, answer)
    except HarnessError as error:
        if error.code in GIVE_UP:
            return Unfilled("cancel", error)
        raise


def form_fields(message: str, schema: Mapping[str, Any]) -> list[FieldQuestion]:
    """Every property of `schema` as a question, in schema order.

    A form of one field asks `message` as its question, with the field's title as header; in a
    larger form each field asks its title, and the first one carries `message` in its detail.

    Raises:
        Unsupported: a schema without properties, a property whose schema is not one of the
            form types, or more than `MAX_FIELDS` properties.
    """
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        raise Unsupported("the requested schema has no properties")
    if len(properties) > MAX_FIELDS:
        raise Unsupported(f"the form has {len(properties)} fields; at most {MAX_FIELDS}")
    required = schema.get("required") or []
    alone = len(properties) == 1
    fields = []
    for index, (key, prop) in enumerate(properties.items()):
        if not isinstance(prop, Mapping):
            raise Unsupported(f"field {quoted(key)} has no schema")
        kind, choices = _kind(key, prop)
        title = prop.get("title") if isinstance(prop.get("title"), str) else None
        notes = _notes(kind, prop, key in required)
        if alone and message:
            text, header = message, title
        else:
            text, header = title or key, None
            if index == 0 and message:
                notes.insert(0, message)
        options = [
            AskUserQuestionOption(label=label, description=description)
            for label, _, description in choices
        ]
        question = AskUserQuestionItem(
            id=key,
            question=text,
            header=header,
            detail="\n\n".join(notes) or None,
            options=options or None,
            multi_select=True if kind == "multi" else None,
        )
        labels = {label: const for label, const, _ in choices}
        fields.append(FieldQuestion(key, kind, prop, key in required, question, labels))
    return fields


def _kind(key: str, prop: Mapping[str, Any]) -> tuple[Kind, list[Choice]]:
    kind = prop.get("type")
    if kind == "boolean":
        return "boolean", [(YES, YES, None), (NO, NO, None)]
    if kind in ("number", "integer"):
        return kind, []
    if kind == "string":
        choices = _choices(prop)
        if choices:
            return "enum", choices
        pattern = prop.get("pattern")
        try:
            re.compile(pattern if isinstance(pattern, str) else "")
        except re.error:
            raise Unsupported(
                f"field {quoted(key)} has a pattern this client cannot read"
            ) from None
        return "string", []
    items = prop.get("items")
    if kind == "array" and isinstance(items, Mapping):
        choices = _choices(items)
        if choices:
            return "multi", choices
    raise Unsupported(f"field {quoted(key)} asks for a kind of value this client cannot ask")


def _choices(schema: Mapping[str, Any]) -> list[Choice]:
    """(label, const, description), titles first; a repeated title gets its value appended to
    stay distinct. Only ACP's `oneOf`/`anyOf` entries carry a description."""
    entries: list[Choice] = []
    one_of = schema.get("oneOf", schema.get("anyOf"))
    enum = schema.get("enum")
    if isinstance(one_of, list):
        for entry in one_of:
            if isinstance(entry, Mapping) and isinstance(entry.get("const"), str):
                title, description = entry.get("title"), entry.get("description")
                entries.append(
                    (
                        title if isinstance(title, str) and title else entry["const"],
                        entry["const"],
                        description if isinstance(description, str) and description else None,
                    )
                )
    elif isinstance(enum, list) and all(isinstance(value, str) for value in enum):
        names = schema.get("enumNames")
        if not (isinstance(names, list) and len(names) == len(enum)):
            names = enum
        pairs = zip(names, enum, strict=True)
        entries = [(str(name) or value, value, None) for name, value in pairs]
    return unique_choices(entries)


def unique_choices(entries: Iterable[Choice]) -> list[Choice]:
    """`entries` with a repeated value left out and a repeated label made distinct by its value
    in parentheses: a question's option labels must be unique."""
    choices: list[Choice] = []
    labels: set[str] = set()
    consts: set[str] = set()
    for label, const, description in entries:
        if const in consts:
            continue
        label = label if label not in labels else f"{label} ({const})"
        labels.add(label)
        consts.add(const)
        choices.append((label, const, description))
    return choices


def _notes(kind: Kind, prop: Mapping[str, Any], required: bool) -> list[str]:
    notes = []
    if isinstance(prop.get("description"), str) and prop["description"]:
        notes.append(prop["description"])
    if kind in ("number", "integer"):
        what = "A whole number" if kind == "integer" else "A number"
        low, high = prop.get("minimum"), prop.get("maximum")
        if _is_number(low) and _is_number(high):
            what += f" from {low} to {high}"
        elif _is_number(low):
            what += f" of at least {low}"
        elif _is_number(high):
            what += f" of at most {high}"
        notes.append(what + ".")
    if kind == "string" and isinstance(prop.get("format"), str):
        notes.append(f"Format: {prop['format']}.")
    if "default" in prop and prop["default"] is not None:
        notes.append(f"Suggested: {prop['default']}.")
    notes.append("Required." if required else "Optional: you may skip it.")
    return notes


def _parse_number(text: str, *, integer: bool) -> int | float:
    try:
        if integer or re.fullmatch(r"[+-]?\d+", text):
            return int(text)
        number = float(text)
    except ValueError:
        raise Problem("type a whole number" if integer else "type a number") from None
    if not math.isfinite(number):
        raise Problem("type a finite number")
    return number


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fits_format(fmt: str, text: str) -> bool:
    try:
        if fmt == "date":
            date.fromisoformat(text)
        elif fmt == "date-time":
            datetime.fromisoformat(text)
        elif fmt == "email":
            return _EMAIL.match(text) is not None
        elif fmt == "uri":
            parts = urlsplit(text)
            return bool(parts.scheme) and bool(parts.netloc or parts.path)
    except ValueError:
        return False
    return True


def _custom(key: str, text: str) -> AskUserQuestionAnswerItem:
    """Text typed for a free-text field; empty text leaves the question skipped."""
    if not text.strip():
        return AskUserQuestionAnswerItem(id=key, selected=[])
    return AskUserQuestionAnswerItem(id=key, selected=[], custom=text)
