"""Presentation logic every surface shares: recommended labels, the plan-review view, drafts.

No UI library is imported here; the terminal, the web host and the bridges all build on these
functions so that they present and answer questions alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from user_questions._languages import N_
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
)

__all__ = [
    "CHANGED_TO",
    "WITH_NOTE",
    "AnswerDraft",
    "PlanReview",
    "answer_from_drafts",
    "answer_item_text",
    "parse_recommended_label",
    "plan_review_of",
]

# The mark in English, Chinese, Japanese and Korean (추천 and 권장 are both in use).
_RECOMMENDED = re.compile(
    r"^(?P<display>.*?\S)\s*[(（]\s*(?:recommended|推荐|推奨|추천|권장)\s*[)）]\s*$", re.I | re.S
)


def parse_recommended_label(label: str) -> tuple[str, bool]:
    """Split a trailing `(Recommended)` marker off a label: `(display, recommended)`.

    Accepts `(Recommended)` in any case, `(推荐)`, `(推奨)`, `(추천)` and `(권장)`, in ASCII or
    full-width parentheses, with spaces around; the marker must end the label and follow some
    text. Only the display loses the marker: the answer still carries the full label.
    """
    match = _RECOMMENDED.match(label)
    if match is None:
        return label, False
    return match.group("display"), True


class PlanReview(TypedDict):
    """How a surface shows a plan-review question: the plan, an approve and a decline action."""

    id: str
    question: str
    plan: str
    approve: str
    decline: NotRequired[str]


def plan_review_of(questions: Sequence[AskUserQuestionItem]) -> PlanReview | None:
    """The plan-review view of a batch, or `None` when it must be shown as generic questions.

    Only a batch of exactly one single-select question with a plan-review intent, a `detail`
    (the plan) and at most two options, one of them the approve label, is a plan review.
    """
    if len(questions) != 1:
        return None
    question = questions[0]
    intent, options = question.intent, question.options or []
    if intent is None or intent.kind != "plan-review" or question.detail is None:
        return None
    if question.multi_select or len(options) > 2:
        return None
    labels = [option.label for option in options]
    if intent.approve not in labels:
        return None
    view = PlanReview(
        id=question.id, question=question.question, plan=question.detail, approve=intent.approve
    )
    declines = [label for label in labels if label != intent.approve]
    if declines:
        view["decline"] = declines[0]
    return view


@dataclass(slots=True)
class AnswerDraft:
    """What a surface has collected for one question before the batch is submitted."""

    selected: list[str] = field(default_factory=list)
    """Chosen labels, in any order."""
    custom: str = ""
    """The "Other" text as typed."""
    skipped: bool = False
    """The user chose to skip the question."""
    note: str = ""
    """A remark beside the answer (the answer item's `note`), as typed."""


def answer_from_drafts(
    questions: Sequence[AskUserQuestionItem], drafts: Mapping[str, AnswerDraft]
) -> AskUserQuestionAnswer:
    """Build the batch answer: one item per question, in question order.

    A skipped question (or one with no draft) is `{id, selected: []}`. Custom text is stripped
    and kept only when something remains; on a single-select question it replaces the choice.
    A note is stripped and kept the same way, beside the choice (a skipped question's too).
    Labels are put in option order; one that is not an option is kept (last) so that the
    service's answer check reports the surface's mistake instead of hiding it.
    """
    items = []
    for question in questions:
        draft = drafts.get(question.id)
        note = None if draft is None else draft.note.strip() or None
        if draft is None or draft.skipped:
            items.append(AskUserQuestionAnswerItem(id=question.id, selected=[], note=note))
            continue
        custom = draft.custom.strip() or None
        order = {option.label: index for index, option in enumerate(question.options or ())}
        unknown = len(order)
        selected = sorted(
            dict.fromkeys(draft.selected), key=lambda label: order.get(label, unknown)
        )
        if not question.multi_select and custom is not None:
            selected = []
        items.append(
            AskUserQuestionAnswerItem(id=question.id, selected=selected, custom=custom, note=note)
        )
    return AskUserQuestionAnswer(answers=items)


CHANGED_TO = N_("(changed to {call})")
"""What follows an answer whose call was changed, `{call}` the changed call as compact JSON."""
WITH_NOTE = N_("(note: {note})")
"""What follows an answer given with a note."""


def answer_item_text(
    item: AskUserQuestionAnswerItem,
    *,
    skipped: str = "",
    changed_to: str = CHANGED_TO,
    with_note: str = WITH_NOTE,
) -> str:
    """One answer item as one line of text, for a surface that shows text only (a chat card, an
    A2A text part): the chosen labels, the typed text or the form's value (compact JSON), then
    the changed call and the note, when there are; `skipped` when nothing was chosen.

    The suffixes are `changed_to` and `with_note`: English by default, for a text an agent reads
    (A2A's), and their translations (`gettext(CHANGED_TO)`) where a person reads it."""
    chosen = [*item.selected, *([] if item.custom is None else [item.custom])]
    if item.value is not None:
        chosen.append(_compact_json(item.value))
    text = ", ".join(chosen) or skipped
    if item.edited is not None:
        text += " " + changed_to.format(call=_compact_json(item.edited))
    if item.note is not None:
        text += " " + with_note.format(note=item.note)
    return text.strip()


def _compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
