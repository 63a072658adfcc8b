"""Imports flow downward: a module imports only from its own level or a lower one."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "user_questions"

# The levels of the package (the README draws them; a test below holds the drawing to them). A new
# module or room must be placed here: that is the point.
LEVELS: dict[str, int] = {
    "types": 0,
    "frames": 0,
    "outcomes": 0,
    "limits": 0,
    "_version": 0,
    "_lifecycle": 0,
    "_languages": 0,
    "errors": 1,
    "_reading": 1,
    "_hooks": 1,
    "abort": 2,
    "kernel": 3,
    "agents": 4,
    "_checks": 5,
    "service": 5,
    "_host_link": 5,
    "tools": 6,
    "context": 6,
    "tool_ask_user": 6,
    "tool_exit_plan_mode": 6,
    "presentation": 6,
    "approvals": 6,
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
    "_reloader": 0,
    "_hand_over": 0,
    "stores": 1,
    "gate": 2,
    "_frame_text": 2,
    "shown": 2,
    "rules": 2,
    "audit": 2,
    "telemetry": 3,
    "web": 3,
    "hub": 4,
    "in_process": 5,
    "endpoints": 5,
    "a2a": 5,
    "notify": 5,
    "chat": 5,
    "config": 6,
    "app": 7,
    "server": 8,
}

# The levels inside each room (the root's private rooms, and the host's), by its path below the
# package; `__init__` is the room's package module itself.
ROOM_LEVELS: dict[str, dict[str, int]] = {
    "_lifecycle": {"__init__": 0, "disposer": 0, "lifetime": 0, "listeners": 1},
    "_languages": {"tags": 0, "catalogs": 1, "__init__": 2},
    "_reading": {
        "__init__": 0,
        "text": 0,
        "json_reader": 1,
        "json_schema": 2,
        "wire": 2,
        "forms": 3,
    },
    "_hooks": {
        "__init__": 0,
        "approval_card": 0,
        "events": 0,
        "record": 0,
        "allowed_notes": 1,
        "permission_call": 1,
        "settlement": 1,
    },
    "_host_link": {"__init__": 0, "url": 0, "tls": 0, "ask_endings": 0},
    "host.markdown": {"_parser": 0, "__init__": 1},
    "host.stores": {
        "audit_chain": 0,
        "records": 0,
        "collector": 0,
        "_group_commit": 0,
        "_sqlite_worker": 0,
        "_sqlite_backup": 0,
        "base": 1,
        "_postgres_pool": 1,
        "_rows": 1,
        "__init__": 2,
        "_postgres_listen": 2,
        "_postgres_schema": 2,
        "_sqlite_schema": 2,
        "_sqlite_file": 3,
        "postgres": 3,
        "retention": 3,
        "sqlite": 4,
    },
    "host.audit": {"__init__": 0, "keys": 0, "checkpoints": 1, "verify": 1},
    "host.gate": {
        "__init__": 0,
        "security": 0,
        "proxy": 0,
        "public_url": 0,
        "durations": 0,
        "fair_share": 0,
        "quorum": 0,
        "tokens": 1,
        "roles": 1,
    },
    "host.rules": {
        "shell": 0,
        "patches": 0,
        "urls": 0,
        "paths": 0,
        "calls": 1,
        "making": 2,
        "matching": 3,
        "offers": 4,
        "cache": 4,
        "inbox": 5,
        "__init__": 6,
    },
    "host.hub": {
        "_timetable": 0,
        "_pages": 0,
        "_events": 0,
        "_groups": 0,
        "_requests": 1,
        "_admission": 1,
        "_checks": 2,
        "_quorum": 2,
        "_following": 3,
        "_intake": 3,
        "_hub": 4,
        "__init__": 5,
    },
    "host.telemetry": {"__init__": 0, "logs": 0, "metrics": 0},
    "host.web": {"__init__": 0, "history": 0, "pages": 0},
    "host.endpoints": {
        "__init__": 0,
        "decoding": 0,
        "websocket": 0,
        "upgrade": 1,
        "connection": 1,
        "http_api": 1,
        "tokens_api": 1,
        "rules_api": 1,
        "push_api": 1,
        "page": 2,
        "asker": 2,
    },
    "host.notify": {
        "__init__": 0,
        "events": 0,
        "record": 0,
        "links": 0,
        "taps": 0,
        "posting": 0,
        "push_keys": 0,
        "push_subscribers": 0,
        "telling": 1,
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
    "host.a2a": {
        "naming": 0,
        "parts": 0,
        "tasks": 1,
        "card": 1,
        "listing": 2,
        "push": 2,
        "handler": 3,
        "routes": 4,
        "__init__": 5,
    },
    "host.chat": {
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


def parsed(path: Path) -> ast.Module:
    """A file's syntax tree. CPython 3.11 keeps the state of its syntax-tree conversion for the
    whole process, so a parse that meets one in another thread (a library imported in a worker
    thread by a host an earlier test ran) fails with `SystemError`; it is tried again."""
    source = path.read_text(encoding="utf-8")
    for _ in range(4):
        try:
            return ast.parse(source)
        except SystemError:
            continue
    return ast.parse(source)


@functools.cache
def imports_of(path: Path) -> list[tuple[str, bool]]:
    """Every `user_questions` import of a file, and whether it is for the type checker only (read
    once per run: every guard walks every file)."""
    tree = parsed(path)
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
    """The room (`ROOM_LEVELS`) a module is in, and its level there; `None` outside every room."""
    parts = module.split(".")[1:]
    for length in (2, 1):
        room = ".".join(parts[:length])
        if len(parts) >= length and room in ROOM_LEVELS:
            name = parts[length] if len(parts) > length else "__init__"
            assert name in ROOM_LEVELS[room], f"{module} has no level in ROOM_LEVELS[{room!r}]"
            return room, ROOM_LEVELS[room][name]
    return None


@functools.cache
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


def test_every_room_and_module_has_a_level() -> None:
    """A new room or module must be placed in the plan: that is the point."""
    for module, _ in modules():
        level_of(module)
        host_level_of(module)
        room_level_of(module)
    private_rooms = {path.parent.name for path in PACKAGE.glob("_*/__init__.py")}
    host_rooms = {f"host.{path.parent.name}" for path in (PACKAGE / "host").glob("*/__init__.py")}
    assert private_rooms | host_rooms == set(ROOM_LEVELS)


def test_the_root_keeps_at_most_21_modules() -> None:
    """The root holds the public modules and a few private ones; helpers live in rooms."""
    assert len(list(PACKAGE.glob("*.py"))) <= 21


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


# -- the maps: the README's diagram, the host's docstring and docs/host.md's table are LEVELS --


def drawn_levels(lines: list[str], width: int) -> dict[str, int]:
    """The names a map draws left of column `width` (where its words start), each at the level
    its line (or the line it continues) starts with: `3 kernel` draws `kernel` at 3; a package
    is drawn with a slash (`host/`)."""
    drawn: dict[str, int] = {}
    level = -1
    for line in lines:
        number, _, names = line[:width].strip().partition(" ")
        if number.isdigit():
            level = int(number)
        else:
            names = line[:width].strip()
        for name in filter(None, (part.strip() for part in names.split(","))):
            assert name not in drawn, f"{name} is drawn twice"
            drawn[name] = level
    return drawn


def planned(levels: dict[str, int], folder: Path) -> dict[str, int]:
    """`levels` as a map draws them: a package with a slash after its name."""
    return {name + "/" * (folder / name).is_dir(): level for name, level in levels.items()}


def test_the_readme_draws_every_module_and_room_of_the_package_at_its_level() -> None:
    readme = (PACKAGE.parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("```\n0 ") + 4 :].split("```", 1)[0]
    assert drawn_levels(block.splitlines(), 32) == planned(LEVELS, PACKAGE)


def test_the_host_docstring_draws_every_room_and_module_of_the_host_at_its_level() -> None:
    docstring = ast.get_docstring(ast.parse((PACKAGE / "host" / "__init__.py").read_text()))
    assert docstring is not None
    lines = [line[4:] for line in docstring.splitlines() if line.startswith("    ")]
    assert drawn_levels(lines, 28) == planned(HOST_LEVELS, PACKAGE / "host")


def test_the_hub_docstring_draws_every_module_of_the_hub_at_its_level() -> None:
    docstring = ast.get_docstring(ast.parse((PACKAGE / "host" / "hub" / "__init__.py").read_text()))
    assert docstring is not None
    lines = [line[4:] for line in docstring.splitlines() if line.startswith("    ")]
    behind_the_door = {k: v for k, v in ROOM_LEVELS["host.hub"].items() if k != "__init__"}
    assert drawn_levels(lines, 28) == behind_the_door


def test_the_host_docs_name_every_room_and_module_of_the_host_lowest_first() -> None:
    """docs/host.md's table of the host's rooms: each once, in an order the levels allow."""
    host_md = (PACKAGE.parents[1] / "docs" / "host.md").read_text(encoding="utf-8")
    table = host_md[host_md.index("| Room or module | Job |") :].split("\n\n", 1)[0]
    named = [
        name.removesuffix(".py").removesuffix("/")
        for row in table.splitlines()[2:]
        for name in re.findall(r"`([^`]+)`", row.split("|")[1])
    ]
    assert sorted(named) == sorted(HOST_LEVELS)
    assert [HOST_LEVELS[name] for name in named] == sorted(HOST_LEVELS[name] for name in named)


def test_a_map_that_leaves_a_module_out_or_misplaces_one_is_caught() -> None:
    drawn = drawn_levels(["0 types, frames,    the vocabulary", "  limits"], 20)
    assert drawn == {"types": 0, "frames": 0, "limits": 0}
    assert drawn != {"types": 0, "frames": 0, "limits": 1}
