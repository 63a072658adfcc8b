"""`TerminalProvider`: a person at a terminal answers the questions.

Importing this module needs no extra; asking at a real terminal needs the `terminal` extra (rich and
prompt_toolkit), and fails on first use, with the line that installs it, when it is missing. The
line dialogue used for pipes needs nothing.

Two surfaces share one flow (`ask_with`): each question in turn, then, for a batch of two or
more, a summary where the person can change any answer before submitting. The answer is built
with `presentation.answer_from_drafts`, so it means what every other surface's answer means.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Protocol, TextIO

import anyio

from user_questions.presentation import AnswerDraft, answer_from_drafts
from user_questions.providers._terminal_dialogue import LineDialogue
from user_questions.providers._terminal_form import ask_form, value_text
from user_questions.providers._terminal_reader import LineReader
from user_questions.providers._terminal_view import QuestionView, views_of
from user_questions.service import AskUserQuestionRequest
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
)

__all__ = ["INSTALL_HINT", "TerminalProvider", "ask_with"]

INSTALL_HINT = "pip install 'user-questions[terminal]'"
_EXTRA_MODULES = frozenset({"prompt_toolkit", "rich", "pygments"})


class TerminalSurface(Protocol):
    """One way of showing questions at a terminal. Both methods raise `ASK_CANCELLED` when the
    person dismisses the request."""

    async def answer(self, view: QuestionView, draft: AnswerDraft) -> AnswerDraft:
        """Ask one question; `draft` is the earlier answer when it is asked again."""
        ...

    async def review(
        self, views: Sequence[QuestionView], drafts: Sequence[AnswerDraft]
    ) -> int | None:
        """Show a batch's answers: `None` submits, an index asks that question again."""
        ...


async def ask_with(
    surface: TerminalSurface, questions: Sequence[AskUserQuestionItem]
) -> AskUserQuestionAnswer:
    """Ask `questions` one at a time on `surface`; a batch ends with a review before submitting.
    A question with a form is asked field by field (`_terminal_form`)."""
    views = views_of(questions)
    drafts = [AnswerDraft() for _ in views]
    values: dict[int, dict[str, Any]] = {}

    async def ask(index: int) -> None:
        question = questions[index]
        if question.schema_ is None:
            drafts[index] = await surface.answer(views[index], drafts[index])
            return
        values[index] = await ask_form(surface, question)
        # what the review shows; the answer carries the value itself
        drafts[index] = AnswerDraft(custom=value_text(values[index]))

    for index in range(len(views)):
        await ask(index)
    if len(views) > 1:
        while (change := await surface.review(views, drafts)) is not None:
            await ask(change)
    answer = answer_from_drafts(
        questions, {view.id: draft for view, draft in zip(views, drafts, strict=True)}
    )
    items = [
        AskUserQuestionAnswerItem(id=item.id, selected=[], value=values[index] or None)
        if index in values
        else item
        for index, item in enumerate(answer.answers)
    ]
    return AskUserQuestionAnswer(answers=items)


class TerminalProvider:
    """Asks at a terminal, one question at a time (docs/terminal.md).

    When both `input` and `output` are terminals, each question is an interactive list: arrow
    keys or digits move, space ticks on a multi-select question, Enter chooses, "Other" (or its
    digit) opens a text field, "Skip" skips, Esc dismisses the whole request (`ASK_CANCELLED`).
    The question, its detail and its options are wrapped to the terminal's width and drawn again
    when it is resized; PageUp and PageDown scroll a detail taller than the terminal. Otherwise a
    line dialogue asks with numbered options and reads one line per answer; end of input
    dismisses. Ctrl-C raises `KeyboardInterrupt`, as it would at any other prompt.

    Concurrent asks wait their turn: a terminal shows one request at a time. When the asking task
    is cancelled (the service does so on an abort or a timeout), the prompt is erased and the
    terminal restored before the cancellation propagates.

    Args:
        input: where answers are read; `sys.stdin` by default (read when asking).
        output: where questions are drawn; `sys.stderr` by default, which keeps stdout for the
            program's own output.
        interactive: force the interactive prompt (`True`) or the line dialogue (`False`);
            by default the prompt is used when both streams are terminals.
    """

    def __init__(
        self,
        *,
        input: TextIO | None = None,
        output: TextIO | None = None,
        interactive: bool | None = None,
    ) -> None:
        self._input = input
        self._output = output
        self._interactive = interactive
        self._lock = anyio.Lock()
        self._reader: LineReader | None = None

    def __repr__(self) -> str:
        return f"<TerminalProvider interactive={self._interactive}>"

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        async with self._lock:
            return await ask_with(self._surface(), request.questions)

    def _surface(self) -> TerminalSurface:
        input = self._input if self._input is not None else sys.stdin
        output = self._output if self._output is not None else sys.stderr
        interactive = self._interactive
        if interactive is None:
            interactive = _is_tty(input) and _is_tty(output)
        if interactive:
            return _prompt_surface(input, output)
        if self._reader is None:  # kept across asks: text after one answer belongs to the next
            self._reader = LineReader(input)
        return LineDialogue(self._reader, output, echo=not _is_tty(input))


def _is_tty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except ValueError:  # a closed stream
        return False


def _prompt_surface(input: TextIO, output: TextIO) -> TerminalSurface:
    try:
        from user_questions.providers._terminal_prompt import PromptSurface
    except ModuleNotFoundError as error:
        package = (error.name or "").partition(".")[0]
        if package not in _EXTRA_MODULES:
            raise
        raise ModuleNotFoundError(
            f"asking at a terminal needs the terminal extra ({package} is missing): {INSTALL_HINT}",
            name=package,
        ) from error
    return PromptSurface(input, output)
