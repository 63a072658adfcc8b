"""The interactive terminal surface: a question drawn by prompt_toolkit as a prompt that gives way,
when it ends, to a record of what was asked and answered.

Private to `providers.terminal`; needs the `terminal` extra (rich and prompt_toolkit). The prompt is
a small inline prompt_toolkit application: the question's context (header, question and markdown
detail, rendered by rich) in a pane, the options under it, the key help last. It is drawn again at
the new size whenever the terminal is resized, so nothing of the question scrolls away; how the rows
are shared is `_terminal_pane`'s. When it ends it erases itself, and the context is printed once
more, at the width of that moment, with one line that records the answer, so the scrollback reads as
a transcript.

Cancellation: the application runs in a shielded task. When the asking task is cancelled (an
abort, a timeout), the application is told to exit and is awaited, for at most
`TEARDOWN_SECONDS`, so that it erases the list, shows the cursor and restores the terminal mode
before the cancellation goes on. Cancelling the task that runs `Application.run_async` directly
would skip that teardown and leave a half-drawn list in raw mode.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple, TextIO, TypeVar

import anyio
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import (
    ANSI,
    OneStyleAndTextTuple,
    StyleAndTextTuples,
    to_formatted_text,
)
from prompt_toolkit.formatted_text.utils import split_lines
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import ConditionalContainer, Dimension, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output import Output, create_output
from prompt_toolkit.styles import Style
from rich.console import Console
from rich.text import Text

from user_questions._checks import cancelled_error
from user_questions._languages import gettext as _
from user_questions.presentation import AnswerDraft
from user_questions.providers._terminal_choices import (
    ChoiceState,
    choice_hint,
    choice_lines,
    field_prompt,
    hint_lines,
    review_hint,
    review_lines,
)
from user_questions.providers._terminal_pane import ContextPane, split_rows
from user_questions.providers._terminal_view import QuestionView, describe
from user_questions.providers._terminal_wrap import Fragments, text_width

__all__ = ["TEARDOWN_SECONDS", "PromptSurface", "run_application"]

TEARDOWN_SECONDS = 5.0
"""How long a withdrawn prompt may take to erase itself and restore the terminal."""

T = TypeVar("T")

_STYLE = Style.from_dict(
    {
        "pointer": "ansicyan bold",
        "highlighted": "ansicyan bold",
        "recommended": "ansigreen",
        "ticked": "ansigreen bold",
        "description": "ansibrightblack",
        "hint": "ansibrightblack",
        "notice": "ansiyellow",
        "title": "bold",
    }
)


class _Dismissed(Exception):
    """Esc: the user dismissed the whole request."""


class _Withdrawn(Exception):
    """The asking task was cancelled while the prompt was up."""


async def run_application(app: Application[T]) -> T:
    """Run `app` until it exits; if the calling task is cancelled, exit it cleanly first."""
    withdrawn = False
    outcome: list[T] = []
    failure: list[BaseException] = []
    finished = anyio.Event()
    shield = anyio.CancelScope(shield=True)

    def exit_if_withdrawn() -> None:
        if withdrawn and app.future is not None and not app.future.done():
            app.exit(exception=_Withdrawn())

    async def run() -> None:
        with shield:
            try:
                if not withdrawn:
                    outcome.append(
                        await app.run_async(
                            pre_run=exit_if_withdrawn,
                            set_exception_handler=False,
                            handle_sigint=False,
                        )
                    )
            except (Exception, KeyboardInterrupt) as error:
                failure.append(error)
            finally:
                finished.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        try:
            await finished.wait()
        except anyio.get_cancelled_exc_class():
            withdrawn = True
            exit_if_withdrawn()
            shield.deadline = anyio.current_time() + TEARDOWN_SECONDS
            raise
    if failure:
        raise failure[0]
    return outcome[0]


class PromptSurface:
    """Asks at a terminal: `input` and `output` must both be TTYs (they may be one device)."""

    def __init__(self, input: TextIO, output: TextIO) -> None:
        self._terminal = _Terminal(create_input(stdin=input), create_output(stdout=output))
        self._stream = output
        self._spaced = False

    async def answer(self, view: QuestionView, draft: AnswerDraft) -> AnswerDraft:
        """Run the question's prompt, then record the question and its answer."""
        if self._spaced:  # a blank line between one question's record and the next question
            self._console().print()
        self._spaced = True
        state = ChoiceState.start(view, draft)
        try:
            result = await self._run(_question_app(state, _Context(view), self._terminal))
        finally:  # dismissed, withdrawn or interrupted too: what was asked stays on record
            _print_context(self._console(), view)
        from rich.table import Table  # after the prompt: not on the way to drawing it

        words = describe(view, result)
        mark, style = ("–", "dim") if words.startswith(_("skipped")) else ("✔", "green")
        record = Table.grid()  # a long answer wraps under its own first word
        record.add_column(no_wrap=True)
        record.add_column()
        record.add_row(Text(f"  {mark} ", style), Text(words, style))
        self._console().print(record)
        return result

    async def review(
        self, views: Sequence[QuestionView], drafts: Sequence[AnswerDraft]
    ) -> int | None:
        """The batch summary: `None` submits, an index asks that question again."""
        self._console().print()
        return await self._run(_review_app(views, drafts, self._terminal))

    async def _run(self, app: Application[T]) -> T:
        try:
            return await run_application(app)
        except (_Dismissed, EOFError) as error:  # EOFError: the terminal went away
            raise cancelled_error(cause=error) from error

    def _console(self) -> Console:
        return _console(self._stream, self._terminal.output.get_size().columns)


