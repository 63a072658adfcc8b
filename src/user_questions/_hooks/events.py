"""The hook events of agent CLIs (Claude Code, Codex), as far as a hook needs them before loading
anything else: which events `uq hook` answers, and who asks and from where.

Standard library only (and `_reading.json_reader`, the package's bounded JSON reader, which is too).
A CLI runs its hook on every matching tool call, so `uq hook` reads the event and decides with this
module alone whether a person is to be asked; an event it does not answer costs a few milliseconds
and leaves the CLI to do as it would without the hook. The mappings to questions and back live in
`bridges.claude_code` and `bridges.codex`; the event formats, with the source of every field, are
described in docs/clients/.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from user_questions._hooks.record import Record
from user_questions._reading.json_reader import JSONRefused, load_json

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:  # `typing` costs a hook milliseconds to import: its names are for mypy only
    from typing import Any, Final, Literal, TypeAlias

    Client: TypeAlias = Literal["claude", "codex"]
    """The CLIs `uq hook` answers for, by the name of their command."""

__all__ = [
    "ASK_TOOL",
    "CLIENTS",
    "MAX_EVENT_BYTES",
    "PERMISSION_REQUEST",
    "PLAN_TOOL",
    "POST_TOOL_USE",
    "PRE_TOOL_USE",
    "Client",
    "HookOrigin",
    "answers",
    "hook_origin",
    "parse_event",
]

CLIENTS: tuple[Client, ...] = ("claude", "codex")
PRE_TOOL_USE = "PreToolUse"
POST_TOOL_USE = "PostToolUse"
"""Claude Code's event after a call has run, at which `uq hook` gives the model a kept note."""
PERMISSION_REQUEST = "PermissionRequest"
ASK_TOOL = "AskUserQuestion"
"""Claude Code's tool for asking the user questions."""
PLAN_TOOL = "ExitPlanMode"
"""Claude Code's tool for presenting a plan for approval."""
MAX_EVENT_BYTES = 32 * 1024 * 1024
"""The largest event read from stdin; a larger one is left to the CLI."""
_CLIENT_NAMES: dict[Client, str] = {"claude": "claude-code", "codex": "codex"}


def parse_event(text: str) -> dict[str, Any] | None:
    """The event in `text` (a JSON object), or `None` when it is not one (or breaks the bounds of
    `_reading.json_reader.load_json`: such an event is left to the CLI)."""
    try:
        event = load_json(text)
    except JSONRefused:
        return None
    return event if isinstance(event, dict) else None


def answers(client: Client, event: Mapping[str, Any]) -> bool:
    """Whether `uq hook <client>` asks a person about `event`.

    Claude Code: `PreToolUse` of `AskUserQuestion` and `ExitPlanMode` (its own questions, which
    it would otherwise ask in its terminal), and `PermissionRequest` of every other tool (a
    permission prompt about to be shown). `PreToolUse` of other tools runs for every call, also
    the ones already allowed, so it is never asked about. Codex: `PermissionRequest`, for shell,
    exec, network, patch and MCP approvals, and `PreToolUse` of any tool, whose hook a person
    installs by hand for the tools its matcher names (docs/clients/codex.md): it is the one event
    at which Codex takes a changed call.
    """
    tool = event.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return False
    name = event.get("hook_event_name")
    if client == "codex":
        return name in (PERMISSION_REQUEST, PRE_TOOL_USE)
    if name == PRE_TOOL_USE:
        return tool in (ASK_TOOL, PLAN_TOOL)
    return name == PERMISSION_REQUEST and tool not in (ASK_TOOL, PLAN_TOOL)


class HookOrigin(Record):
    """Which agent asks and from where: the CLI, its session and its working folder."""

    __slots__ = ("client", "session_id", "cwd")  # noqa: RUF023 (the fields, in order)

    client: Final[str]
    """The CLI's name: `claude-code` or `codex`."""
    session_id: Final[str | None]
    """The CLI's own session id, when it gave one."""
    cwd: Final[str | None]
    """The folder the CLI works in."""

    def __init__(self, client: str, session_id: str | None, cwd: str | None) -> None:
        self.client = client
        self.session_id = session_id
        self.cwd = cwd

    @property
    def session(self) -> str:
        """The session the host files the questions under: `<client>:<session_id>`."""
        return f"{self.client}:{self.session_id}" if self.session_id else self.client


def hook_origin(
    client: Client, event: Mapping[str, Any], environ: Mapping[str, str] = os.environ
) -> HookOrigin:
    """Who asks about `event` and from where, from the event's `session_id` and `cwd`.

    Claude Code also gives its hooks `CLAUDE_CODE_SESSION_ID` and `CLAUDE_PROJECT_DIR`, used
    when the event lacks them; failing all, the hook's own working folder (the CLI starts its
    hooks in its own).
    """
    session_id = _text(event.get("session_id"))
    cwd = _text(event.get("cwd"))
    if client == "claude":
        session_id = session_id or _text(environ.get("CLAUDE_CODE_SESSION_ID"))
        cwd = cwd or _text(environ.get("CLAUDE_PROJECT_DIR"))
    return HookOrigin(_CLIENT_NAMES[client], session_id, cwd or os.getcwd())


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
