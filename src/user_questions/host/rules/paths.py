"""Reading a file path as the agent's tool reads it, and the globs path rules are written in.

A path is made absolute against the folder the call runs in, with `.` and `..` taken out
(symbolic links are not followed: the host may not see the agent's disk). A path starting with
`~` (`~/.ssh/id_rsa`, `~bob/notes`) is the home folder of someone the host does not know: it is
kept as it is written, `~` first (`..` may not climb above it), and only a rule whose path
starts with the same `~` matches it; it is never read as a folder named `~` inside the call's.
A relative path with no folder to read it from cannot be read.
"""

from __future__ import annotations

import functools
import posixpath
import re

__all__ = ["PathError", "call_path", "check_pattern", "glob", "resolved", "within"]


class PathError(ValueError):
    """A path that cannot be read as the tool will read it; the message says why."""


def resolved(path: str, base: str) -> str:
    """`path` made absolute against `base`, `.` and `..` taken out (`~` is not expanded)."""
    return posixpath.normpath(posixpath.join(base, path)).replace("//", "/")


def call_path(path: str, folder: str | None) -> str:
    """`path` as a rule compares it: absolute, or starting with `~`.

    Raises:
        PathError: for a relative path with no folder to read it from, or a `~` path whose
            `..` climbs above its home folder.
    """
    if path.startswith("~"):
        home, _, rest = path.partition("/")
        rest = rest.lstrip("/")
        inside = posixpath.normpath(rest) if rest else "."
        if inside == ".." or inside.startswith("../"):
            raise PathError(f"{path!r} climbs above {home}")
        return home if inside == "." else f"{home}/{inside}"
    if path.startswith("/"):
        return resolved(path, "/")
    if folder is None:
        raise PathError(f"{path!r} is relative, and the call says no folder to read it from")
    return resolved(path, folder)


def check_pattern(pattern: str) -> str:
    """`pattern` if a path rule can hold it: absolute, or starting with `~`.

    Raises:
        PathError: saying what a pattern must start with.
    """
    if not pattern.startswith(("/", "~")):
        raise PathError(
            f"path must be absolute (/home/dev/shop/**) or start with ~ (~/notes/**), got "
            f"{pattern!r}"
        )
    return pattern


def within(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or below it (both absolute)."""
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder if folder == "/" else folder + "/")


@functools.lru_cache(maxsize=1024)
def glob(pattern: str) -> re.Pattern[str]:
    """A path rule's glob as a regular expression: `*` within one folder, `**` across folders,
    `?` one character, anything else itself."""
    parts: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(parts), re.DOTALL)
