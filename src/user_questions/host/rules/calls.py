"""A tool call as rules read it: the kind of its tool, the folder it runs in, and what of it a
rule of that kind matches, read once per decision as the tool will read it.

The kind of a tool decides the field its rules match (`FIELDS`):

- a shell tool (`SHELL_TOOLS`: Claude Code's and Codex's `Bash`, `shell`, `exec_command`, ...):
  its `command` (or `cmd`), a string read by `shell.read_script` or a list of words read by
  `shell.read_argv`;
- a file tool (`FILE_TOOLS`): the paths it writes or reads (`file_path`, `notebook_path`,
  `path`; a patch's every file, move destinations included), read by `paths.call_path`;
- a web tool (`WEB_TOOLS`): the host of its `url`, read by `urls.read_url`;
- any other tool (an MCP tool, `Glob`, `Grep`): its name alone.

The folder is the call's own working folder when it names one (Codex's `workdir`, a `cwd`
argument), read against the folder the agent runs in (`Approval.cwd`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from user_questions._hooks.approval_card import SHELL_TOOLS
from user_questions.errors import UserQuestionError
from user_questions.frames import Approval
from user_questions.host.rules.patches import PatchError, read_patch
from user_questions.host.rules.paths import PathError, call_path, resolved
from user_questions.host.rules.shell import ShellReading, read_argv, read_script
from user_questions.host.rules.urls import UrlError, read_url

__all__ = [
    "FIELDS",
    "FILE_TOOLS",
    "FOLDER_KEYS",
    "PATCH_TOOLS",
    "SHELL_TOOLS",
    "WEB_TOOLS",
    "Call",
    "Kind",
    "call_folder",
    "read_call",
    "shell_command",
    "tool_kind",
]

FILE_TOOLS = frozenset(
    {"read", "write", "edit", "multiedit", "notebookedit", "notebookread", "ls", "apply_patch"}
)
"""The tools (compared without case) whose paths decide what they touch."""
PATCH_TOOLS = frozenset({"apply_patch"})
"""The file tools that take a patch (Codex's grammar: `patches.read_patch`)."""
WEB_TOOLS = frozenset({"webfetch"})
"""The tools (compared without case) that fetch a `url`."""
FOLDER_KEYS = ("workdir", "cwd")
"""The arguments in which a call names its own working folder."""
_PATH_KEYS = ("file_path", "notebook_path", "path")
_PATCH_KEYS = ("command", "patch", "input")


class Kind(StrEnum):
    """What kind of tool a rule or a call is for."""

    SHELL = "shell"
    FILE = "file"
    WEB = "web"
    OTHER = "other"


FIELDS: dict[Kind, str] = {Kind.SHELL: "command", Kind.FILE: "path", Kind.WEB: "domain"}
"""The field the rules of each kind of tool match; other tools' rules match by name alone."""


def tool_kind(tool: str) -> Kind:
    """The kind of the tool called `tool`."""
    name = tool.lower()
    if name in SHELL_TOOLS:
        return Kind.SHELL
    if name in FILE_TOOLS:
        return Kind.FILE
    if name in WEB_TOOLS:
        return Kind.WEB
    return Kind.OTHER


@dataclass(frozen=True, slots=True)
class Call:
    """A call as its tool will read it; `problem` says why an allow rule cannot read it."""

    approval: Approval
    kind: Kind
    folder: str | None
    """Where it runs, absolute; `None` when it cannot be known."""
    shell: ShellReading | None = None
    """A shell call's command, read; `None` when it has none."""
    command: str | None = None
    """A shell call's command as one line of text, for messages."""
    paths: tuple[str, ...] = ()
    """A file call's paths, read (a patch's files, each move's destination after its source)."""
    moves: tuple[str, ...] = ()
    """Which of `paths` are a patch's move destinations."""
    host: str | None = None
    """A web call's host, as a browser reads it."""
    problem: str | None = None
    """Why it cannot be read for an allow: `not a plain command: ...`, `the patch does not
    parse: ...`; `None` when it can."""


def read_call(approval: Approval) -> Call:
    """`approval`'s call, read once for every rule."""
    kind = tool_kind(approval.tool)
    folder = call_folder(approval)
    arguments = approval.input
    if kind is Kind.SHELL:
        return _shell_call(approval, folder)
    if kind is Kind.FILE:
        return _file_call(approval, folder)
    if kind is Kind.WEB:
        url = arguments.get("url")
        if not isinstance(url, str):
            return Call(approval, kind, folder, problem="the call has no URL")
        try:
            host = read_url(url).host
        except UrlError as error:
            return Call(approval, kind, folder, problem=f"its URL's host cannot be read: {error}")
        return Call(approval, kind, folder, host=host)
    return Call(approval, kind, folder)


def call_folder(approval: Approval) -> str | None:
    """The folder the call runs in: its own working folder when it names one, read against
    the agent's; `None` when either cannot be read (relative with nothing to read it from,
    starting with `~`, not text)."""
    base = approval.cwd
    base = resolved(base, "/") if base is not None and base.startswith("/") else None
    for key in FOLDER_KEYS:
        if key not in approval.input:
            continue
        value = approval.input[key]
        if not isinstance(value, str) or not value or value.startswith("~"):
            return None
        if value.startswith("/"):
            return resolved(value, "/")
        return None if base is None else resolved(value, base)
    return base


def shell_command(arguments: Mapping[str, Any]) -> str | list[str] | None:
    """A shell call's command as it gives it: a string, or a list of words."""
    value = arguments.get("command", arguments.get("cmd"))
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return list(value)
    return None


def _shell_call(approval: Approval, folder: str | None) -> Call:
    command = shell_command(approval.input)
    if command is None:
        return Call(approval, Kind.SHELL, folder, problem="the call has no command")
    try:
        reading = read_script(command) if isinstance(command, str) else read_argv(command)
    except UserQuestionError as error:
        return Call(approval, Kind.SHELL, folder, problem=error.message)
    text = command if isinstance(command, str) else " ".join(command)
    problem = None if reading.problem is None else str(reading.problem)
    return Call(approval, Kind.SHELL, folder, shell=reading, command=text, problem=problem)


def _file_call(approval: Approval, folder: str | None) -> Call:
    arguments = approval.input
    written: list[str] = []
    moves: list[str] = []
    if approval.tool.lower() in PATCH_TOOLS:
        patch = next((arguments[k] for k in _PATCH_KEYS if isinstance(arguments.get(k), str)), None)
        if patch is None:
            return Call(approval, Kind.FILE, folder, problem="the call has no patch")
        try:
            files = read_patch(patch)
        except PatchError as error:
            return Call(approval, Kind.FILE, folder, problem=f"the patch does not parse: {error}")
        for patched in files:
            written.append(patched.path)
            if patched.moved_to is not None:
                written.append(patched.moved_to)
                moves.append(patched.moved_to)
    else:
        written = [arguments[key] for key in _PATH_KEYS if isinstance(arguments.get(key), str)]
        written = [path for path in written if path]
    if not written:
        return Call(approval, Kind.FILE, folder, problem="the call names no file")
    try:
        paths = tuple(call_path(path, folder) for path in written)
        moved = tuple(call_path(path, folder) for path in moves)
    except PathError as error:
        return Call(approval, Kind.FILE, folder, problem=f"its path cannot be read: {error}")
    return Call(approval, Kind.FILE, folder, paths=paths, moves=moved)
