"""Reading typed lines from a stream without blocking the event loop.

Private to `providers.terminal`. the line dialogue's input. A pipe or terminal is polled
(`anyio.wait_readable`) before each read, so a cancelled ask leaves no thread behind, blocked in a
read, that would swallow the next line. Lines are bounded by `MAX_LINE_CHARS`.
"""

from __future__ import annotations

import codecs
import os
import stat
from typing import TextIO

import anyio

__all__ = ["MAX_LINE_CHARS", "LineReader", "LineTooLongError"]

MAX_LINE_CHARS = 16_384
"""The longest reply read; a longer line is refused (and dropped) rather than buffered."""

_READ_SIZE = 65_536


class LineTooLongError(Exception):
    """A line longer than `MAX_LINE_CHARS` was read and dropped."""


class LineReader:
    """Reads lines from a text stream without blocking the event loop.

    A pipe or terminal is polled (`anyio.wait_readable`) before each read, so a cancelled ask
    leaves no thread behind, blocked in a read, that would swallow the next line. A regular file
    never blocks and is read directly; a stream with no file descriptor (a `StringIO` in tests)
    is read with `readline`. Text after the current line stays buffered for the next question.
    """

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self._fd, self._poll = _descriptor(stream)
        encoding = getattr(stream, "encoding", None) or "utf-8"
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._buffer = ""
        self._overlong = False
        self._eof = stream is None

    async def readline(self) -> str | None:
        """The next line without its line ending, or `None` at the end of the input.

        Raises:
            LineTooLongError: the line was longer than `MAX_LINE_CHARS`; it has been dropped.
        """
        while True:
            newline = self._buffer.find("\n")
            if newline < 0 and not self._eof:
                if len(self._buffer) > MAX_LINE_CHARS:  # drop it now rather than buffer it all
                    self._buffer, self._overlong = "", True
                await self._fill()
                continue
            end = newline if newline >= 0 else len(self._buffer)
            line, self._buffer = self._buffer[:end], self._buffer[end + 1 :]
            too_long, self._overlong = self._overlong or len(line) > MAX_LINE_CHARS, False
            if too_long:
                raise LineTooLongError
            if newline < 0 and not line:
                return None
            return line.removesuffix("\r")

    async def _fill(self) -> None:
        if self._fd is None:
            assert self._stream is not None
            text = self._stream.readline(_READ_SIZE)
            self._eof = not text
            self._buffer += text
            return
        if self._poll:
            await anyio.wait_readable(self._fd)
        data = os.read(self._fd, _READ_SIZE)
        self._eof = not data
        self._buffer += self._decoder.decode(data, final=self._eof)


def _descriptor(stream: TextIO | None) -> tuple[int | None, bool]:
    """The stream's file descriptor, and whether a read from it may block."""
    try:
        fd = stream.fileno() if stream is not None else None
    except (OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None, False
    if fd is None:
        return None, False
    mode = os.fstat(fd).st_mode
    return fd, stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
