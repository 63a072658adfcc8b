"""Breaking styled text into lines that fit a terminal, measured in display cells.

Private to `providers.terminal`; needs the `terminal` extra (prompt_toolkit). Widths are measured
with prompt_toolkit's `get_cwidth`, the measure its renderer draws with, so a line wrapped here is
never wrapped again: a CJK wide character takes two cells, a combining mark none.

Lines break at spaces, and between two characters where either is a Chinese or Japanese character
(those scripts put no spaces between words); Korean, which does, breaks at spaces like English.
No line starts with closing punctuation (`、。）」`) or ends with opening punctuation (`（「`). A
single word wider than the line is the only thing ever cut, by cells. A newline in the text starts
a new line; a tab is a space.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from itertools import groupby

from prompt_toolkit.utils import get_cwidth

__all__ = ["Fragments", "hang", "text_width", "wrap"]

Fragments = list[tuple[str, str]]
"""Formatted text: `(style, text)` pairs."""

_NO_BREAK_BEFORE = frozenset(
    "、。，．・：；！？）」』】〕〉》〙〗〛｝］"  # closing punctuation
    "ーゝゞぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ"  # small kana and the long vowel mark
)
_NO_BREAK_AFTER = frozenset("（「『【〔〈《〘〖〚｛［")
_HANGUL = ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7FF))


def text_width(text: str) -> int:
    """How many cells `text` takes on a terminal."""
    return get_cwidth(text)


def _ideographic(char: str) -> bool:
    """A wide character of a script written without spaces (not Hangul)."""
    if unicodedata.east_asian_width(char) not in ("W", "F"):
        return False
    code = ord(char)
    return not any(low <= code <= high for low, high in _HANGUL)


def _breaks_between(before: str, after: str) -> bool:
    if before in _NO_BREAK_AFTER or after in _NO_BREAK_BEFORE:
        return False
    return _ideographic(before) or _ideographic(after)


def _boundary(last: str, char: str) -> bool:
    if "\n" in (last, char) or last.isspace() != char.isspace():
        return True
    return not char.isspace() and _breaks_between(last, char)


_Chars = list[tuple[str, str]]
"""Styled characters: `(style, char)`."""


def _units(chars: _Chars) -> Iterator[_Chars]:
    """Runs of spaces, newlines one by one, and runs of characters no line may break inside."""
    unit: _Chars = []
    for style, char in chars:
        if unit and _boundary(unit[-1][1], char):
            yield unit
            unit = []
        unit.append((style, " " if char == "\t" else char))
    if unit:
        yield unit


def _width(chars: _Chars) -> int:
    return get_cwidth("".join(char for _, char in chars))


def _cut(word: _Chars, width: int) -> Iterator[_Chars]:
    """A word wider than a line, in pieces of at most `width` cells (at least one character)."""
    piece: _Chars = []
    used = 0
    for style, char in word:
        cells = get_cwidth(char)
        if piece and used + cells > width:
            yield piece
            piece, used = [], 0
        piece.append((style, char))
        used += cells
    if piece:
        yield piece


def _lines(chars: _Chars, width: int) -> Iterator[_Chars]:
    line: _Chars = []
    used = 0
    spaces: _Chars = []  # between the line and the next word; dropped where the line breaks
    for unit in _units(chars):
        if unit[0][1] == "\n":
            yield line
            line, used, spaces = [], 0, []
            continue
        if unit[0][1].isspace():
            spaces = unit
            continue
        cells = _width(unit)
        if used + _width(spaces) + cells <= width:
            line += spaces + unit
            used += _width(spaces) + cells
        elif cells <= width:
            if line:
                yield line
            line, used = unit, cells
        else:
            if line:
                yield line
            *whole, line = _cut(unit, width)
            yield from whole
            used = _width(line)
        spaces = []
    yield line


def wrap(fragments: Fragments, width: int) -> list[Fragments]:
    """`fragments` broken into lines of at most `width` cells, each line without its newline.

    Empty text is one empty line; spaces where a line breaks are dropped.
    """
    whole = "".join(text for _, text in fragments)
    if get_cwidth(whole) <= width and "\n" not in whole and "\t" not in whole:
        return [[fragment for fragment in fragments if fragment[1]]]  # fits: the common case
    chars = [(style, char) for style, text in fragments for char in text]
    return [
        [(style, "".join(char for _, char in run)) for style, run in groupby(line, lambda c: c[0])]
        for line in _lines(chars, max(width, 1))
    ]


def hang(first: Fragments, body: Fragments, width: int) -> list[Fragments]:
    """`first`, then `body` wrapped beside it in the rest of `width`: continuation lines start
    under the body's first character (a hanging indent)."""
    indent = text_width("".join(text for _, text in first))
    lines = wrap(body, width - indent)
    return [first + lines[0], *([("", " " * indent), *line] for line in lines[1:])]