def _console(
    file: TextIO, width: int, color_system: Literal["auto", "truecolor"] = "auto"
) -> Console:
    return Console(
        file=file,
        width=width,
        force_terminal=True,
        color_system=color_system,
        highlight=False,
        markup=False,
        emoji=False,
    )


def _print_context(console: Console, view: QuestionView) -> None:
    heading = Text()
    if view.header:
        heading.append(f" {view.header} ", style="bold reverse cyan")
    if view.total > 1:
        heading.append(" " if view.header else "")
        heading.append(
            _("question {position} of {total}").format(position=view.position, total=view.total),
            style="dim",
        )
    if heading:
        console.print(heading)
    console.print(Text(view.question, style="bold"))
    if view.detail is None or not view.detail.strip():
        return
    # Loaded for a detail only: with markdown-it and pygments, they slowed every prompt by a tenth.
    from rich.markdown import Markdown
    from rich.panel import Panel

    markdown = Markdown(view.detail, hyperlinks=False)
    if view.plan_review:
        console.print(Panel(markdown, title=_("Plan"), title_align="left", border_style="cyan"))
    else:
        console.print(markdown)
        console.print()


class _Context:
    """A question's header, question and detail as rich renders them, for the prompt's pane.

    Rendered again only when the width changes. Colours are rendered in full and prompt_toolkit
    brings them down to what the terminal shows (and honours `NO_COLOR`).
    """

    def __init__(self, view: QuestionView) -> None:
        self._view = view
        self._width = 0
        self._lines: list[StyleAndTextTuples] = []

    def lines(self, width: int) -> list[StyleAndTextTuples]:
        if width != self._width:
            buffer = io.StringIO()
            _print_context(_console(buffer, width, "truecolor"), self._view)
            ansi = ANSI(buffer.getvalue().removesuffix("\n"))
            self._lines, self._width = list(split_lines(to_formatted_text(ansi))), width
        return self._lines


class _Terminal(NamedTuple):
    input: Input
    output: Output


def _lines(lines: Sequence[Sequence[OneStyleAndTextTuple]]) -> StyleAndTextTuples:
    """Lines as one formatted text, newlines between them."""
    out: StyleAndTextTuples = []
    for number, line in enumerate(lines):
        out += [("", "\n")] if number else []
        out += line
    return out


def _list_layout(
    terminal: _Terminal,
    body: Callable[[int], Fragments],
    hint: Callable[[], str],
    keys: KeyBindings,
    *,
    context: _Context | None = None,
    field: Window | None = None,
    field_text: Callable[[], str | None] = lambda: None,
) -> tuple[Window, Layout]:
    """The prompt, top to bottom: the context pane, the list (hidden while empty), the text field
    (while `field_text` gives its prompt and text; `None` when it is closed), the key help.

    Sizes are read on every redraw, so a resized terminal gets everything again at its new
    width. PageUp and PageDown scroll a long context; Ctrl-C interrupts.
    """
    pane = ContextPane()

    def width() -> int:
        return terminal.output.get_size().columns

    def help_lines() -> list[Fragments]:
        return hint_lines(hint(), width())

    def heights() -> tuple[int, int]:
        size = terminal.output.get_size()
        shown = context.lines(size.columns) if context is not None else []
        drawn = body(size.columns)
        listing = sum(text.count("\n") for _, text in drawn) + 1 if drawn else 0
        typed = field_text()
        tail = len(help_lines())
        if typed is not None:  # the field wraps its text, with a cell for the cursor after it
            tail += text_width(typed) // size.columns + 1
        return split_rows(size.rows, len(shown), listing, tail)

    def context_text() -> StyleAndTextTuples:
        if context is None:
            return []
        lines = context.lines(width())
        shown, status = pane.window(len(lines), heights()[0])
        return _lines(
            [lines[i] for i in shown] + ([[("class:hint", f"  {status}")]] if status else [])
        )

    def context_height() -> Dimension:
        rows = heights()[0]
        return Dimension(min=min(rows, 1), preferred=rows, max=rows)

    def listing_height() -> Dimension:
        rows = heights()[1]
        return Dimension(min=min(rows, 1), preferred=rows)

    listing = Window(
        FormattedTextControl(lambda: [*body(width())], focusable=True, show_cursor=False),
        height=listing_height,
        dont_extend_height=True,
    )
    help_line = Window(
        FormattedTextControl(lambda: _lines(help_lines())),
        dont_extend_height=True,
    )
    parts = [
        Window(FormattedTextControl(context_text), height=context_height, dont_extend_height=True),
        ConditionalContainer(listing, filter=Condition(lambda: bool(body(width())))),
    ]
    if field is not None:
        parts.append(ConditionalContainer(field, Condition(lambda: field_text() is not None)))

    @keys.add("c-c", eager=True)
    def _interrupt(event: KeyPressEvent) -> None:
        event.app.exit(exception=KeyboardInterrupt())

    @keys.add("pageup")
    def _page_up(event: KeyPressEvent) -> None:
        pane.scroll(-1)

    @keys.add("pagedown")
    def _page_down(event: KeyPressEvent) -> None:
        pane.scroll(1)

    return listing, Layout(HSplit([*parts, help_line]), focused_element=listing)


