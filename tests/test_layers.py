"""Imports flow downward: a module imports only from its own level or a lower one."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "user_questions"

# The levels of STYLE.md's layout. A new module must be placed here: that is the point.
LEVELS: dict[str, int] = {
    "types": 0,
    "frames": 0,
    "_jsonschema": 0,
    "_version": 0,
    "_hook_events": 0,
    "errors": 1,
    "_wire": 1,
    "abort": 2,
    "kernel": 3,
    "agents": 4,
    "_checks": 5,
    "service": 5,
    "tools": 6,
    "tool_ask_user": 6,
    "tool_exit_plan_mode": 6,
    "presentation": 6,
    "approvals": 6,
    "_schema": 6,
    "providers": 7,
    "asker": 7,
    "host": 8,
    "bridges": 9,
    "integrations": 9,
    "cli": 10,
}


def level_of(module: str) -> int:
    parts = module.split(".")
    assert parts[0] == "user_questions"
    if len(parts) == 1:
        return 11  # the package root only re-exports
    assert parts[1] in LEVELS, f"user_questions.{parts[1]} has no level in tests/test_layers.py"
    return LEVELS[parts[1]]


def imports_of(path: Path) -> list[tuple[str, bool]]:
    """Every `user_questions` import of a file, and whether it is for the type checker only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only |= {id(child) for child in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "user_questions":  # submodules by name; anything else is the root
                names = [
                    f"user_questions.{alias.name}"
                    if (PACKAGE / f"{alias.name}.py").exists() or (PACKAGE / alias.name).is_dir()
                    else "user_questions"
                    for alias in node.names
                ]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(n, id(node) in type_only) for n in names if n.startswith("user_questions")]
    return found


def test_no_module_imports_upward() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(relative.parts).removesuffix(".__init__")
        if module == "user_questions":
            continue
        own = level_of(module)
        for imported, type_only in imports_of(path):
            if not type_only and level_of(imported) > own:
                upward.append(f"{module} -> {imported}")
    assert upward == []


def test_the_wire_vocabulary_imports_nothing_but_itself() -> None:
    assert imports_of(PACKAGE / "types.py") == []
    assert imports_of(PACKAGE / "frames.py") == [("user_questions.types", False)]
