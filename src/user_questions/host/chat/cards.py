"""A request as a chat message, apart from any transport: what it shows, its buttons, and the
answer a person builds by tapping them.

A message shows one question at a time: a tap on an option of a single-select question chooses
it, on a multi-select one toggles it (Done goes on); "Other" waits for typed text. With several
questions the message goes through them one after another, then shows a summary with Send; one
question alone is answered by the tap (or Done, or the text) that completes it. The state between
taps (`Draft`) is kept in the store with the message, so any host that takes over the poller
goes on where the last one stopped. An action names the question it was shown for, so a tap on a
keyboard that is no longer current changes nothing.

A note (the answer item's `note`) is kept in the draft by question, before the choice is made:
a person adds it to the question the message shows (on the summary of several, to the first
question), and the tap that answers sends it beside the choice. The message shows it until then;
the answered message shows it with the answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from user_questions._checks import check_answer
from user_questions._languages import N_
from user_questions._languages import gettext as _
from user_questions.host.stores import StoredQuestion
from user_questions.outcomes import Outcome
from user_questions.presentation import (
    CHANGED_TO,
    WITH_NOTE,
    AnswerDraft,
    answer_from_drafts,
    answer_item_text,
    parse_recommended_label,
    plan_review_of,
)
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
)

__all__ = [
    "ADD_NOTE",
    "CHANGE_NOTE",
    "DISMISS",
    "DONE",
    "FEEDBACK",
    "FORM_ON_PAGE",
    "OTHER",
    "SEND",
    "START_OVER",
    "Answered",
    "Button",
    "Card",
    "Dismissed",
    "Draft",
    "Line",
    "Step",
    "WaitForNote",
    "WaitForText",
    "card_of",
    "cut",
    "detail_parts",
    "ended_rows",
    "ending_of",
    "quorum_line",
    "take_action",
    "take_note",
    "take_text",
    "too_late",
]

# The buttons' labels: message ids, shown in the language of the chat's person (`gettext`).
DONE = N_("Done")
OTHER = N_("Other…")
FEEDBACK = N_("Give feedback…")
SEND = N_("Send")
START_OVER = N_("Start over")
DISMISS = N_("Dismiss")
ADD_NOTE = N_("Add a note…")
CHANGE_NOTE = N_("Change the note…")
FORM_ON_PAGE = N_("This question is a form: fill it in on the page.")
"""What a chat card says of a form question (a chat has no form fields to type a value into)."""
_HOW = {
    Outcome.ANSWERED: N_("Answered"),
    Outcome.DISMISSED: N_("Dismissed"),
    Outcome.WITHDRAWN: N_("Withdrawn"),
    Outcome.TIMED_OUT: N_("Timed out"),
}
_SHOWN = 1000
"""Characters of a note, or of an answer with its note, that a card shows (the answer keeps
them whole)."""
_FENCE = re.compile(r"```([\w+-]*)\n(.*?)```", re.S)
_ACTION = re.compile(r"(?P<verb>[ptoqsrxn])(?:(?P<step>\d{1,2})(?:\.(?P<option>\d{1,2}))?)?")


@dataclass(slots=True)
class Draft:
    """The answer built so far in one message."""

    step: int = 0
    """The question shown; the number of questions: the summary."""
    chosen: dict[str, list[str]] = field(default_factory=dict)
    custom: dict[str, str] = field(default_factory=dict)
    awaiting: str | None = None
    """The id of the question whose typed text ("Other", feedback) is awaited."""
    notes: dict[str, str] = field(default_factory=dict)
    """The note on each question that has one, by the question's id."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "step": self.step,
                "chosen": self.chosen,
                "custom": self.custom,
                "awaiting": self.awaiting,
                "notes": self.notes,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Draft:
        """The draft kept as `text`; a fresh one for anything else (nothing is trusted)."""
        try:
            data = json.loads(text)
            return cls(
                int(data.get("step", 0)),
                {str(k): [str(x) for x in v] for k, v in dict(data.get("chosen", {})).items()},
                {str(k): str(v) for k, v in dict(data.get("custom", {})).items()},
                None if data.get("awaiting") is None else str(data["awaiting"]),
                {str(k): str(v) for k, v in dict(data.get("notes", {})).items()},
            )
        except (ValueError, TypeError, AttributeError):
            return cls()


@dataclass(frozen=True, slots=True)
class Button:
    text: str
    action: str
    """What the button does (`take_action`): short, ASCII, fit for Telegram's 64 bytes."""


@dataclass(frozen=True, slots=True)
class Line:
    """One option as the message's text lists it."""

    label: str
    """The label as shown, without its recommended mark."""
    recommended: bool
    description: str | None
    chosen: bool


