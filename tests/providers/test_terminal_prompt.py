"""The interactive prompt in process, on a real pseudo-terminal read into a screen model."""

from __future__ import annotations

import fcntl
import os
import struct
import termios
from collections.abc import AsyncIterator, Callable

import anyio
import pyte
import pytest

from user_questions import (
    AbortController,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    UserQuestionError,
)
from user_questions.abort import AbortSignal
from user_questions.providers.terminal import TerminalProvider

pytestmark = pytest.mark.anyio

ROWS, COLUMNS = 24, 80
DOWN, ENTER, ESC = "\x1b[B", "\r", "\x1b"


class _Screen(pyte.Screen):
    def __init__(self, respond: Callable[[str], object]) -> None:
        super().__init__(COLUMNS, ROWS)
        self._respond = respond

    def write_process_input(self, data: str) -> None:  # answers cursor-position requests
        self._respond(data)


class _Terminal:
    """A pty: the provider draws on its slave side; the test types into and reads the master."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self.input = open(slave, encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.output = open(os.dup(slave), "w", encoding="utf-8")  # noqa: SIM115
        self.screen = _Screen(lambda data: os.write(self.master, data.encode()))
        self._stream = pyte.ByteStream(self.screen)
        self._changed = anyio.Event()

    @property
    def display(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display).strip("\n")

    def mode(self) -> list[object]:
        return termios.tcgetattr(self.input.fileno())

    def press(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    async def pump(self) -> None:
        while True:
            await anyio.wait_readable(self.master)
            self._stream.feed(os.read(self.master, 65_536))
            self._changed.set()
            self._changed = anyio.Event()

    async def shows(self, test: Callable[[str], bool]) -> str:
        with anyio.fail_after(10):
            while True:
                changed = self._changed
                if test(self.display):
                    return self.display
                await changed.wait()

    def close(self) -> None:
        self.input.close()
        self.output.close()
        os.close(self.master)


@pytest.fixture
async def terminal() -> AsyncIterator[_Terminal]:
    pty = _Terminal()
    async with anyio.create_task_group() as group:
        group.start_soon(pty.pump)
        yield pty
        group.cancel_scope.cancel()
    pty.close()


def _deploy() -> AskUserQuestionItem:
    return AskUserQuestionItem(
        id="deploy",
        header="Deploy",
        question="Deploy to production?",
        detail="Ships **1.4.2** to all regions.",
        options=[
            AskUserQuestionOption(label="Yes (Recommended)", description="Ship it now."),
            AskUserQuestionOption(label="No"),
        ],
    )


def _ask_soon(
    group: anyio.abc.TaskGroup, ctx: Context, terminal: _Terminal, signal: AbortSignal | None = None
) -> list[AskUserQuestionAnswer | UserQuestionError]:
    """Start asking `_deploy()` at `terminal` in `group`; the outcome lands in the list."""
    ctx.user_questions.register_provider(
        TerminalProvider(input=terminal.input, output=terminal.output)
    )
    outcome: list[AskUserQuestionAnswer | UserQuestionError] = []

    async def ask() -> None:
        request = AskUserQuestionRequest([_deploy()], signal=signal)
        try:
            outcome.append(await ctx.user_questions.ask(request))
        except UserQuestionError as error:
            outcome.append(error)

    group.start_soon(ask)
    return outcome


def _prompt_is_up(screen: str) -> bool:
    return "esc dismiss" in screen


async def test_the_question_shows_markdown_detail_and_the_recommended_option_first(
    ctx: Context, terminal: _Terminal
) -> None:
    async with anyio.create_task_group() as group:
        outcome = _ask_soon(group, ctx, terminal)
        screen = await terminal.shows(_prompt_is_up)
        assert screen.splitlines() == [
            " Deploy",
            "Deploy to production?",
            "Ships 1.4.2 to all regions.",
            "",
            "❯ 1. Yes (recommended)",
            "     Ship it now.",
            "  2. No",
            "  3. Other…",
            "  4. Skip",
            "",
            "  ↑↓ move · 1-4 jump · n note · enter choose · esc dismiss",
        ]
        terminal.press(DOWN + ENTER)
    assert outcome[0] == AskUserQuestionAnswer.model_validate(
        {"answers": [{"id": "deploy", "selected": ["No"]}]}
    )
    screen = await terminal.shows(lambda screen: "✔" in screen)
    assert screen.splitlines()[-1] == "  ✔ No"
    assert "❯" not in screen


async def test_esc_dismisses_the_request_and_erases_the_list(
    ctx: Context, terminal: _Terminal
) -> None:
    async with anyio.create_task_group() as group:
        outcome = _ask_soon(group, ctx, terminal)
        await terminal.shows(_prompt_is_up)
        terminal.press(ESC)
    error = outcome[0]
    assert isinstance(error, UserQuestionError)
    assert error.code == ErrorCode.ASK_CANCELLED
    screen = await terminal.shows(lambda screen: "Ships" in screen and not _prompt_is_up(screen))
    assert screen.splitlines() == [
        " Deploy",
        "Deploy to production?",
        "Ships 1.4.2 to all regions.",
    ]


async def test_an_abort_withdraws_the_prompt_and_restores_the_terminal(
    ctx: Context, terminal: _Terminal
) -> None:
    cooked = terminal.mode()
    controller = AbortController()
    async with anyio.create_task_group() as group:
        outcome = _ask_soon(group, ctx, terminal, controller.signal)
        await terminal.shows(_prompt_is_up)
        assert terminal.mode() != cooked  # the prompt reads keys in raw mode
        assert terminal.screen.cursor.hidden
        controller.abort()
    error = outcome[0]
    assert isinstance(error, UserQuestionError)
    assert error.code == ErrorCode.ASK_ABORTED
    assert terminal.mode() == cooked
    screen = await terminal.shows(lambda screen: not _prompt_is_up(screen))
    assert "❯" not in screen
    assert not terminal.screen.cursor.hidden


async def test_cancelling_the_asking_task_withdraws_the_prompt_too(
    ctx: Context, terminal: _Terminal
) -> None:
    cooked = terminal.mode()
    async with anyio.create_task_group() as group:
        _ask_soon(group, ctx, terminal)
        await terminal.shows(_prompt_is_up)
        group.cancel_scope.cancel()
    assert terminal.mode() == cooked
    await terminal.shows(lambda screen: not _prompt_is_up(screen))
    assert not terminal.screen.cursor.hidden
