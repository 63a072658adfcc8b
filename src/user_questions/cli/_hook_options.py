"""`uq hook`'s options as a settings file holds them, read without a command-line library.

Standard library only. `main` reads the plain options of an answered event's hook here
(`fast_options`), which keeps cyclopts (tens of milliseconds) off the path every permission
prompt takes; anything else (help, a mistyped option) goes through the full command line
(`_hook`), which makes the same `HookOptions`.

`--timeout` bounds the whole hook, from the moment its options are read: the quick path, the
connection and the wait for a person all come out of it (`remaining`, `connect_budget`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from user_questions._hooks.record import Record

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any, Final

    from user_questions._hooks.events import Client

__all__ = ["CLIENT_NAMES", "CONNECT_TIMEOUT", "HookOptions", "fast_options"]

CONNECT_TIMEOUT = 2.0
"""Seconds the host has to answer before the CLI is left to ask in its own terminal."""
CLIENT_NAMES: dict[Client, str] = {"claude": "Claude Code", "codex": "Codex"}
_TEXT_OPTIONS = {"--url": "url", "--token": "token", "--ca": "ca"}
_NUMBER_OPTIONS = {"--timeout": "timeout", "--connect-timeout": "connect_timeout"}


class HookOptions(Record):
    """The hook's options, as its command line gives them."""

    __slots__ = ("url", "token", "ca", "timeout", "connect_timeout", "started")  # noqa: RUF023 (the fields, in order)
    _UNCOMPARED = frozenset({"started"})

    url: Final[str | None]
    token: Final[str | None]
    ca: Final[str | None]
    timeout: Final[float | None]
    """Seconds the whole hook may take (the quick path, the connection, the wait for a person);
    `None`: only the CLI's own hook timeout ends the wait."""
    connect_timeout: Final[float]
    """Seconds the host has to answer: the quick path's whole request, and then the full path's
    connection (each within what is left of `timeout`)."""
    started: Final[float]
    """When the hook began (`time.monotonic()`), which `timeout` counts from."""

    def __init__(
        self,
        url: str | None,
        token: str | None,
        ca: str | None,
        timeout: float | None,
        connect_timeout: float = CONNECT_TIMEOUT,
        started: float | None = None,
    ) -> None:
        self.url = url
        self.token = token
        self.ca = ca
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.started = time.monotonic() if started is None else started

    def remaining(self) -> float | None:
        """Seconds left of `timeout` (at least 0); `None` without one."""
        if self.timeout is None:
            return None
        return max(0.0, self.started + self.timeout - time.monotonic())

    def connect_budget(self) -> float:
        """Seconds the next exchange with the host may take: `connect_timeout`, or what is left
        of `timeout` when that is less."""
        left = self.remaining()
        return self.connect_timeout if left is None else min(self.connect_timeout, left)


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
