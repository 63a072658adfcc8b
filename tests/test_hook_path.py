"""`uq hook`'s quick path loads the standard library alone.

An agent CLI runs its hook on every tool call, so the modules that read the event, decide whether a
person is to be asked and send a rule's decision (`_hooks/`, the host's URL and TLS in
`_host_link/`, the CLI's `_hook_stdin`, `_hook_rule` and `_hook_options`) must not load pydantic,
anyio or any other installed package: that is what keeps an event the hook leaves at milliseconds.
"""

from __future__ import annotations

import subprocess
import sys

QUICK_PATH = [
    "user_questions._hooks.events",
    "user_questions._hooks.approval_card",
    "user_questions._hooks.permission_call",
    "user_questions._hooks.settlement",
    "user_questions._host_link.url",
    "user_questions._host_link.tls",
    "user_questions.cli._hook_stdin",
    "user_questions.cli._hook_rule",
    "user_questions.cli._hook_options",
]

_LOADED_FROM_OUTSIDE = """
import importlib, sys
before = set(sys.modules)  # what the interpreter's start loaded (site's .pth hooks among them)
for name in sys.argv[1:]:
    importlib.import_module(name)
outside = {
    module.partition(".")[0]
    for module in set(sys.modules) - before
    if module.partition(".")[0] not in sys.stdlib_module_names
}
print(" ".join(sorted(outside - {"user_questions"})))
"""


def loaded_from_outside(*modules: str) -> list[str]:
    """The packages other than the standard library that importing `modules` loads."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED_FROM_OUTSIDE, *modules],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.split()


def test_the_hook_path_loads_the_standard_library_alone() -> None:
    assert loaded_from_outside(*QUICK_PATH) == []


def test_a_module_that_loads_pydantic_is_seen() -> None:
    """The check above can fail: the vocabulary, which the quick path avoids, is caught."""
    assert "pydantic" in loaded_from_outside("user_questions.types")