@dataclass(frozen=True, slots=True)
class Card:
    """What a message shows now; a transport renders it in its own markup."""

    header: str | None
    question: str
    detail: str | None
    """Markdown: the plan of a plan review, an approval's command, a question's detail."""
    lines: list[Line]
    buttons: list[list[Button]]
    summary: list[tuple[str, str]] = field(default_factory=list)
    """The summary step's question and answer of each question."""
    plan_review: bool = False
    quorum: str | None = None
    """Where the quorum of a call that needs several approvals stands (`quorum_line`)."""
    note: str | None = None
    """The note on the question shown, cut to a card's worth (the summary's rows hold theirs)."""
    note_button: Button | None = None
    """The button that adds (or changes) the note here, for an app that offers one (Slack);
    `None`: no note here (a form)."""


@dataclass(frozen=True, slots=True)
class Answered:
    answer: AskUserQuestionAnswer


@dataclass(frozen=True, slots=True)
class Dismissed:
    pass


@dataclass(frozen=True, slots=True)
class WaitForText:
    """Ask the person to type: the "Other" text, or a plan review's feedback."""

    prompt: str


@dataclass(frozen=True, slots=True)
class WaitForNote:
    """Ask the person for the note on a question (`take_note`), showing the one it has."""

    prompt: str
    """The question's text."""
    question: str
    """The question's id: the note goes to it, wherever the message has gone on to since."""
    note: str


Step = Draft | Answered | Dismissed | WaitForText | WaitForNote | None
"""What an action leads to: a new draft to show, an answer or a dismissal to give, text (or a
note) to wait for, or `None`: nothing (a stale or unknown action)."""


def quorum_line(needed: int, approved_by: Sequence[str]) -> str | None:
    """Where a quorum stands, as every surface says it (`1 of 2 approved: alice`); `None` when
    one approval settles the request."""
    if needed < 2:
        return None
    values = {"approved": len(approved_by), "needed": needed, "people": ", ".join(approved_by)}
    if not approved_by:
        return _("{approved} of {needed} approved").format(**values)
    return _("{approved} of {needed} approved: {people}").format(**values)


def card_of(
    questions: Sequence[AskUserQuestionItem], draft: Draft, quorum: str | None = None
) -> Card:
    """What the message shows for `draft`, with the request's `quorum` line."""
    return replace(_card_of(questions, draft), quorum=quorum)


def _card_of(questions: Sequence[AskUserQuestionItem], draft: Draft) -> Card:
    if draft.step >= len(questions):
        return _summary(questions, draft)
    index = draft.step
    question = questions[index]
    chosen = set(draft.chosen.get(question.id, ()))
    lines, buttons = [], []
    for number, option in enumerate(question.options or ()):
        display, recommended = parse_recommended_label(option.label)
        picked = option.label in chosen
        lines.append(Line(display, recommended, option.description, picked))
        mark = ("☑ " if picked else "☐ ") if question.multi_select else ""
        buttons.append([Button(mark + option.label, f"p{index}.{number}")])
    review = plan_review_of(questions) is not None
    if question.schema_ is not None:
        detail = "\n\n".join(filter(None, [question.detail, _(FORM_ON_PAGE)]))
        return Card(question.header, question.question, detail, [], [[Button(_(DISMISS), "x")]])
    last = [Button(_(FEEDBACK if review else OTHER), f"o{index}"), Button(_(DISMISS), "x")]
    if question.multi_select:
        buttons.append([Button(_(DONE), f"t{index}")])
    buttons.append(last)
    note = draft.notes.get(question.id)
    return Card(
        question.header,
        question.question,
        question.detail,
        lines,
        buttons,
        plan_review=review,
        note=None if note is None else cut(note, _SHOWN),
        note_button=_note_button(question, draft),
    )


def take_action(questions: Sequence[AskUserQuestionItem], draft: Draft, action: str) -> Step:
    """What a tap on the button of `action` does to `draft` (changed in place)."""
    match = _ACTION.fullmatch(action)
    if match is None:
        return None
    verb = match["verb"]
    if verb == "x":
        return Dismissed()
    if verb == "s":
        return Answered(_answer(questions, draft)) if draft.step >= len(questions) else None
    if verb == "r":
        return Draft()
    if verb == "n":
        noted = _noted(questions, draft)
        if match["step"] is None or int(match["step"]) != draft.step or noted is None:
            return None
        return WaitForNote(noted.question, noted.id, draft.notes.get(noted.id, ""))
    if match["step"] is None or int(match["step"]) != draft.step or draft.step >= len(questions):
        return None  # a keyboard shown for another step
    question = questions[draft.step]
    if verb == "o":
        draft.awaiting = question.id
        return WaitForText(question.question)
    if verb == "t":
        return _next(questions, draft) if question.multi_select else None
    options = question.options or []
    if match["option"] is None or int(match["option"]) >= len(options):
        return None
    label = options[int(match["option"])].label
    chosen = draft.chosen.setdefault(question.id, [])
    if not question.multi_select:
        chosen[:] = [label]
        draft.custom.pop(question.id, None)
        return _next(questions, draft)
    if label in chosen:
        chosen.remove(label)
    else:
        chosen.append(label)
    return draft


