"""What text from outside may hold: no lone UTF-16 surrogate, no NUL character.

Standard library only. Python strings can hold both, and JSON text can spell both (`"\\ud800"`,
`"\\u0000"`), but nothing the package keeps or sends can take them: a lone surrogate cannot be
encoded as UTF-8 (no socket, file or SQLite row takes it), and PostgreSQL refuses NUL in every text
and JSON column. So every boundary refuses them, naming the field, before anything is stored or
sent: `text_problem` says what is wrong with a string, if anything. A message that quotes what it
was given is made `deliverable` instead (errors do it).
"""

from __future__ import annotations

import re

__all__ = ["deliverable", "lone_surrogate", "printable", "surrogate_problem", "text_problem"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in `text`, or `None` when it is text that UTF-8 can encode."""
    if text.isascii():  # constant time for a Python string: by far the common case
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return text[error.start]
    return None


def deliverable(text: str) -> str:
    """`text` with each lone surrogate written as its escape (`\\ud800`): a message that quotes
    what it was given can then always be sent. Text without one is returned as it is."""
    if lone_surrogate(text) is None:
        return text
    return _SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", text)


def surrogate_problem(text: str) -> str | None:
    """`holds a lone surrogate (U+D800), which is not text`, or `None` when `text` holds none."""
    surrogate = lone_surrogate(text)
    if surrogate is None:
        return None
    return f"holds a lone surrogate (U+{ord(surrogate):04X}), which is not text"


def text_problem(text: str) -> str | None:
    """What makes `text` unusable (`holds a NUL character (U+0000)`, or a lone surrogate), or
    `None` when it is fine."""
    if "\x00" in text:
        return "holds a NUL character (U+0000)"
    return surrogate_problem(text)


_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Terminal control characters and bidirectional overrides: C0 but tab and newline, DEL, C1."""


def printable(text: str) -> str:
    """`text` without terminal control characters; newlines and tabs are kept."""
    return _CONTROLS.sub("", text)
