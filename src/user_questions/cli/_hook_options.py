"""`uq hook`'s options as a settings file holds them, read without a command-line library.

Standard library only. `main` reads the plain options of an answered event's hook here
(`fast_options`), which keeps cyclopts (tens of milliseconds) off the path every permission
prompt takes; anything else (help, a mistyped option) goes through the full command line
(`_hook`), which makes the same `HookOptions`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from user_questions._hooks.events import Client

__all__ = ["CLIENT_NAMES", "CONNECT_TIMEOUT", "HookOptions", "fast_options"]

CONNECT_TIMEOUT = 2.0
"""Seconds the host has to answer before the CLI is left to ask in its own terminal."""
CLIENT_NAMES: dict[Client, str] = {"claude": "Claude Code", "codex": "Codex"}
_TEXT_OPTIONS = {"--url": "url", "--token": "token", "--ca": "ca"}
_NUMBER_OPTIONS = {"--timeout": "timeout", "--connect-timeout": "connect_timeout"}


@dataclass(frozen=True, slots=True)
class HookOptions:
    """The hook's options, as its command line gives them."""

    url: str | None
    token: str | None
    ca: str | None
    timeout: float | None
    connect_timeout: float = CONNECT_TIMEOUT


def fast_options(argv: Sequence[str]) -> HookOptions | None:
    """The options of `hook <client> [--url U] [--token T] [--ca F] [--timeout N]
    [--connect-timeout N]` (each also as `--name=value`, given at most once; `$UQ_URL` and
    `$UQ_TOKEN` as the full command line reads them), or `None` for anything else, which the
    full command line then reads, refusing it as it does."""
    given: dict[str, Any] = {}
    words = list(argv[2:])
    while words:
        word = words.pop(0)
        name, equals, value = word.partition("=")
        if not equals:
            if not words:
                return None
            value = words.pop(0)
        key = _TEXT_OPTIONS.get(name) or _NUMBER_OPTIONS.get(name)
        if key is None or key in given or value.startswith("-"):
            return None
        if name in _NUMBER_OPTIONS:
            try:
                given[key] = float(value)
            except ValueError:
                return None
            if given[key] != given[key] or given[key] in (float("inf"), float("-inf")):
                return None
        else:
            given[key] = value
    given.setdefault("url", os.environ.get("UQ_URL"))
    given.setdefault("token", os.environ.get("UQ_TOKEN"))
    return HookOptions(
        url=given["url"],
        token=given["token"],
        ca=given.get("ca"),
        timeout=given.get("timeout"),
        connect_timeout=given.get("connect_timeout", CONNECT_TIMEOUT),
    )
