"""Imports flow downward: a module imports only from its own level or a lower one."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "user_questions"

# The levels of the package (README "Concepts"). A new module must be placed here: that is the
# point.
LEVELS: dict[str, int] = {
    "types": 0,
    "frames": 0,
    "outcomes": 0,
    "_jsonschema": 0,
    "_json": 0,
    "_text": 0,
    "limits": 0,
    "_version": 0,
    "_hook_events": 0,
    "_disposer": 0,
    "_lifetime": 0,
    "errors": 1,
    "_wire": 1,
    "_tls": 1,
    "abort": 2,
    "kernel": 3,
    "agents": 4,
    "_checks": 5,
    "service": 5,
    "asking": 5,
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

# The levels inside `host/` (its package docstring): each module imports only lower ones, so
# that a protocol, a store or a notifier can be read, tested and replaced on its own.
HOST_LEVELS: dict[str, int] = {
    "stores": 0,
    "_markdown_parser": 0,
    "_websocket_protocol": 0,
    "_collector": 0,
    "markdown": 0,
    "security": 0,
    "decoding": 0,
    "public_url": 0,
    "proxy": 0,
    "logs": 0,
    "_frame_text": 1,
    "records": 1,
    "metrics": 1,
    "events": 1,
    "history": 1,
    "people": 1,
    "provider": 1,
    "answer_links": 1,
    "hub": 2,
    "notify_message": 2,
    "connection": 3,
    "http_api": 3,
    "notify": 3,
    "pages": 3,
    "answer_pages": 3,
    "page_connection": 4,
    "asker_connection": 4,
    "notify_webhook": 4,
    "notify_command": 4,
    "notify_apprise": 4,
    "app": 5,
    "server": 6,
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
            # `from package import submodule` imports the submodule; any other name, the package.
            folder = PACKAGE.parent.joinpath(*node.module.split("."))
            names = [
                f"{node.module}.{alias.name}"
                if (folder / f"{alias.name}.py").exists() or (folder / alias.name).is_dir()
                else node.module
                for alias in node.names
            ]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(n, id(node) in type_only) for n in names if n.startswith("user_questions")]
    return found


def host_level_of(module: str) -> int | None:
    """The level of a module inside `host/`; `None` for the package itself or outside it."""
    parts = module.split(".")
    if parts[:2] != ["user_questions", "host"] or len(parts) == 2:
        return None
    assert parts[2] in HOST_LEVELS, f"{module} has no level in HOST_LEVELS of tests/test_layers.py"
    return HOST_LEVELS[parts[2]]


def modules() -> list[tuple[str, Path]]:
    """Every module of the package but its root, with its file."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(relative.parts).removesuffix(".__init__")
        if module != "user_questions":
            found.append((module, path))
    return found


def test_no_module_imports_upward() -> None:
    upward = []
    for module, path in modules():
        own = level_of(module)
        for imported, type_only in imports_of(path):
            if not type_only and level_of(imported) > own:
                upward.append(f"{module} -> {imported}")
    assert upward == []


def test_no_module_of_the_host_imports_a_higher_one_of_the_host() -> None:
    upward = []
    for module, path in modules():
        own = host_level_of(module)
        if own is None:
            continue
        for imported, type_only in imports_of(path):
            theirs = host_level_of(imported)
            if not type_only and theirs is not None and theirs > own:
                upward.append(f"{module} -> {imported}")
    assert upward == []


def test_the_host_never_imports_a_client() -> None:
    clients = [
        f"{module} -> {imported}"
        for module, path in modules()
        if module.startswith("user_questions.host")
        for imported, _ in imports_of(path)
        if imported.startswith(("user_questions.providers", "user_questions.cli"))
    ]
    assert clients == []


def test_the_wire_vocabulary_imports_nothing_but_itself() -> None:
    assert imports_of(PACKAGE / "types.py") == []
    assert imports_of(PACKAGE / "outcomes.py") == []
    assert set(imports_of(PACKAGE / "frames.py")) == {
        ("user_questions.outcomes", False),
        ("user_questions.types", False),
    }
