"""`uq hook`'s quick path loads the standard library alone.

An agent CLI runs its hook on every tool call, so the modules that read the event, decide whether a
person is to be asked and send a rule's decision (`_hooks/`, the host's URL and TLS in
`_host_link/`, the CLI's `_hook_stdin`, `_hook_rule` and `_hook_options`) must not load pydantic,
anyio or any other installed package: that is what keeps an event the hook leaves at milliseconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def python(
    script: str, *arguments: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`script` run by a new interpreter with `arguments` (it must succeed)."""
    return subprocess.run(
        [sys.executable, "-c", script, *arguments],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )


def loaded_from_outside(*modules: str) -> list[str]:
    """The packages other than the standard library that importing `modules` loads."""
    return python(_LOADED_FROM_OUTSIDE, *modules).stdout.split()


def test_the_hook_path_loads_the_standard_library_alone() -> None:
    assert loaded_from_outside(*QUICK_PATH) == []


def test_a_module_that_loads_pydantic_is_seen() -> None:
    """The check above can fail: the vocabulary, which the quick path avoids, is caught."""
    assert "pydantic" in loaded_from_outside("user_questions.types")


SLOW_STANDARD_MODULES = ("typing", "gettext", "pathlib", "encodings.idna", "ssl", "http.client")
"""Standard modules the quick path does without, each a millisecond or more of every hook's start
(docs/performance.md, "A call a rule decides"): `typing` (names for mypy only), `gettext` and
`pathlib` (the catalogs, loaded when a word is shown), the `idna` codec (a host's name is looked up
as ASCII bytes), `ssl` (for an https host only) and `http.client` (its email parser)."""

_SLOW_LOADED = """
import socket, sys, time
before = set(sys.modules)
from user_questions.cli import _hook_rule, _hook_stdin
from user_questions._hooks import events, permission_call, settlement
from user_questions._host_link import url

with socket.create_server(("127.0.0.1", 0)) as server:  # the quick path's connection, by name
    _hook_rule._connect("localhost", server.getsockname()[1], time.monotonic() + 10).close()
print(" ".join(sorted(set(sys.argv[1:]) & (set(sys.modules) - before))))
"""


def test_the_quick_path_leaves_slow_standard_modules_unloaded() -> None:
    """Each of these once cost the rule-decided hook its share of the 35 ms budget: a later
    import of one of them (an annotation needing `typing`, say) fails here, not in a benchmark."""
    assert python(_SLOW_LOADED, *SLOW_STANDARD_MODULES).stdout.split() == []


def test_a_slow_standard_module_is_seen() -> None:
    """The check above can fail: TLS's module loads `ssl`."""
    tls = "import sys; import user_questions._host_link.tls; print('ssl' in sys.modules)"
    assert python(tls).stdout.strip() == "True"


_LEFT_ALONE = """
import sys
before, watched = set(sys.modules), set(sys.argv[1:])
sys.argv = ["uq", "hook", "claude"]
from user_questions.cli import main

main()
print(" ".join(sorted(watched & (set(sys.modules) - before))))
"""


_NOTES = ("hashlib", "user_questions._hooks.allowed_notes")
"""The kept notes' module and what it imports, loaded only for a `PostToolUse`."""


@pytest.mark.parametrize(
    ("name", "unloaded"),
    [
        ("PreToolUse", (*SLOW_STANDARD_MODULES, "dataclasses", *_NOTES)),
        ("PostToolUse", ("typing", "gettext", "encodings.idna", "ssl", "dataclasses")),
    ],
)
def test_an_event_left_alone_loads_no_more_than_it_reads(
    name: str, unloaded: tuple[str, ...], tmp_path: Path
) -> None:
    """A `PreToolUse` of `Bash`, sent before every call, is read and left: neither the kept
    notes' module (`hashlib`, `pathlib`) nor `dataclasses` (which imports `inspect`) is loaded.
    A `PostToolUse`, sent after every call, looks for a note without `dataclasses` or `typing`."""
    event = json.dumps({"hook_event_name": name, "tool_name": "Bash", "tool_input": {}})
    done = python(
        _LEFT_ALONE, *unloaded, stdin=event, env={**os.environ, "XDG_STATE_HOME": str(tmp_path)}
    )
    assert (done.stdout.split(), done.stderr) == ([], "")
