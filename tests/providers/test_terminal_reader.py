"""Reading typed lines without blocking: pipes, files, cancellation and the line limit."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator

import anyio
import pytest

from user_questions.providers._terminal_reader import MAX_LINE_CHARS, LineReader, LineTooLongError

pytestmark = pytest.mark.anyio


@pytest.fixture
def pipe() -> Iterator[tuple[io.TextIOWrapper, int]]:
    read_end, write_end = os.pipe()
    with open(read_end, encoding="utf-8") as reader:
        yield reader, write_end
        os.close(write_end)


async def test_reader_reads_lines_from_a_pipe_and_keeps_the_rest(
    pipe: tuple[io.TextIOWrapper, int],
) -> None:
    stream, write_end = pipe
    os.write(write_end, b"first\r\nsecond\ncaf\xc3")  # the next write ends the "é"
    reader = LineReader(stream)
    assert await reader.readline() == "first"
    assert await reader.readline() == "second"
    os.write(write_end, b"\xa9 au lait\n")
    assert await reader.readline() == "café au lait"


async def test_a_cancelled_read_leaves_no_thread_and_swallows_no_line(
    pipe: tuple[io.TextIOWrapper, int],
) -> None:
    stream, write_end = pipe
    reader = LineReader(stream)
    threads = threading.active_count()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await reader.readline()
    assert threading.active_count() == threads
    os.write(write_end, b"kept\n")
    assert await reader.readline() == "kept"


@pytest.fixture
def ended_pipe() -> Iterator[io.TextIOWrapper]:
    """A pipe whose writer wrote "tail" and closed."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"tail")
    os.close(write_end)
    with open(read_end, encoding="utf-8") as stream:
        yield stream


async def test_end_of_input_ends_the_last_line_then_reads_none(
    ended_pipe: io.TextIOWrapper,
) -> None:
    reader = LineReader(ended_pipe)
    assert await reader.readline() == "tail"
    assert await reader.readline() is None


async def test_a_line_too_long_is_dropped_whole_and_the_next_one_read() -> None:
    reader = LineReader(io.StringIO("x" * (MAX_LINE_CHARS + 5) + "\nshort\n"))
    with pytest.raises(LineTooLongError):
        await reader.readline()
    assert await reader.readline() == "short"


async def test_reader_without_a_stream_is_at_its_end() -> None:
    assert await LineReader(None).readline() is None
