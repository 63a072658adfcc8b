"""The interactive choice list as a state machine over key presses, and what it draws.

Private to `providers.terminal`. no UI library but prompt_toolkit's measure of display width
(through `_terminal_wrap`). The prompt (`_terminal_prompt`) maps keys to these methods and draws
`choice_lines` at its terminal's width; tests press the same keys on a `ChoiceState` and read the
same lines without a terminal. Lines are lists of `(style, text)` pairs, the formatted text of
prompt_toolkit, with style names the prompt's style sheet colours. A label, a description or a note
wider than the terminal is wrapped with a hanging indent: its lines start under its text, after the
pointer, the tick box and the number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from user_questions._languages import gettext as _
from user_questions.presentation import AnswerDraft
from user_questions.providers._terminal_view import QuestionView, describe
from user_questions.providers._terminal_wrap import Fragments, hang, text_width

__all__ = [
    "ChoiceState",
    "RowKind",
    "choice_hint",
    "choice_lines",
    "field_prompt",
    "hint_lines",
    "review_hint",
    "review_lines",
]

POINTER = "❯ "
SET_CURSOR = "[SetCursorPosition]"
"""prompt_toolkit's marker for where the cursor is, in formatted text."""
DIGIT_KEYS = 9
"""Rows 1 to 9 have a digit key; further rows are reached with the arrows."""


class RowKind(Enum):
    """What a row of the interactive list does."""

    OPTION = "option"
    OTHER = "other"
    SKIP = "skip"


@dataclass(slots=True)
class ChoiceState:
    """The interactive list of one question, as a state machine over key presses.

    Rows are the options, then "Other" (free text), then "Skip" on a single-select question. An
    optionless question has no rows: its text field is open from the start. Methods that can end
    the question return the finished `AnswerDraft`, or `None` to keep going.
    """

    view: QuestionView
    cursor: int = 0
    ticked: set[int] = field(default_factory=set)
    """Indices of the ticked options (multi-select)."""
    custom: str = ""
    """The "Other" text."""
    editing: bool = False
    """Whether the text field is open (and has the keyboard)."""
    note: str = ""
    """The note beside the answer (`n` opens its field)."""
    noting: bool = False
    """Whether the open text field is the note's rather than "Other"'s."""
    notice: str = ""
    """A one-line note shown under the list until the next key."""

    @classmethod
    def start(cls, view: QuestionView, draft: AnswerDraft) -> ChoiceState:
        """The list as first shown, or as it was left when the question is asked again."""
        labels = [row.label for row in view.options]
        ticked = {labels.index(label) for label in draft.selected if label in labels}
        state = cls(
            view=view,
            ticked=ticked,
            custom=draft.custom,
            editing=not view.options,
            note=draft.note,
        )
        if ticked and not draft.skipped:
            state.cursor = min(ticked)
        elif draft.custom and not draft.skipped and state.rows:
            state.cursor = state.rows.index(RowKind.OTHER)
        else:
            state.cursor = view.initial
        return state

    @property
    def rows(self) -> list[RowKind]:
        if not self.view.options:
            return []
        rows = [RowKind.OPTION] * len(self.view.options) + [RowKind.OTHER]
        return rows if self.view.multi else [*rows, RowKind.SKIP]

    @property
    def is_free_text(self) -> bool:
        """An optionless question: only the text field."""
        return not self.view.options

    @property
    def field_text(self) -> str:
        """What the text field holds when it opens: the note, or the "Other" text."""
        return self.note if self.noting else self.custom

    def start_note(self) -> None:
        """`n` on the list: open the note's field (a question with options only; an optionless
        question's whole answer is its text)."""
        if not self.is_free_text:
            self.notice = ""
            self.editing = self.noting = True

    def move(self, delta: int) -> None:
        """Move the highlight up or down, wrapping around."""
        self.notice = ""
        if self.rows:
            self.cursor = (self.cursor + delta) % len(self.rows)

    def jump(self, number: int) -> None:
        """A digit: highlight row `number` (1-based); on a multi-select question, toggle it.

        "Other"'s digit opens the text field on either kind of question.
        """
        if 1 <= number <= len(self.rows):
            self.cursor = number - 1
            self.notice = ""
            if self.view.multi:
                self.toggle()
            elif self.rows[self.cursor] is RowKind.OTHER:
                self.editing = True

    def toggle(self) -> None:
        """Space on a multi-select question: tick or untick the highlighted row.

        Ticking "Other" opens the text field; unticking it drops the text.
        """
        if not self.view.multi:
            return
        self.notice = ""
        if self.rows[self.cursor] is RowKind.OTHER:
            if self.custom.strip():
                self.custom = ""
            else:
                self.editing = True
        else:
            self.ticked ^= {self.cursor}

    def choose(self) -> AnswerDraft | None:
        """Enter on the list: answer with the highlighted row, or submit the ticked ones."""
        self.notice = ""
        if self.view.multi:
            return self._ticked_draft()
        row = self.rows[self.cursor]
        if row is RowKind.OTHER:
            self.editing = True
            return None
        if row is RowKind.SKIP:
            return AnswerDraft(skipped=True, note=self.note)
        return AnswerDraft(selected=[self.view.options[self.cursor].label], note=self.note)

    def submit_text(self, text: str) -> AnswerDraft | None:
        """Enter in the text field: the note kept (back to the list), or the "Other" text."""
        if self.noting:
            self.note = text.strip()
            self.editing = self.noting = False
            return None
        if self.is_free_text:
            return AnswerDraft(custom=text) if text.strip() else AnswerDraft(skipped=True)
        self.editing = False
        if self.view.multi:
            self.custom = text if text.strip() else ""
            return None
        if text.strip():
            return AnswerDraft(custom=text, note=self.note)
        self.notice = _("nothing typed: choose an option, or type an answer under Other")
        return None

    def leave_text(self) -> bool:
        """Esc in the text field: back to the options. Returns True when there are none, which
        dismisses the question as Esc does on the list."""
        if self.noting:  # the note's field: back to the list, the note as it was
            self.editing = self.noting = False
            return False
        self.editing = False
        return self.is_free_text

    def _ticked_draft(self) -> AnswerDraft:
        selected = [self.view.options[index].label for index in sorted(self.ticked)]
        if not selected and not self.custom.strip():
            return AnswerDraft(skipped=True, note=self.note)
        return AnswerDraft(selected=selected, custom=self.custom, note=self.note)


