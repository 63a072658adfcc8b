"""Reading a patch as Codex's `apply_patch` will apply it: the files it adds, updates, moves and
deletes.

Codex's grammar (openai/codex, `codex-rs/apply-patch/src/parser.rs`, the lenient mode it
applies patches in), followed line for line so that a patch names here exactly the files the
tool will write:

    patch   := "*** Begin Patch" LF hunk* "*** End Patch" LF?   (the first and last line trimmed;
                                                                 or the whole inside <<EOF ... EOF)
    hunk    := "*** Add File: " PATH LF ("+" LINE LF)*
             | "*** Delete File: " PATH LF
             | "*** Update File: " PATH LF ["*** Move to: " PATH LF] chunk+
    chunk   := ["@@" | "@@ " CONTEXT] LF (" " | "+" | "-" LINE LF | LF)+ ["*** End of File" LF]

A hunk's header line is trimmed before it is read (an indented `*** Update File:` still starts
a hunk where a hunk may start), its `Move to` line is not; the text is trimmed and cut into lines
as Rust does (`str::trim`, `str::lines`). A patch that does not parse is never applied by the
tool, and never allowed by a rule.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PatchError", "PatchedFile", "read_patch"]

_BEGIN = "*** Begin Patch"
_END = "*** End Patch"
_ADD = "*** Add File: "
_DELETE = "*** Delete File: "
_UPDATE = "*** Update File: "
_MOVE = "*** Move to: "
_END_OF_FILE = "*** End of File"
_CONTEXT = "@@ "
_EMPTY_CONTEXT = "@@"
_HEREDOC_STARTS = ("<<EOF", "<<'EOF'", '<<"EOF"')
_RUST_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""What Rust's `str::trim` takes off: the code points with Unicode's White_Space property
(Python's `str.strip` also takes the separators U+001C to U+001F)."""


@dataclass(frozen=True, slots=True)
class PatchedFile:
    """One file a patch touches, as written in it (relative to the call's folder, or not)."""

    action: str
    """`add`, `delete` or `update`."""
    path: str
    moved_to: str | None = None
    """An update's `Move to` destination: the file it writes."""


class PatchError(ValueError):
    """The patch does not parse: `apply_patch` refuses it. Its message says where and why."""


def read_patch(text: str) -> list[PatchedFile]:
    """The files `text` touches, in order.

    Raises:
        PatchError: when `apply_patch` would refuse it.
    """
    lines = _lines(_trim(text))
    body = _body(lines)
    files: list[PatchedFile] = []
    index = 0
    while index < len(body):
        patched, used = _hunk(body[index:], index + 2)
        files.append(patched)
        index += used
    return files


def _trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in _RUST_WHITESPACE:
        start += 1
    while end > start and text[end - 1] in _RUST_WHITESPACE:
        end -= 1
    return text[start:end]


def _lines(text: str) -> list[str]:
    """`text` cut as Rust's `str::lines` cuts it: at LF, each line without a final CR."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _body(lines: list[str]) -> list[str]:
    """The lines between the patch's first and last line (lenient: inside a heredoc too)."""
    try:
        return _strict_body(lines)
    except PatchError:
        if len(lines) >= 4 and lines[0] in _HEREDOC_STARTS and lines[-1].endswith("EOF"):
            return _strict_body(lines[1:-1])
        raise


def _strict_body(lines: list[str]) -> list[str]:
    first = _trim(lines[0]) if lines else None
    last = _trim(lines[-1]) if lines else None
    if first != _BEGIN:
        raise PatchError(f"its first line is not {_BEGIN!r}")
    if last != _END:
        raise PatchError(f"its last line is not {_END!r}")
    return lines[1:-1]


def _hunk(lines: list[str], line_number: int) -> tuple[PatchedFile, int]:
    header = _trim(lines[0])
    if header.startswith(_ADD):
        used = 1
        while used < len(lines) and lines[used].startswith("+"):
            used += 1
        return PatchedFile("add", header[len(_ADD) :]), used
    if header.startswith(_DELETE):
        return PatchedFile("delete", header[len(_DELETE) :]), 1
    if header.startswith(_UPDATE):
        return _update(header[len(_UPDATE) :], lines, line_number)
    raise PatchError(f"line {line_number} is not a file's header: {header[:80]!r}")


def _update(path: str, lines: list[str], line_number: int) -> tuple[PatchedFile, int]:
    used = 1
    moved_to = None
    if len(lines) > 1 and lines[1].startswith(_MOVE):
        moved_to = lines[1][len(_MOVE) :]
        used += 1
    chunks = 0
    while used < len(lines):
        line = lines[used]
        if not _trim(line):
            used += 1
            continue
        if line.startswith("*"):
            break
        used += _chunk(lines[used:], line_number + used, first=chunks == 0)
        chunks += 1
    if chunks == 0:
        raise PatchError(f"line {line_number} updates {path!r} with no change")
    return PatchedFile("update", path, moved_to), used


def _chunk(lines: list[str], line_number: int, *, first: bool) -> int:
    """How many lines one chunk of an update takes."""
    if lines[0] == _EMPTY_CONTEXT or lines[0].startswith(_CONTEXT):
        start = 1
    elif first:
        start = 0
    else:
        raise PatchError(f"line {line_number} starts a change without @@: {lines[0][:80]!r}")
    if start >= len(lines):
        raise PatchError(f"line {line_number + 1} ends a change that has no lines")
    read = 0
    for line in lines[start:]:
        if line == _END_OF_FILE:
            if read == 0:
                raise PatchError(f"line {line_number + 1} ends a change that has no lines")
            read += 1
            break
        if line == "" or line[0] in " +-":
            read += 1
            continue
        if read == 0:
            raise PatchError(f"line {line_number + 1} is not a change line: {line[:80]!r}")
        break
    return read + start
