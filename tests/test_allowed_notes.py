"""Notes beside allowed Claude Code calls, kept by the permission prompt's hook until the call's
`PostToolUse`: only its owner can read them, each is given once, to that very call, and one whose
call never ran is removed a day later."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from user_questions._hooks.allowed_notes import (
    KEPT_SECONDS,
    NotedCall,
    delivered_note,
    keep_note,
    notes_folder,
    take_note,
)

CALL = NotedCall("s1", "Bash", {"command": "npm test", "description": "Run the tests"})


def test_a_note_is_given_once_to_the_call_that_ran_and_only_its_owner_reads_it(
    tmp_path: Path,
) -> None:
    keep_note(CALL, "CI is slow today", tmp_path)
    (kept,) = tmp_path.iterdir()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    event = {
        "hook_event_name": "PostToolUse",
        "session_id": "s1",
        "tool_name": "Bash",
        "tool_input": {"description": "Run the tests", "command": "npm test"},  # any key order
    }
    other_session = {**event, "session_id": "s2"}
    assert delivered_note(other_session, tmp_path) is None
    assert delivered_note(event, tmp_path) == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "CI is slow today",
        }
    }
    assert delivered_note(event, tmp_path) is None
    assert list(tmp_path.iterdir()) == []


def test_the_folder_is_made_for_its_owner_only_under_the_state_home(tmp_path: Path) -> None:
    folder = notes_folder({"XDG_STATE_HOME": str(tmp_path)})
    assert folder == tmp_path / "user-questions" / "hook-notes"
    keep_note(CALL, "x", folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_note_whose_call_never_ran_is_removed_a_day_later(tmp_path: Path) -> None:
    keep_note(CALL, "old", tmp_path)
    (kept,) = tmp_path.iterdir()
    long_ago = time.time() - KEPT_SECONDS - 60
    os.utime(kept, (long_ago, long_ago))
    fresh = NotedCall("s1", "Bash", {"command": "ls"})
    keep_note(fresh, "new", tmp_path)
    assert take_note(CALL, tmp_path) is None
    assert take_note(fresh, tmp_path) == "new"
