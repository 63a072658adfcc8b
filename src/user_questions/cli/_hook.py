"""`uq hook claude` and `uq hook codex`: an agent CLI's prompts asked in a host's inbox.

Extra `web` (for `RemoteProvider`). The CLI runs the hook with one event as JSON on stdin and no
terminal; `main` has already read it and left at once if it is not an event the hook asks about
(`_hook_stdin`). Here the event becomes questions (`bridges.claude_code`, `bridges.codex`), asked
through the host at `--url` (else `$UQ_URL`) in the CLI's session (`claude-code:<session_id>`), and
the answer becomes the hook's JSON output on stdout.

Failing never allows anything: no URL, a host that does not answer within `--connect-timeout`,
a refused token, a token that can answer, an event that cannot be asked, no answer within
`--timeout`, or any other error prints nothing on stdout (one line on stderr says why) and exits
0, so the CLI shows its own prompt. The hook gates permissions, so it asks only with an asker's
token, which can never answer: with any other, an agent that found the token could approve its
own request. The host says the token's role in the handshake, and the hook refuses any other
before asking (`RemoteProvider(require_asker=True)`), at no cost to its start-up. SIGTERM, SIGINT
or SIGHUP (the CLI stopping its hook: at the hook's timeout, or when its session ends) withdraw
the question from every page before the hook exits.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from cyclopts import App, Parameter

from user_questions._hook_events import Client, hook_origin, parse_event
from user_questions.abort import AbortSignal
from user_questions.bridges import claude_code
from user_questions.bridges import codex as codex_bridge
from user_questions.bridges.hook import HookAsk, HookOutput
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

__all__ = ["CONNECT_TIMEOUT", "UNREACHABLE_LIMIT", "hook_app"]

CONNECT_TIMEOUT = 2.0
"""Seconds the host has to answer before the CLI is left to ask in its own terminal."""
UNREACHABLE_LIMIT = 30.0
"""Seconds a host that went away while a question waits has to come back (a restart)."""
_NAMES: dict[Client, str] = {"claude": "Claude Code", "codex": "Codex"}
_HOOK_SIGNALS = (*STOP_SIGNALS, signal.SIGINT)

hook_app = App(
    name="hook",
    help="Answer an agent CLI's questions and permission prompts through a host's inbox.\n\n"
    "`uq hook claude` and `uq hook codex` are run by the CLI itself, with a hook event on "
    "stdin; `uq hook install` writes them into the CLI's settings.",
)
hook_app.command(
    "user_questions.cli._hook_install:install",
    name="install",
    help="Add uq's hooks to Claude Code's or Codex's settings, keeping everything else.",
)
hook_app.command(
    "user_questions.cli._hook_install:uninstall",
    name="uninstall",
    help="Remove uq's hooks from Claude Code's or Codex's settings, keeping everything else.",
)

Url = Annotated[str | None, Parameter(env_var="UQ_URL")]
Token = Annotated[str | None, Parameter(env_var="UQ_TOKEN")]


def _hook_command(client: Client, events: str) -> Callable[..., None]:
    """The command `uq hook <client>`: `client`'s `events` hook, reading the event on stdin."""
    name = _NAMES[client]

    def command(
        *,
        url: Url = None,
        token: Token = None,
        ca: str | None = None,
        timeout: float | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        _run(client, _Options(url, token, ca, timeout, connect_timeout))

    command.__doc__ = f"""Run as {name}'s {events} hook (reads the event on stdin).

    Parameters
    ----------
    url
        The host, with an asker's token: the `export UQ_URL=...` line `uq serve` prints, or a
        token made with `uq token add NAME --role asker`. A token that can answer is refused.
    token
        An asker's token, when the URL has none.
    ca
        A PEM file of the certificate authority that signed an https host's certificate,
        trusted besides the system's (and $SSL_CERT_FILE's).
    timeout
        Seconds to wait for an answer; then the question is withdrawn and {name} asks in its
        own terminal. Set it under the hook's timeout in the settings (`uq hook install` does).
    connect_timeout
        Seconds the host has to answer before {name} is left to ask in its own terminal.
    """
    return command


hook_app.command(_hook_command("claude", "PreToolUse and PermissionRequest"), name="claude")
hook_app.command(_hook_command("codex", "PermissionRequest"), name="codex")


@dataclass(frozen=True, slots=True)
class _Options:
    url: str | None
    token: str | None
    ca: str | None
    timeout: float | None
    connect_timeout: float


def _run(client: Client, options: _Options) -> None:
    """Ask about the event on stdin and print the hook's output; exit 0 whatever happens."""
    try:
        output = anyio.run(until_stopped, lambda: _hook(client, options), _HOOK_SIGNALS)
    except StoppedError as stopped:
        _leave(client, f"stopped by {stopped.name}; the question was withdrawn")
    except UserQuestionError as error:
        _leave(client, error.message)
    except Exception as error:  # never a traceback, never a denial: the CLI asks instead
        _leave(client, f"{type(error).__name__}: {error}")
    else:
        if output is not None:
            print(json.dumps(output, ensure_ascii=False), flush=True)


async def _hook(client: Client, options: _Options) -> HookOutput | None:
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
    provider = RemoteProvider(
        url,
        token=options.token,
        ca=options.ca,
        session=origin.session,
        origin=Origin(client=origin.client, cwd=origin.cwd),
        unreachable_limit=UNREACHABLE_LIMIT,
        connect_timeout=options.connect_timeout,
        require_asker=True,
    )
    async with provider:
        await provider.connect()
        approval = hook.approval
        if approval is not None:
            approval = approval.model_copy(update={"agent": origin.client, "cwd": origin.cwd})
        return await _ask(provider, hook, approval, options)


def _bridge(client: Client, event: dict[str, Any]) -> HookAsk | None:
    return claude_code.hook_ask(event) if client == "claude" else codex_bridge.hook_ask(event)


async def _ask(
    provider: UserQuestionProvider, hook: HookAsk, approval: Approval | None, options: _Options
) -> HookOutput:
    ctx = Context()
    ctx.plugin(UserQuestionService)
    ctx.user_questions.register_provider(provider)
    deadline = None if options.timeout is None else AbortSignal.timeout(options.timeout)
    try:
        answer = await ctx.user_questions.ask(
            AskUserQuestionRequest(hook.questions, signal=deadline, approval=approval)
        )
    except UserQuestionError as error:
        if error.code == ErrorCode.ASK_CANCELLED:
            return hook.dismissed()
        raise
    return hook.answered(answer)


def _leave(client: Client, reason: str) -> None:
    """Say on stderr why the CLI asks in its own terminal this time."""
    print(f"uq hook: {reason}; {_NAMES[client]} asks in its own terminal", file=sys.stderr)
