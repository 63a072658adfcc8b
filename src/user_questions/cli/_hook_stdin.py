"""The one hook event on stdin, read once, and the quick look `uq` takes at it before anything
else is loaded.

Standard library only. `main` calls `hook_run_client` first: for `uq hook claude` or `uq hook codex`
(run by the CLI with the event on stdin) it reads the event and leaves at once, printing nothing,
when the event is not one `uq hook` asks about (`_hooks.events.answers`), after giving Claude Code's
model the note kept for a call that has just run (`note_for_the_model`); only an event it answers
goes on to the command line parser and the ask (`cli._hook`), which reads the same text again
through `event_text`.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence

from user_questions._hooks.events import (
    CLIENTS,
    MAX_EVENT_BYTES,
    POST_TOOL_USE,
    answers,
    parse_event,
)

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

    from user_questions._hooks.events import Client

__all__ = ["event_text", "hook_run_client", "is_answered", "note_for_the_model"]

_HELP = frozenset({"-h", "--help", "--version"})


def hook_run_client(argv: Sequence[str]) -> Client | None:
    """The CLI `argv` (without the program) runs the hook for: `hook claude ...` -> `"claude"`;
    `None` for any other command, and for a request for help."""
    if len(argv) < 2 or argv[0] != "hook" or _HELP.intersection(argv):
        return None
    return next((client for client in CLIENTS if client == argv[1]), None)


@functools.cache
def event_text() -> str:
    """Everything on stdin (at most `MAX_EVENT_BYTES`; more reads as no event at all)."""
    data = sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)
    if len(data) > MAX_EVENT_BYTES:
        return ""
    return data.decode("utf-8", errors="replace")


def is_answered(client: Client) -> bool:
    """Whether the event on stdin is one `uq hook <client>` asks a person about."""
    event = parse_event(event_text())
    return event is not None and answers(client, event)


def note_for_the_model(client: Client) -> dict[str, Any] | None:
    """For Claude Code's `PostToolUse` of a call a person allowed with a note: the output giving
    the model that note (`_hooks.allowed_notes`); `None` for every other event."""
    event = parse_event(event_text())
    # Looked at here: the notes' module (`hashlib`, `pathlib`) would cost every other event,
    # such as the `PreToolUse` sent before each call, milliseconds to import.
    if client != "claude" or event is None or event.get("hook_event_name") != POST_TOOL_USE:
        return None
    from user_questions._hooks.allowed_notes import delivered_note

    return delivered_note(event)
