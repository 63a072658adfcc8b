"""Running a prompt so that SIGTERM or SIGHUP withdraws it before the command stops.

Shared by `uq ask`, `uq answer` and `uq hook`. A prompt that is cancelled erases itself and restores
the terminal (`providers.terminal`), a question asked through a host is withdrawn; `until_stopped`
turns a stop signal into that cancellation, then raises `StoppedError`, so the command can exit with
128+N.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

__all__ = ["STOP_SIGNALS", "StoppedError", "until_stopped"]

T = TypeVar("T")

STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""Signals that withdraw the prompt before the process stops (SIGHUP does not exist on Windows)."""


class StoppedError(Exception):
    """Raised when a stop signal ended the work; `signum` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        """The signal's name, such as `SIGTERM`."""
        return signal.Signals(self.signum).name


async def until_stopped(
    work: Callable[[], Awaitable[T]], stop_signals: tuple[signal.Signals, ...] = STOP_SIGNALS
) -> T:
    """Run `work`; one of `stop_signals` cancels it (its prompt withdrawn) and raises
    `StoppedError`.

    Errors of `work`, `KeyboardInterrupt` included, are raised as they are, not grouped.
    """
    outcome: list[T | BaseException] = []
    with anyio.open_signal_receiver(*stop_signals) as signals:
        async with anyio.create_task_group() as group:

            async def run() -> None:
                try:
                    outcome.append(await work())
                except (Exception, KeyboardInterrupt) as error:
                    outcome.append(error)
                finally:
                    group.cancel_scope.cancel()

            group.start_soon(run)
            async for signum in signals:
                outcome.append(StoppedError(signum))
                group.cancel_scope.cancel()
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result