def _application(layout: Layout, keys: KeyBindings, terminal: _Terminal) -> Application[T]:
    """An inline application that erases itself when it ends."""
    return Application(
        layout=layout,
        key_bindings=keys,
        style=_STYLE,
        erase_when_done=True,
        input=terminal.input,
        output=terminal.output,
    )


def _question_app(
    state: ChoiceState, context: _Context, terminal: _Terminal
) -> Application[AnswerDraft]:
    keys = KeyBindings()
    text = Buffer(multiline=False)
    editing = Condition(lambda: state.editing)
    listing_keys = ~editing
    field = Window(
        BufferControl(text, input_processors=[BeforeInput(lambda: field_prompt(state))]),
        dont_extend_height=True,
        wrap_lines=True,
    )
    listing, layout = _list_layout(
        terminal,
        lambda width: choice_lines(state, width),
        lambda: choice_hint(state),
        keys,
        context=context,
        field=field,
        field_text=lambda: field_prompt(state) + text.text if state.editing else None,
    )

    def settle(event: KeyPressEvent, done: AnswerDraft | None = None) -> None:
        if done is not None:
            event.app.exit(result=done)
        elif state.editing and not event.app.layout.has_focus(field):
            text.set_document(Document(state.field_text))
            event.app.layout.focus(field)
        elif not state.editing and not event.app.layout.has_focus(listing):
            event.app.layout.focus(listing)

    @keys.add("up", filter=listing_keys)
    @keys.add("s-tab", filter=listing_keys)
    def _up(event: KeyPressEvent) -> None:
        state.move(-1)

    @keys.add("down", filter=listing_keys)
    @keys.add("tab", filter=listing_keys)
    def _down(event: KeyPressEvent) -> None:
        state.move(1)

    for digit in range(1, 10):

        @keys.add(str(digit), filter=listing_keys)
        def _jump(event: KeyPressEvent, number: int = digit) -> None:
            state.jump(number)
            settle(event)

    @keys.add("n", filter=listing_keys)
    def _note(event: KeyPressEvent) -> None:
        state.start_note()
        settle(event)

    @keys.add("space", filter=listing_keys)
    def _toggle(event: KeyPressEvent) -> None:
        state.toggle()
        settle(event)

    @keys.add("enter", filter=listing_keys)
    def _choose(event: KeyPressEvent) -> None:
        settle(event, state.choose())

    @keys.add("escape", filter=listing_keys, eager=True)
    def _dismiss(event: KeyPressEvent) -> None:
        event.app.exit(exception=_Dismissed())

    @keys.add("enter", filter=editing)
    def _submit_text(event: KeyPressEvent) -> None:
        settle(event, state.submit_text(text.text))

    @keys.add("escape", filter=editing, eager=True)
    def _leave_text(event: KeyPressEvent) -> None:
        if state.leave_text():
            event.app.exit(exception=_Dismissed())
        else:
            settle(event)

    if state.editing:
        text.set_document(Document(state.field_text))
        layout.focus(field)
    return _application(layout, keys, terminal)


def _review_app(
    views: Sequence[QuestionView], drafts: Sequence[AnswerDraft], terminal: _Terminal
) -> Application[int | None]:
    keys = KeyBindings()
    rows = len(views) + 1
    cursor = 0  # 0 is "Submit answers", n is question n

    def body(width: int) -> Fragments:
        return review_lines(views, drafts, cursor, width)

    _, layout = _list_layout(terminal, body, review_hint, keys)

    @keys.add("up")
    @keys.add("s-tab")
    def _up(event: KeyPressEvent) -> None:
        nonlocal cursor
        cursor = (cursor - 1) % rows

    @keys.add("down")
    @keys.add("tab")
    def _down(event: KeyPressEvent) -> None:
        nonlocal cursor
        cursor = (cursor + 1) % rows

    for digit in range(1, min(rows, 10)):

        @keys.add(str(digit))
        def _jump(event: KeyPressEvent, number: int = digit) -> None:
            nonlocal cursor
            cursor = number

    @keys.add("enter")
    def _choose(event: KeyPressEvent) -> None:
        event.app.exit(result=cursor - 1 if cursor else None)

    @keys.add("escape", eager=True)
    def _dismiss(event: KeyPressEvent) -> None:
        event.app.exit(exception=_Dismissed())

    return _application(layout, keys, terminal)
