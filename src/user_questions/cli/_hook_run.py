"""How `uq hook claude|codex` runs once its command line is read: the event on stdin asked
through a host, the answer printed as the hook's output.

No command-line library: `main` runs an answered event's hook from here directly when its
arguments are the plain options a settings file holds (`fast_options`), which keeps cyclopts
(tens of milliseconds) off the path every permission prompt takes; anything else (help, a
mistyped option) goes through the full command line (`_hook`), which ends here too.

Failing never allows anything: every failure prints nothing on stdout, one line on stderr, and
returns (exit status 0), so the CLI shows its own prompt (`_hook` says why at length).
`--timeout` bounds every phase (`HookOptions.remaining`): the connection gets what is left of it
when that is less than `--connect-timeout`, and the wait for a person the rest.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

import anyio

from user_questions._hooks.events import hook_origin, parse_event
from user_questions.abort import AbortSignal
from user_questions.bridges.hook import HookAsk, HookOutput
from user_questions.cli._hook_options import CLIENT_NAMES, HookOptions
from user_questions.cli._hook_stdin import event_text
from user_questions.cli._stopping import STOP_SIGNALS, StoppedError, until_stopped
from user_questions.context import Context
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval, Origin
from user_questions.service import (
    AskUserQuestionRequest,
    UserQuestionProvider,
    UserQuestionService,
)

if TYPE_CHECKING:
    from user_questions._hooks.events import Client

__all__ = ["UNREACHABLE_LIMIT", "run"]

UNREACHABLE_LIMIT = 30.0
"""Seconds a host that went away while a question waits has to come back (a restart)."""
_HOOK_SIGNALS = (*STOP_SIGNALS, signal.SIGINT)


def run(client: Client, options: HookOptions) -> None:
    """Ask about the event on stdin and print the hook's output; return whatever happens."""
    try:
        output = anyio.run(until_stopped, lambda: _hook(client, options), _HOOK_SIGNALS)
    except StoppedError as stopped:
        _leave(client, f"stopped by {stopped.name}; the question was withdrawn")
    except UserQuestionError as error:
        _leave(client, error.message)
    except Exception as error:  # never a traceback, never a denial: the CLI asks instead
        _leave(client, f"{type(error).__name__}: {error}")
    else:
        if output:  # an empty output says nothing: the CLI goes on as without the hook
            print(json.dumps(output, ensure_ascii=False), flush=True)


async def _hook(client: Client, options: HookOptions) -> HookOutput | None:
    event = parse_event(event_text())
    hook = None if event is None else _bridge(client, event)
    if event is None or hook is None:
        return None
    url = options.url or os.environ.get("UQ_URL")
    if not url:
        raise UserQuestionError(
            "no host to ask through: set UQ_URL to the URL `uq serve` printed, or pass --url",
            ErrorCode.BAD_REQUEST,
        )
    from user_questions.providers.remote import RemoteProvider

    origin = hook_origin(client, event)
    _check_time_left(options)
    provider = RemoteProvider(
        url,
        token=options.token,
        ca=options.ca,
        session=origin.session,
        origin=Origin(client=origin.client, cwd=origin.cwd),
        unreachable_limit=UNREACHABLE_LIMIT,
        connect_timeout=options.connect_budget(),
        require_asker=True,
    )
    async with provider:
        await provider.connect()
        _check_time_left(options)
        approval = hook.approval
        if approval is not None:
            approval = approval.model_copy(update={"agent": origin.client, "cwd": origin.cwd})
        return await _ask(provider, hook, approval, options)


def _bridge(client: Client, event: dict[str, Any]) -> HookAsk | None:
    """The ask `client`'s bridge makes of `event` (only that bridge is loaded)."""
    if client == "claude":
        from user_questions.bridges import claude_code

        return claude_code.hook_ask(event)
    from user_questions.bridges import codex

    return codex.hook_ask(event)


async def _ask(
    provider: UserQuestionProvider, hook: HookAsk, approval: Approval | None, options: HookOptions
) -> HookOutput:
    ctx = Context()
    ctx.plugin(UserQuestionService)
    ctx.user_questions.register_provider(provider)
    left = options.remaining()
    deadline = None if left is None else AbortSignal.timeout(left)
    try:
        answer = await ctx.user_questions.ask(
            AskUserQuestionRequest(hook.questions, signal=deadline, approval=approval)
        )
    except UserQuestionError as error:
        if error.code == ErrorCode.ASK_CANCELLED:
            return hook.dismissed()
        raise
    return hook.answered(answer)


def _check_time_left(options: HookOptions) -> None:
    """Give up, as a timed-out ask does, once `--timeout` has passed (on the quick path, or while
    connecting)."""
    if options.remaining() == 0:
        raise UserQuestionError(
            f"timed out: no answer within --timeout ({options.timeout:g} s)",
            ErrorCode.ASK_TIMED_OUT,
        )


def _leave(client: Client, reason: str) -> None:
    """Say on stderr why the CLI asks in its own terminal this time."""
    print(f"uq hook: {reason}; {CLIENT_NAMES[client]} asks in its own terminal", file=sys.stderr)
