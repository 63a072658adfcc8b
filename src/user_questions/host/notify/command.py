"""`CommandNotifier`: run a command for each host event, with the event's JSON on its stdin.

The command line is split with `shlex` and run directly, without a shell: a question's text can
never become shell syntax. For pipes or variables, run a shell yourself (`sh -c '...'`) and read the
event from stdin or from the variables set for the command:

    UQ_EVENT       question/pending or question/settled
    UQ_RPC_ID      the request's rpcId
    UQ_SESSION_ID  who asked
    UQ_SUMMARY     the first question's text (at most `SUMMARY_CHARS` characters)

The command inherits the host's environment without `UQ_TOKEN` and `UQ_NOTIFY_SECRET`, and its
stderr (so its complaints reach the host's log); its stdout is discarded, since the host's stdout
carries only its URL. A command that runs longer than `timeout` is killed; at most `concurrency`
commands run at once. A failure (not found, a non-zero exit, killed) is one log line; the event
is not run again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import subprocess

import anyio

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.notify.events import HostEvent
from user_questions.host.notify.notifier import QUEUE_CAPACITY, Notifier

__all__ = [
    "COMMAND_CONCURRENCY",
    "COMMAND_TIMEOUT",
    "HIDDEN_VARIABLES",
    "SUMMARY_CHARS",
    "CommandNotifier",
    "command_argv",
]

logger = logging.getLogger("user_questions.host.notify")

COMMAND_TIMEOUT = 10.0
"""Seconds a notify command may run before it is killed."""
COMMAND_CONCURRENCY = 4
"""Notify commands running at once; the events of one request always run one after the other."""
SUMMARY_CHARS = 200
"""The longest `UQ_SUMMARY`."""
HIDDEN_VARIABLES = frozenset({"UQ_TOKEN", "UQ_NOTIFY_SECRET", "UQ_NOTIFY"})
"""The host's secrets, kept out of the command's environment."""


def command_argv(command: str) -> list[str]:
    """The program and arguments of a notify command line, split as a shell would.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` when the command line cannot be split, is empty, or
            names a program that is not found.
    """
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise UserQuestionError(
            f"cannot read the notify command {command!r}: {error}", ErrorCode.BAD_NOTIFIER
        ) from None
    if not argv:
        raise UserQuestionError("the notify command is empty", ErrorCode.BAD_NOTIFIER)
    if shutil.which(argv[0]) is None:
        raise UserQuestionError(
            f"the notify command {argv[0]!r} is not found (or not executable)",
            ErrorCode.BAD_NOTIFIER,
        )
    return argv


class CommandNotifier(Notifier):
    """Runs `command` (a command line, split with `shlex`) once per event.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` as `command_argv` does.
    """

    def __init__(
        self,
        command: str,
        *,
        timeout: float = COMMAND_TIMEOUT,
        concurrency: int = COMMAND_CONCURRENCY,
        capacity: int = QUEUE_CAPACITY,
    ) -> None:
        super().__init__(concurrency=concurrency, capacity=capacity)
        argv = command_argv(command)
        self.argv = argv
        self.target = f"command {argv[0]}"
        self._timeout = timeout

    async def deliver(self, event: HostEvent) -> bool:
        body = event.model_dump_json().encode() + b"\n"
        status: int | None = None
        try:
            with anyio.move_on_after(self._timeout):
                async with await anyio.open_process(
                    self.argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=None,
                    env=_environment(event),
                ) as process:
                    assert process.stdin is not None
                    # A command that does not read its stdin is fine.
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await process.stdin.send(body)
                        await process.stdin.aclose()
                    status = await process.wait()
        except OSError as error:
            problem = f"could not start: {error.strerror or error}"
        else:
            if status == 0:
                return True
            problem = f"killed after {self._timeout:g} s" if status is None else f"exited {status}"
        logger.warning("%s: %s of question %s %s", self.target, event.type, event.rpc_id, problem)
        return False


def _environment(event: HostEvent) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k not in HIDDEN_VARIABLES}
    summary = str(event.questions[0].get("question", "")) if event.questions else ""
    given = {
        "UQ_EVENT": event.type,
        "UQ_RPC_ID": event.rpc_id,
        "UQ_SESSION_ID": event.session_id,
        "UQ_SUMMARY": summary[:SUMMARY_CHARS],
    }
    # An environment variable cannot hold a NUL character; the JSON on stdin keeps everything.
    environment.update({name: value.replace("\0", "") for name, value in given.items()})
    return environment
