"""The notes a person gave beside an allowed Claude Code call, kept from its permission prompt until
the call has run, when Claude Code's `PostToolUse` hook hands them to the model.

Standard library only: `uq hook claude` runs on every `PostToolUse` and looks here before anything
else is loaded. A `PermissionRequest` decision has no field the model reads, and Claude Code runs
each hook in a process of its own, so the `PermissionRequest` hook keeps the note in a file of its
own (in `$XDG_STATE_HOME/user-questions/hook-notes`, readable by its owner only), named by the
session, the tool and the input that runs (the one the person allowed, or changed it to); the
`PostToolUse` hook of that very call takes it (reads and removes it) and gives it to the model as
`additionalContext`. A note whose call never ran (the session ended first) is removed a day later.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from user_questions._hooks.events import POST_TOOL_USE, hook_origin
from user_questions._hooks.record import Record

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "KEPT_SECONDS",
    "POST_TOOL_USE",
    "NotedCall",
    "call_key",
    "delivered_note",
    "keep_note",
    "notes_folder",
    "post_tool_use_context",
    "take_note",
]

KEPT_SECONDS = 24 * 3600
"""How long a note whose call never ran is kept."""


class NotedCall(Record):
    """The call a note is kept for: Claude Code's session, the tool, and the input that runs."""

    __slots__ = ("session_id", "tool", "input")  # noqa: RUF023 (the fields, in order)

    session_id: Final[str | None]
    tool: Final[str]
    input: Final[dict[str, Any]]

    def __init__(self, session_id: str | None, tool: str, input: dict[str, Any]) -> None:
        self.session_id = session_id
        self.tool = tool
        self.input = input


def post_tool_use_context(note: str) -> dict[str, Any]:
    """A `PostToolUse` output giving the model `note` (`additionalContext`)."""
    return {"hookSpecificOutput": {"hookEventName": POST_TOOL_USE, "additionalContext": note}}


def delivered_note(event: Mapping[str, Any], folder: Path | None = None) -> dict[str, Any] | None:
    """The `PostToolUse` output giving the model the note kept for the call `event` reports
    (`additionalContext`); `None` for any other event, or a call with no note."""
    tool, input = event.get("tool_name"), event.get("tool_input")
    if event.get("hook_event_name") != POST_TOOL_USE or not isinstance(tool, str):
        return None
    if not isinstance(input, dict):
        return None
    note = take_note(NotedCall(hook_origin("claude", event).session_id, tool, input), folder)
    return None if note is None else post_tool_use_context(note)


def notes_folder(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the notes wait: `$XDG_STATE_HOME/user-questions/hook-notes` (by default under
    `~/.local/state`)."""
    state = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "user-questions" / "hook-notes"


def keep_note(call: NotedCall, note: str, folder: Path | None = None) -> None:
    """Keep `note` for the `PostToolUse` of `call`, replacing one kept for an identical call."""
    folder = folder or notes_folder()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    _forget_old(folder)
    path = folder / _file_name(call)
    partial = path.with_suffix(f".{os.getpid()}.part")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(note)
    partial.replace(path)


def take_note(call: NotedCall, folder: Path | None = None) -> str | None:
    """The note kept for `call`, removed as it is read; `None` when there is none."""
    path = (folder or notes_folder()) / _file_name(call)
    try:
        note = path.read_text(encoding="utf-8")
    except OSError:  # none kept (the usual case: most calls have no note)
        return None
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return note or None


def call_key(call: NotedCall) -> str:
    """A name for `call`, the same for every equal call (its input's key order aside)."""
    key: list[Any] = [call.session_id, call.tool, call.input]
    text = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _file_name(call: NotedCall) -> str:
    return call_key(call) + ".note"


def _forget_old(folder: Path) -> None:
    """Remove the notes older than `KEPT_SECONDS` (their calls never ran)."""
    oldest = time.time() - KEPT_SECONDS
    for path in folder.glob("*.note"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < oldest:
                path.unlink()
