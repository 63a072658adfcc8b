"""A real pseudo-terminal with a screen model, for the terminal surface's whole-system tests.

`PtyTerminal` spawns a program in a pty of a fixed size (pexpect) and feeds everything it prints
to a VT100 screen model (pyte), which also answers cursor-position requests as a real terminal
does. Tests send keys and wait, under a deadline, for what a person would see on the screen.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pexpect
import pyte

ROWS, COLUMNS = 30, 100
WAIT_SECONDS = 15.0
"""How long to wait for the screen to show something before failing; generous for slow CI."""

UP, DOWN, ENTER, ESC, SPACE, CTRL_C = "\x1b[A", "\x1b[B", "\r", "\x1b", " ", "\x03"
PAGE_UP, PAGE_DOWN = "\x1b[5~", "\x1b[6~"
UQ = str(Path(sys.executable).with_name("uq"))


class _Screen(pyte.Screen):
    """A screen that answers the program's status and cursor-position requests."""

    def __init__(self, columns: int, rows: int, respond: Callable[[str], object]) -> None:
        super().__init__(columns, rows)
        self._respond = respond

    def write_process_input(self, data: str) -> None:
        self._respond(data)


class PtyTerminal:
    """A program running in an xterm-256color pseudo-terminal, `ROWS` x `COLUMNS` unless told."""

    def __init__(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        rows: int = ROWS,
        columns: int = COLUMNS,
    ) -> None:
        environment = {**os.environ, "TERM": "xterm-256color", **(env or {})}
        for name in ("COLUMNS", "LINES", "NO_COLOR"):  # the pty's size and colours decide
            environment.pop(name, None)
        self.child = pexpect.spawn(
            argv[0], argv[1:], env=environment, cwd=cwd, dimensions=(rows, columns)
        )
        self.screen = _Screen(columns, rows, self.child.send)
        self._stream = pyte.ByteStream(self.screen)
        self.transcript = b""

    @property
    def display(self) -> str:
        """What the screen shows now, one line per row, trailing blanks removed."""
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip("\n")

    def resize(self, rows: int, columns: int) -> None:
        """Resize the window, as a person dragging its corner: the kernel sends the program
        SIGWINCH. Like xterm, the screen keeps what it shows, cut to the new size, unreflowed."""
        self._read(0)  # what was drawn at the old size lands on the old screen
        self.screen.resize(rows, columns)
        self.child.setwinsize(rows, columns)

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def wait_for(self, shown: str | Callable[[str], bool], timeout: float = WAIT_SECONDS) -> str:
        """Read output until the screen shows `shown` (text, or a test of the display)."""
        test = shown if callable(shown) else (lambda display: shown in display)
        deadline = time.monotonic() + timeout
        while not test(self.display):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the screen never showed {shown!r}; it shows:\n{self.display}"
                )
            self._read(min(0.1, max(deadline - time.monotonic(), 0.01)))
        return self.display

    def wait_exit(self, timeout: float = WAIT_SECONDS) -> int:
        """Read to the end of output; the program's exit status."""
        deadline = time.monotonic() + timeout
        while self.child.isalive() or not self._eof:
            if time.monotonic() > deadline:
                raise AssertionError(f"the program did not exit; the screen shows:\n{self.display}")
            self._read(0.1)
        self.child.close()
        status = self.child.exitstatus
        return status if status is not None else 128 + (self.child.signalstatus or 0)

    _eof = False

    def _read(self, timeout: float) -> None:
        try:
            data = self.child.read_nonblocking(65_536, timeout=timeout)
        except pexpect.TIMEOUT:
            return
        except pexpect.EOF:
            self._eof = True
            return
        self.transcript += data
        self._stream.feed(data)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close()