def choice_lines(state: ChoiceState, width: int) -> Fragments:
    """The rows of the list at `width` cells: pointer, tick box, number, label, marks, and
    descriptions, each wrapped under its own text."""
    view, out = state.view, Fragments()
    for index, kind in enumerate(state.rows):
        here = index == state.cursor
        style = "class:highlighted" if here else ""
        first = _pointer(here)
        if view.multi:
            ticked = index in state.ticked or (kind is RowKind.OTHER and bool(state.custom.strip()))
            first.append(("class:ticked", "[x] ") if ticked else ("", "[ ] "))
        first.append((style, f"{index + 1}. "))
        label = [(style, _row_text(state, index, kind))]
        if kind is RowKind.OPTION and view.options[index].recommended:
            label.append(("class:recommended", " " + _("(recommended)")))
        out += _joined(hang(first, label, width))
        description = view.options[index].description if kind is RowKind.OPTION else None
        if description:
            indent = " " * text_width("".join(text for _, text in first))
            out += _joined(hang([("", indent)], [("class:description", description)], width))
    if state.note.strip() and not state.noting:
        out += _joined(
            hang(
                [("", "  ")],
                [("class:description", _("Note: {note}").format(note=state.note))],
                width,
            )
        )
    if state.notice:
        out += _joined(hang([("", "  ")], [("class:notice", state.notice)], width))
    return out


def _joined(lines: list[Fragments]) -> Fragments:
    """Lines as one formatted text, each ended by a newline."""
    return [fragment for line in lines for fragment in (*line, ("", "\n"))]


def _pointer(here: bool) -> Fragments:
    """The pointer column; the highlighted row also carries the cursor position, so a list
    taller than the terminal scrolls to keep it in sight (the cursor itself stays hidden)."""
    return [(SET_CURSOR, ""), ("class:pointer", POINTER)] if here else [("", "  ")]


def _row_text(state: ChoiceState, index: int, kind: RowKind) -> str:
    if kind is RowKind.OPTION:
        return state.view.options[index].display
    if kind is RowKind.SKIP:
        return _("Skip")
    if state.custom.strip() and not state.editing:
        return _("Other: {text}").format(text=state.custom.strip())
    return _("Other… (feedback on the plan)") if state.view.plan_review else _("Other…")


def field_prompt(state: ChoiceState) -> str:
    """What stands before the text field."""
    if state.is_free_text:
        return "› "
    if state.noting:
        return "  " + _("Note:") + " "
    return "  " + (_("Feedback:") if state.view.plan_review else _("Your answer:")) + " "


def hint_lines(hint: str, width: int) -> list[Fragments]:
    """A key-help line, indented and wrapped at `width`."""
    return hang([("class:hint", "  ")], [("class:hint", hint)], width)


def choice_hint(state: ChoiceState) -> str:
    """The key help under the list, for the current mode."""
    if state.is_free_text:
        return _("enter submit · enter on nothing skips · esc dismiss")
    if state.noting:
        return _("enter keep the note · esc back to the options")
    if state.editing:
        return _("enter confirm · esc back to the options")
    keys = f"1-{min(len(state.rows), DIGIT_KEYS)}"
    if state.view.multi:
        return _("↑↓ move · space or {keys} tick · n note · enter submit · esc dismiss").format(
            keys=keys
        )
    return _("↑↓ move · {keys} jump · n note · enter choose · esc dismiss").format(keys=keys)


def review_lines(
    views: Sequence[QuestionView], drafts: Sequence[AnswerDraft], cursor: int, width: int
) -> Fragments:
    """The batch summary at `width` cells: row 0 submits, row n changes question n."""
    out: Fragments = [("class:title", _("Review your answers") + "\n")]
    rows = [("", _("Submit answers"))]
    rows += [
        (f"{v.position}. ", f"{v.title} → {describe(v, d)}")
        for v, d in zip(views, drafts, strict=True)
    ]
    for index, (number, text) in enumerate(rows):
        here = index == cursor
        style = "class:highlighted" if here else ""
        out += _joined(hang([*_pointer(here), (style, number)], [(style, text)], width))
    return out


def review_hint() -> str:
    """The key help under the batch summary."""
    return _("↑↓ move · enter on a question changes it · enter on submit sends · esc dismiss")
