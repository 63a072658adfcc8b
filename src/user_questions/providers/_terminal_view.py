"""What a terminal shows for a question, without any UI library.

Both terminal surfaces (the interactive prompt and the line dialogue) build on these views, so they
order, number and mark options alike and describe answers in the same words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from user_questions._languages import gettext as _
from user_questions._reading.text import printable
from user_questions.presentation import AnswerDraft, parse_recommended_label, plan_review_of
from user_questions.types import AskUserQuestionItem

__all__ = ["OptionRow", "QuestionView", "describe", "views_of"]


# C0 and C1 controls (except newline and tab) and the bidi overrides and isolates: model-written
# text must not move the cursor, recolour the screen, retitle the window or reorder what is shown.
@dataclass(frozen=True, slots=True)
class OptionRow:
    """One option as shown: its display text, and the full label the answer carries."""

    label: str
    """The option's label exactly as asked: what `selected` holds when it is chosen."""
    display: str
    """The label without its `(Recommended)` marker, safe to print."""
    description: str | None
    """The option's description, safe to print."""
    recommended: bool


@dataclass(frozen=True, slots=True)
class QuestionView:
    """One question as a terminal shows it; options are in display order."""

    id: str
    question: str
    header: str | None
    detail: str | None
    options: tuple[OptionRow, ...]
    multi: bool
    plan_review: bool
    """A plan review (`presentation.plan_review_of`): `detail` is the plan and the approve option
    comes first."""
    position: int
    """1-based position in the batch."""
    total: int

    @property
    def initial(self) -> int:
        """The option highlighted first: the first recommended one, else the first."""
        return next((i for i, row in enumerate(self.options) if row.recommended), 0)

    @property
    def title(self) -> str:
        """A short name for the question in summaries: its header, else the question."""
        return self.header or self.question


def views_of(questions: Sequence[AskUserQuestionItem]) -> list[QuestionView]:
    """The views of a batch, in question order."""
    review = plan_review_of(questions)
    views = []
    for position, question in enumerate(questions, start=1):
        rows = [_row(option.label, option.description) for option in question.options or ()]
        if review is not None:  # a stable sort: approve first, the others keep their order
            rows.sort(key=lambda row: row.label != review["approve"])
        views.append(
            QuestionView(
                id=question.id,
                question=printable(question.question),
                header=None if question.header is None else printable(question.header),
                detail=None if question.detail is None else printable(question.detail),
                options=tuple(rows),
                multi=bool(question.multi_select) and bool(rows),
                plan_review=review is not None,
                position=position,
                total=len(questions),
            )
        )
    return views


def _row(label: str, description: str | None) -> OptionRow:
    display, recommended = parse_recommended_label(label)
    return OptionRow(
        label=label,
        display=printable(display),
        description=None if description is None else printable(description),
        recommended=recommended,
    )


def describe(view: QuestionView, draft: AnswerDraft) -> str:
    """A draft in words, as records and summaries show it: `Lint, Tests + Other: ...`.

    It reads the draft as `answer_from_drafts` does: custom text replaces the choice of a
    single-select question.
    """
    custom = printable(draft.custom.strip())
    chosen = [row.display for row in view.options if row.label in draft.selected]
    if custom and not view.multi:
        chosen = []
    note = printable(draft.note.strip())
    noted = " " + _("(note: {note})").format(note=note) if note else ""
    if draft.skipped or not (chosen or custom):
        return _("skipped") + noted
    parts = [", ".join(chosen)] if chosen else []
    if custom:
        parts.append(_("Other: {text}").format(text=custom) if view.options else custom)
    return " + ".join(parts) + noted
