"""The repository stands alone: what its files point a reader to is in the repository.

Every document a file names (a path ending in `.md`, in the prose of code, tests and docs) must
exist, next to the naming file or from the repository's root; and nothing cites the team's
brief, which is not part of the repository.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_FOLDERS = frozenset(
    {
        ".git",
        ".venv",
        "node_modules",
        ".hypothesis",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "__pycache__",
        "build",
        "dist",
        "test-results",
    }
)
TEXT_SUFFIXES = frozenset({".py", ".md", ".js", ".css", ".html", ".toml", ".sh", ".json", ""})
DOCUMENT = re.compile(r"(?<![\w/.*~-])((?:\.\./|[\w~-][\w.~-]*/)*[\w~-][\w.~-]*\.md)\b")
"""A path ending in `.md` (not a glob such as `*.md`)."""
EXAMPLE_FILE = re.compile(r"<!-- file: ([\w.~-]+) -->")
"""A file a document defines inline, for its examples (docs/terminal.md defines its plan)."""
# Spelled in pieces, so that this file does not cite what it forbids.
FORBIDDEN = re.compile(r"\b" + "SP" + r"EC\b|" + "HOST-" + "CONTRACT|/work/" + "shared")


@functools.cache
def files() -> list[Path]:
    """Every text file of the repository (not the caches, builds and virtualenvs, which are not
    even walked: a virtualenv holds tens of thousands of files)."""
    found = []
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if name not in SKIPPED_FOLDERS and not name.endswith(".egg-info")
        ]
        found += [Path(folder, name) for name in names if Path(name).suffix in TEXT_SUFFIXES]
    return sorted(found)


def prose(path: Path) -> str:
    """What a reader reads in a file: a Python file's comments and docstrings (its code may name
    files it makes, such as a test's plan file); any other file whole."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return text
    parts = [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        value = node.value if isinstance(node, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
    return "\n".join(parts)


def test_every_document_a_file_names_is_in_the_repository() -> None:
    missing = []
    for path in files():
        if ".md" not in path.read_text(encoding="utf-8"):
            continue  # names no document (reading its prose alone is the slow part)
        text = prose(path)
        defined = set(EXAMPLE_FILE.findall(text))
        for name in DOCUMENT.findall(text):
            if name in defined or (path.parent / name).exists() or (ROOT / name).exists():
                continue
            missing.append(f"{path.relative_to(ROOT)}: {name}")
    assert missing == []


def test_nothing_cites_the_teams_brief() -> None:
    citing = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FORBIDDEN.search(line)
    ]
    assert citing == []
