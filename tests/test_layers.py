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
    "_approval_card": 0,
    "_disposer": 0,
    "_lifetime": 0,
    "errors": 1,
    "_wire": 1,
    "_tls": 1,
    "_permission_call": 1,
    "_host_url": 1,
    "_settlement": 1,
    "abort": 2,
    "kernel": 3,
    "agents": 4,
    "_checks": 5,
    "service": 5,
    "ask_endings": 5,
    "tools": 6,
    "context": 6,
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

# The levels inside `host/`: its rooms (subpackages) and the modules at its root. Each imports
# only from its own level or a lower one, so that a store, a protocol or a notifier can be read,
# tested and replaced on its own (the host's package docstring draws the same plan).
HOST_LEVELS: dict[str, int] = {
    "markdown": 0,
    "_collector": 0,
    "_reloader": 0,
    "stores": 1,
    "gate": 2,
    "_frame_text": 2,
    "shown": 2,
    "retention": 2,
    "rules": 2,
    "telemetry": 3,
    "web": 3,
    "hub": 4,
    "in_process": 5,
    "protocols": 5,
    "notify": 5,
    "chat": 5,
    "config": 6,
    "app": 7,
    "server": 8,
}

# The levels inside each room; `__init__` is the room's package module itself.
ROOM_LEVELS: dict[str, dict[str, int]] = {
    "markdown": {"_parser": 0, "__init__": 1},
    "stores": {
        "records": 0,
        "_group_commit": 0,
        "_sqlite_worker": 0,
        "_sqlite_backup": 0,
        "protocol": 1,
        "_postgres_pool": 1,
        "_shared": 1,
        "__init__": 2,
        "_postgres_listen": 2,
        "_postgres_schema": 2,
        "_sqlite_schema": 2,
        "_sqlite_file": 3,
        "postgres": 3,
        "sqlite": 4,
    },
    "gate": {
        "__init__": 0,
        "security": 0,
        "proxy": 0,
        "public_url": 0,
        "people": 1,
        "roles": 1,
    },
    "rules": {
        "durations": 0,
        "shell": 0,
        "patches": 0,
        "urls": 0,
        "paths": 0,
        "calls": 1,
        "making": 2,
        "matching": 3,
        "offers": 4,
        "cache": 4,
        "__init__": 5,
    },
    "telemetry": {"__init__": 0, "logs": 0, "metrics": 0},
    "web": {"__init__": 0, "history": 0, "pages": 0},
    "protocols": {
        "__init__": 0,
        "decoding": 0,
        "websocket": 0,
        "connection": 1,
        "http_api": 1,
        "tokens_api": 1,
        "rules_api": 1,
        "push_api": 1,
        "page": 2,
        "asker": 2,
    },
    "notify": {
        "__init__": 0,
        "events": 0,
        "links": 0,
        "taps": 0,
        "posting": 0,
        "push_keys": 0,
        "message": 1,
        "notifier": 1,
        "link_pages": 2,
        "apprise": 2,
        "command": 2,
        "webhook": 2,
        "push_message": 2,
        "web_push": 3,
        "ntfy": 3,
        "personal": 4,
        "assembly": 5,
    },
    "chat": {
        "__init__": 0,
        "pairing": 0,
        "cards": 0,
        "bot_api": 0,
        "slack_api": 0,
        "answering": 1,
        "slack_blocks": 1,
        "telegram": 2,
        "slack": 2,
    },
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
    """The level inside `host/` of a module, or of the room it is in; `None` outside `host/`."""
    parts = module.split(".")
    if parts[:2] != ["user_questions", "host"] or len(parts) == 2:
        return None
    assert parts[2] in HOST_LEVELS, f"{module} has no level in HOST_LEVELS of tests/test_layers.py"
    return HOST_LEVELS[parts[2]]


def room_level_of(module: str) -> tuple[str, int] | None:
    """The room of a module inside one of the host's rooms, and its level there."""
    parts = module.split(".")
    if parts[:2] != ["user_questions", "host"] or parts[2:3] == [] or parts[2] not in ROOM_LEVELS:
        return None
    room, name = parts[2], parts[3] if len(parts) > 3 else "__init__"
    assert name in ROOM_LEVELS[room], f"{module} has no level in ROOM_LEVELS[{room!r}]"
    return room, ROOM_LEVELS[room][name]


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


def test_no_module_of_a_room_imports_a_higher_one_of_its_room() -> None:
    upward = []
    for module, path in modules():
        own = room_level_of(module)
        if own is None:
            continue
        for imported, type_only in imports_of(path):
            theirs = room_level_of(imported)
            if not type_only and theirs is not None and theirs[0] == own[0] and theirs[1] > own[1]:
                upward.append(f"{module} -> {imported}")
    assert upward == []


def test_every_room_and_module_of_the_host_has_a_level() -> None:
    """A new room or module must be placed in the plan: that is the point."""
    for module, _ in modules():
        host_level_of(module)
        room_level_of(module)
    rooms = {path.name for path in (PACKAGE / "host").iterdir() if (path / "__init__.py").exists()}
    assert rooms == set(ROOM_LEVELS)


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