def take_text(questions: Sequence[AskUserQuestionItem], draft: Draft, text: str) -> Step:
    """What typed `text` does: the awaited question's "Other" text, then on; `None` when no
    text is awaited."""
    awaited = draft.awaiting
    index = next((i for i, q in enumerate(questions) if q.id == awaited), None)
    if index is None or not text.strip():
        return None
    draft.awaiting = None
    draft.custom[questions[index].id] = text
    if not questions[index].multi_select:
        draft.chosen.pop(questions[index].id, None)
    draft.step = index
    return _next(questions, draft)


def take_note(
    questions: Sequence[AskUserQuestionItem], draft: Draft, text: str, question: str | None = None
) -> Draft | None:
    """`text` as the note on the question of id `question` (the one a note was asked for), else
    on the one the message shows (the first on the summary), in `draft` (changed in place);
    blank text takes the note away. `None` when that question takes no note (a form, filled in
    on the page, or an id the request does not have).

    Raises:
        UserQuestionError: `BAD_ANSWER`, as the host refuses an answer with this note (longer
            than `MAX_ANSWER_NOTE_LENGTH`, not text); `draft` is then not to be kept.
    """
    if question is None:
        noted = _noted(questions, draft)
    else:
        noted = next((q for q in questions if q.id == question and q.schema_ is None), None)
    if noted is None:
        return None
    if text.strip():
        draft.notes[noted.id] = text.strip()
    else:
        draft.notes.pop(noted.id, None)
    check_answer(questions, _answer(questions, draft))
    return draft


def _noted(questions: Sequence[AskUserQuestionItem], draft: Draft) -> AskUserQuestionItem | None:
    """The question a note added now is on: the one shown, the first on the summary; `None`
    for a form."""
    question = questions[draft.step] if draft.step < len(questions) else questions[0]
    return None if question.schema_ is not None else question


def _next(questions: Sequence[AskUserQuestionItem], draft: Draft) -> Step:
    draft.step += 1
    if len(questions) == 1:
        return Answered(_answer(questions, draft))
    return draft


def _answer(questions: Sequence[AskUserQuestionItem], draft: Draft) -> AskUserQuestionAnswer:
    drafts = {
        q.id: AnswerDraft(
            list(draft.chosen.get(q.id, ())),
            draft.custom.get(q.id, ""),
            note=draft.notes.get(q.id, ""),
        )
        for q in questions
    }
    return answer_from_drafts(questions, drafts)


def _summary(questions: Sequence[AskUserQuestionItem], draft: Draft) -> Card:
    answer = _answer(questions, draft)
    rows = [
        (question.question, cut(_said(item), _SHOWN) or "—")
        for question, item in zip(questions, answer.answers, strict=True)
    ]
    buttons = [[Button(_(SEND), "s")], [Button(_(START_OVER), "r"), Button(_(DISMISS), "x")]]
    noted = _noted(questions, draft)
    button = None if noted is None else _note_button(noted, draft)
    return Card(None, _("Your answers:"), None, [], buttons, summary=rows, note_button=button)


def _note_button(noted: AskUserQuestionItem, draft: Draft) -> Button:
    """The button asking for the note on `noted`, at the draft's step."""
    return Button(_(CHANGE_NOTE if noted.id in draft.notes else ADD_NOTE), f"n{draft.step}")


def _said(item: AskUserQuestionAnswerItem) -> str:
    """What `item` answered, with its changed call and its note, in the language spoken."""
    return answer_item_text(item, changed_to=_(CHANGED_TO), with_note=_(WITH_NOTE))


def ending_of(record: StoredQuestion) -> str:
    """How `record` ended, by whom and where: `Answered by owner via telegram`, in the language
    spoken."""
    outcome = record.state.outcome
    parts = [_("Pending") if outcome is None else _(_HOW[outcome])]
    if record.settled_by:
        parts.append(_("by {name}").format(name=record.settled_by))
    if record.settled_via:
        parts.append(_("via {surface}").format(surface=record.settled_via))
    return " ".join(parts)


def ended_rows(record: StoredQuestion) -> list[tuple[str, str | None]]:
    """Each question of `record` (cut to a line's worth) and what was answered to it, in the
    current language (the value, the changed call and the note as given)."""
    answers = {} if record.answer is None else {a.id: a for a in record.answer.answers}
    rows = []
    for question in record.questions:
        item = answers.get(question.id)
        said = "" if item is None else _said(item)
        rows.append((cut(question.question, 500), cut(said, _SHOWN) or None))
    return rows


def too_late(record: StoredQuestion) -> str:
    """What a tap on a message of a settled `record` is told."""
    ending = ending_of(record)
    return _("Too late: {ending}.").format(ending=f"{ending[0].lower()}{ending[1:]}")


def cut(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with `…`."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def detail_parts(markdown: str) -> list[tuple[str, str | None]]:
    """`markdown` as runs of text, `(text, None)`, and of fenced code, `(code, language)`: each
    transport marks code up its own way and escapes the rest."""
    parts: list[tuple[str, str | None]] = []
    last = 0
    for match in _FENCE.finditer(markdown):
        parts.append((markdown[last : match.start()], None))
        parts.append((match[2], match[1]))
        last = match.end()
    parts.append((markdown[last:], None))
    return [(text, language) for text, language in parts if text or language is not None]
