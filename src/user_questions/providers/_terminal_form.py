"""A question's form at a terminal: its fields asked one at a time, on either surface.

Private to `providers.terminal`. Each field of the form (`_reading.forms`) becomes a question the
surface already knows how to ask: a yes or no and a choice as options (titles shown, the value
sent), several choices as a multi-select, a text or a number as typed text, with its hint (`A
whole number from 1 to 10.`), its description and its default (filled in). What was typed is read
as the field's type (`3` is the number 3) and checked by the one form checker; a field that does
not fit, or a required field skipped, is asked again saying why. The value keeps its types: an
integer stays an integer, a boolean a boolean.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Protocol

from user_questions._languages import gettext as _
from user_questions._reading.forms import FormField, form_fields
from user_questions.presentation import AnswerDraft
from user_questions.providers._terminal_view import QuestionView, views_of
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

__all__ = ["ask_form", "value_text"]

YES, NO = "Yes", "No"
_SKIPPED = object()


class _Surface(Protocol):
    """What a form needs of a terminal surface (`terminal.TerminalSurface`): one question."""

    async def answer(self, view: QuestionView, draft: AnswerDraft) -> AnswerDraft: ...


async def ask_form(surface: _Surface, question: AskUserQuestionItem) -> dict[str, Any]:
    """The value of `question`'s form, field by field; an empty object when every field was
    optional and skipped. Raises what the surface raises (`ASK_CANCELLED` on Esc)."""
    assert question.schema_ is not None
    fields = form_fields(question.schema_)
    value: dict[str, Any] = {}
    for index, field in enumerate(fields, start=1):
        problem: str | None = None
        while True:
            view = _view(question, field, index, len(fields), problem)
            draft = await surface.answer(view, _draft(field, view))
            read = _read(field, draft)
            if read is _SKIPPED:
                if not field.required:
                    break
                problem = _("This field is required.")
                continue
            problem = field.problem(read)
            if problem is None:
                value[field.key] = read
                break
            problem = f"{problem[0].upper()}{problem[1:]}."
    return value


def value_text(value: Mapping[str, Any]) -> str:
    """A form's value in words, for the terminal's record: `replicas 3, canary true`."""
    if not value:
        return ""
    return ", ".join(f"{key} {json.dumps(one, ensure_ascii=False)}" for key, one in value.items())


def _view(
    question: AskUserQuestionItem, field: FormField, index: int, total: int, problem: str | None
) -> QuestionView:
    """The field as a question, in the form's place in its batch."""
    notes = [problem] if problem else []
    notes += [part for part in (field.description, field.hint()) if part]
    notes.append(_("Required.") if field.required else _("Optional: you may skip it."))
    detail = "\n\n".join(notes)
    if question.detail:
        detail = f"{question.detail}\n\n{detail}"
    asked = AskUserQuestionItem(
        id=field.key,
        header=f"{question.question} ({index}/{total})"[:200],
        question=field.label,
        detail=detail,
        options=_options(field),
        multi_select=field.kind == "choices" or None,
    )
    return views_of([asked])[0]


def _options(field: FormField) -> list[AskUserQuestionOption] | None:
    if field.kind == "boolean":
        return [AskUserQuestionOption(label=YES), AskUserQuestionOption(label=NO)]
    if field.kind in ("choice", "choices"):
        return [AskUserQuestionOption(label=choice.title) for choice in field.choices]
    return None


def _draft(field: FormField, view: QuestionView) -> AnswerDraft:
    """The field's default, filled in."""
    if not field.has_default:
        return AnswerDraft()
    default = field.default
    if field.kind == "boolean":
        return AnswerDraft(selected=[YES if default else NO])
    if field.kind in ("choice", "choices"):
        wanted = default if isinstance(default, list) else [default]
        return AnswerDraft(selected=[c.title for c in field.choices if c.value in wanted])
    return AnswerDraft(custom=str(default))


def _read(field: FormField, draft: AnswerDraft) -> object:
    """What the person gave, as the field's type; `_SKIPPED` for nothing."""
    custom = draft.custom.strip()
    if draft.skipped or not (draft.selected or custom):
        return _SKIPPED
    if field.kind == "boolean":
        return draft.selected == [YES] if draft.selected else custom
    if field.kind == "choice":
        return _value_of(field, draft.selected[0]) if draft.selected else custom
    if field.kind == "choices":
        return [choice.value for choice in field.choices if choice.title in draft.selected]
    if field.kind in ("number", "integer"):
        return _number(custom)
    return custom


def _value_of(field: FormField, title: str) -> str:
    return next((choice.value for choice in field.choices if choice.title == title), title)


def _number(text: str) -> object:
    """`text` as a number (`3` the integer, `2.5` the float); the text itself when it is none,
    which the form's check then refuses, naming the field."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text
