"""The line dialogue: questions as numbered text, answers as typed lines, for pipes and CI logs.

Private to `providers.terminal`; it needs no extra. Each question is printed with its options
numbered; a reply is one line:

- a number (`2`), or numbers (`1,3`) on a multi-select question; the number after the last option
  is "Other", whose text comes on the next line;
- an option's label, in any case (`yes` chooses `Yes`);
- anything else is the user's own answer (the "Other" text);
- an empty line skips the question.

A reply that cannot be read is explained on one line and the question is asked again. End of input
dismisses the whole request (`ASK_CANCELLED`). A batch of two or more questions ends with a summary
where a question's number asks it again and an empty line submits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from user_questions._checks import cancelled_error
from user_questions._languages import gettext as _
from user_questions._reading.text import printable
from user_questions.presentation import AnswerDraft
from user_questions.providers._terminal_reader import MAX_LINE_CHARS, LineReader, LineTooLongError
from user_questions.providers._terminal_view import QuestionView, describe

__all__ = ["Invalid", "LineDialogue", "NeedsText", "parse_reply", "render_question"]

_NUMBERS = re.compile(r"^[\d\s,]*\d[\d\s,]*$")


@dataclass(frozen=True, slots=True)
class NeedsText:
    """The "Other" number was chosen: the text comes on the next line."""

    selected: list[str]
    """Options chosen with it (multi-select)."""


@dataclass(frozen=True, slots=True)
class Invalid:
    """A reply that cannot be read, and what to do instead."""

    message: str


def parse_reply(view: QuestionView, line: str) -> AnswerDraft | NeedsText | Invalid:
    """Read one reply to `view` (see the module docstring for the rules)."""
    reply = line.strip()
    if not reply:
        return AnswerDraft(skipped=True)
    if not view.options:
        return AnswerDraft(custom=line)
    if _NUMBERS.match(reply):
        return _numbers(view, [int(number) for number in re.findall(r"\d+", reply)])
    wanted = reply.casefold()
    for row in view.options:
        if wanted in (row.label.casefold(), row.display.casefold()):
            return AnswerDraft(selected=[row.label])
    return AnswerDraft(custom=line)


def _numbers(view: QuestionView, numbers: list[int]) -> AnswerDraft | NeedsText | Invalid:
    other = len(view.options) + 1
    for number in numbers:
        if not 1 <= number <= other:
            return Invalid(
                _("there is no option {number}; answer with a number from 1 to {last}").format(
                    number=number, last=other
                )
            )
    chosen = list(dict.fromkeys(numbers))
    if len(chosen) > 1 and not view.multi:
        return Invalid(_("this question takes one answer: give a single number"))
    selected = [view.options[number - 1].label for number in chosen if number != other]
    return NeedsText(selected) if other in chosen else AnswerDraft(selected=selected)


def render_question(view: QuestionView) -> str:
    """The text printed before a question's first prompt."""
    heading = [f"[{view.header}]"] if view.header else []
    if view.total > 1:
        heading.append(
            "("
            + _("question {position} of {total}").format(position=view.position, total=view.total)
            + ")"
        )
    lines = [" ".join(heading)] if heading else []
    lines.append(view.question)
    if view.detail is not None and view.plan_review:
        lines += [f"----- {_('plan')} -----", view.detail, f"----- {_('end of plan')} -----"]
    elif view.detail:
        lines += ["", view.detail, ""]
    for number, row in enumerate(view.options, start=1):
        mark = " " + _("(recommended)") if row.recommended else ""
        lines.append(f"  {number}. {row.display}{mark}")
        if row.description:
            lines.append(f"     {row.description}")
    if view.options:
        other = _("feedback on the plan") if view.plan_review else _("type your own answer")
        lines.append(f"  {len(view.options) + 1}. " + _("Other ({how})").format(how=other))
    lines.append(_instructions(view))
    return "\n".join(lines) + "\n"


def _instructions(view: QuestionView) -> str:
    if not view.options:
        return _("Type your answer; an empty line skips.")
    if view.multi:
        return _("Answer with numbers like 1,3, or type your own answer; an empty line skips.")
    return _("Answer with a number, or type your own answer; an empty line skips.")


class LineDialogue:
    """The line-based surface: reads replies from a `LineReader`, writes to `output`.

    With `echo`, each reply is written after its prompt, so a log of `output` reads as a
    conversation even though the replies came through a pipe.
    """

    def __init__(self, reader: LineReader, output: TextIO, *, echo: bool) -> None:
        self._reader = reader
        self._output = output
        self._echo = echo

    async def answer(self, view: QuestionView, draft: AnswerDraft) -> AnswerDraft:
        """Ask one question until a reply can be read; `draft` is the answer to change, if any."""
        self._write(render_question(view))
        if draft != AnswerDraft():
            self._write(
                "  (" + _("your answer was: {answer}").format(answer=describe(view, draft)) + ")\n"
            )
        while True:
            result = parse_reply(view, await self._line())
            if isinstance(result, NeedsText):
                text = await self._line(_("Your answer:") + " ")
                if not text.strip():
                    self._write("  ! " + _("nothing typed; answer the question again") + "\n")
                    continue
                result = AnswerDraft(selected=result.selected, custom=text)
            if isinstance(result, Invalid):
                self._write(f"  ! {result.message}\n")
                continue
            self._write(f"  -> {describe(view, result)}\n")
            return result

    async def review(
        self, views: Sequence[QuestionView], drafts: Sequence[AnswerDraft]
    ) -> int | None:
        """The batch summary: `None` to submit, or the index of a question to ask again."""
        lines = [_("Your answers:")]
        lines += [
            f"  {v.position}. {v.title} -> {describe(v, d)}"
            for v, d in zip(views, drafts, strict=True)
        ]
        lines.append(_("Press enter to submit, or type a question's number to change its answer."))
        self._write("\n".join(lines) + "\n")
        while True:
            reply = (await self._line()).strip()
            if not reply:
                return None
            if reply.isdigit() and 1 <= int(reply) <= len(views):
                return int(reply) - 1
            self._write(
                "  ! "
                + _("type a number from 1 to {last}, or press enter to submit").format(
                    last=len(views)
                )
                + "\n"
            )

    async def _line(self, prompt: str = "> ") -> str:
        while True:
            self._write(prompt)
            try:
                line = await self._reader.readline()
            except LineTooLongError:
                self._write(
                    "  ! "
                    + _("that line is longer than {limit} characters").format(limit=MAX_LINE_CHARS)
                    + "\n"
                )
                continue
            if line is None:
                self._write("\n")
                raise cancelled_error()
            if self._echo:
                self._write(f"{printable(line)}\n")
            return line

    def _write(self, text: str) -> None:
        self._output.write(text)
        self._output.flush()
