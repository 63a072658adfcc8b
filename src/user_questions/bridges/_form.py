"""A batch of questions as one flat elicitation form, and the form's content back as an answer.

No extra. Both form-mode elicitations this package speaks, MCP's and ACP's, take the same restricted
JSON Schema: a flat object whose properties are strings, numbers, booleans, single-selects (`oneOf`
of `const`/`title`) and multi-selects (`type: array`, `items.anyOf`). This module maps our
vocabulary onto that shape once, for both bridges:

- one property per question, named by its id; an option's `const` is its label and its title
  the label; its description goes in the entry's own `description` where the protocol has one
  (ACP's `EnumOption`, with `option_descriptions`), else after the label in the title (MCP's
  titled enums have no other place for it);
- a question with options gets a companion free-text property `<id>.other` for "Other"; with
  `other_choice` the select also offers an explicit "Other" entry (ACP's convention);
- an optionless question is a single string property;
- nothing is required, so every question can be skipped, as in every surface of this package;
- headers, questions and details (a plan review's plan) go into the message.

Reading the content back goes through `presentation.answer_from_drafts` and the service's answer
check, so a form answers exactly as the terminal or the web page would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from user_questions._checks import check_answer, check_request, quoted
from user_questions._reading.json_schema import json_type_name
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.presentation import AnswerDraft, answer_from_drafts
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionOption

__all__ = ["OTHER_SUFFIX", "OTHER_TITLE", "Form", "FormQuestion", "build_form", "option_title"]

OTHER_SUFFIX = ".other"
"""Appended to a question's id to name its free-text "Other" property."""
OTHER_TITLE = "Other"
"""The title of the "Other" entry and of the free-text property."""
_OTHER_CONST = "__other__"


@dataclass(frozen=True, slots=True)
class FormQuestion:
    """Where one question lives in the form."""

    question: AskUserQuestionItem
    key: str
    """The property holding the choice (or the text, for an optionless question)."""
    other_key: str | None
    """The free-text "Other" property, for a question with options."""
    other_const: str | None
    """The select's explicit "Other" value, when the form offers one."""


@dataclass(frozen=True, slots=True)
class Form:
    """A batch of questions as one elicitation form: `message` and `schema` go on the wire."""

    questions: tuple[AskUserQuestionItem, ...]
    fields: tuple[FormQuestion, ...]
    message: str
    schema: dict[str, Any]
    """The `requestedSchema`: a flat object, nothing required."""

    def answer(self, content: Mapping[str, object] | None) -> AskUserQuestionAnswer:
        """The answer an accepted form's `content` gives, in question order.

        A property that is absent, `null` or empty skips its question; unknown properties are
        ignored. Single-select custom text replaces the choice, as on every surface.

        Raises:
            UserQuestionError: `BAD_ANSWER` when a value has the wrong type or names no option.
        """
        content = content or {}
        drafts = {field.question.id: _draft(field, content) for field in self.fields}
        return check_answer(self.questions, answer_from_drafts(self.questions, drafts))


def build_form(
    questions: Sequence[AskUserQuestionItem], *, other_choice: bool, option_descriptions: bool
) -> Form:
    """The form asking `questions` at once; `option_descriptions` when the select entries carry
    a `description` of their own.

    Raises:
        UserQuestionError: the request checks of `ask()` (`EMPTY_QUESTIONS`, `BAD_INTENT`,
            `BAD_QUESTION`): a form is built only from a batch the service would accept.
    """
    check_request(questions, None, None, None)
    taken = {question.id for question in questions}
    fields: list[FormQuestion] = []
    properties: dict[str, Any] = {}
    for question in questions:
        if not question.options:
            fields.append(FormQuestion(question, question.id, None, None))
            properties[question.id] = {"type": "string", "title": question.question}
            continue
        other_key = _unique(question.id + OTHER_SUFFIX, taken)
        labels = {option.label for option in question.options}
        other_const = _unique(_OTHER_CONST, labels) if other_choice else None
        fields.append(FormQuestion(question, question.id, other_key, other_const))
        properties[question.id] = _select(question, other_const, option_descriptions)
        properties[other_key] = _other_text(question)
    return Form(
        questions=tuple(questions),
        fields=tuple(fields),
        message=_message(questions),
        schema={"type": "object", "properties": properties},
    )


def option_title(option: AskUserQuestionOption) -> str:
    """An option as a form shows it: the label, then the description a form has no room for."""
    if option.description:
        return f"{option.label} — {option.description}"
    return option.label


def _select(
    question: AskUserQuestionItem, other: str | None, option_descriptions: bool
) -> dict[str, Any]:
    choices = [_choice(option, option_descriptions) for option in question.options or ()]
    if other is not None:
        choices.append({"const": other, "title": OTHER_TITLE})
    if question.multi_select:
        return {"type": "array", "title": question.question, "items": {"anyOf": choices}}
    return {"type": "string", "title": question.question, "oneOf": choices}


def _choice(option: AskUserQuestionOption, described: bool) -> dict[str, str]:
    if not described:
        return {"const": option.label, "title": option_title(option)}
    if option.description:
        return {"const": option.label, "title": option.label, "description": option.description}
    return {"const": option.label, "title": option.label}


def _other_text(question: AskUserQuestionItem) -> dict[str, Any]:
    effect = "is added to the choices" if question.multi_select else "replaces the choice"
    return {
        "type": "string",
        "title": OTHER_TITLE,
        "description": f"Your own answer to {quoted(question.question)}; it {effect}.",
    }


def _message(questions: Sequence[AskUserQuestionItem]) -> str:
    parts = []
    numbered = len(questions) > 1
    for index, question in enumerate(questions, 1):
        head = f"{question.header}: {question.question}" if question.header else question.question
        if numbered:
            head = f"{index}. {head}"
        parts.append(head if not question.detail else f"{head}\n\n{question.detail}")
    return "\n\n".join(parts)


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or `name~2`, `name~3`, ...: the first that nothing else uses (then taken)."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}~{n}"
    taken.add(candidate)
    return candidate


def _draft(field: FormQuestion, content: Mapping[str, object]) -> AnswerDraft:
    question = field.question
    other = _text(question, field.other_key, content) if field.other_key else ""
    if not question.options:
        return AnswerDraft(custom=_text(question, field.key, content))
    value = content.get(field.key)
    if value is None or value == "":
        chosen: list[str] = []
    elif question.multi_select:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise _bad(question, field.key, "an array of option labels", value)
        chosen = list(value)
    elif isinstance(value, str):
        chosen = [value]
    else:
        raise _bad(question, field.key, "an option label", value)
    labels = {option.label for option in question.options}
    for label in chosen:
        if label not in labels and label != field.other_const:
            raise UserQuestionError(
                f"provider answer for question {question.id}: {quoted(label)} is not one of "
                "its options",
                ErrorCode.BAD_ANSWER,
            )
    return AnswerDraft(selected=[label for label in chosen if label in labels], custom=other)


def _text(question: AskUserQuestionItem, key: str | None, content: Mapping[str, object]) -> str:
    value = content.get(key) if key is not None else None
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _bad(question, key, "a string", value)
    return value


def _bad(question: AskUserQuestionItem, key: str | None, expected: str, value: object) -> Exception:
    return UserQuestionError(
        f"provider answer for question {question.id}: property {quoted(key or '')} must be "
        f"{expected}, got {json_type_name(value)}",
        ErrorCode.BAD_ANSWER,
    )
