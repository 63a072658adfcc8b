"""`uq mcp`: an MCP server whose `ask_user_question` tool is answered by a host or a terminal.

Extra `mcp` (and `terminal` or `web` for the provider). The server speaks stdio by default,
streamable HTTP with `--http`. With stdio the protocol owns stdin and stdout (and the client usually
collects stderr as a log), so the terminal provider reads and draws on the controlling terminal,
`/dev/tty`; with `--http` it uses the process's stdin and stderr.

`--permission-tool` adds `approve`, Claude Code's permission prompt tool
(`bridges.claude_permission`). It gates permissions, so with it a token that can answer is refused
at start, as `uq hook` refuses it: one line on stderr, nothing on stdout, exit 0 (an agent holding
such a token could approve its own requests); without it such a token is used, with one warning.
Each `approve` call is decided within `--permission-timeout` seconds (default 1800): past it, or on
any failure, the call is denied, saying why; never allowed.
With `--url` the host must answer at start (or `uq mcp` exits 1 with one line); while serving, a
host that goes away has `--unreachable-limit` seconds to come back before the waiting calls fail.
`--http` binds its address before it says it serves, so a busy port is a one-line failure (exit
1). Exit statuses: 0 stopped (or a permission tool refused its token), 1 could not start, 2 bad
input.
"""

from __future__ import annotations

import contextlib
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TextIO

import anyio
from cyclopts import Parameter

from user_questions import tool_ask_user
from user_questions._reading.json_reader import load_json
from user_questions.agents import AgentRegistry
from user_questions.approvals import DECISION_TIMEOUT
from user_questions.context import Context
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.providers.scripted import ScriptedProvider
from user_questions.service import UserQuestionProvider, UserQuestionService
from user_questions.tools import ToolRegistry

__all__ = ["mcp"]

TTY = "/dev/tty"


class _Refused(Exception):
    """`uq mcp` cannot start; the message says why and what to do."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class _Options:
    url: str | None
    token: str | None
    ca: str | None
    session: str | None
    http: bool
    bind: str
    port: int
    progress_interval: float | None
    unreachable_limit: float | None
    permission_tool: bool
    permission_timeout: float
    scripted: Path | None


def mcp(
    *,
    url: Annotated[str | None, Parameter(env_var="UQ_URL")] = None,
    host: Annotated[str | None, Parameter(show=False)] = None,
    token: Annotated[str | None, Parameter(env_var="UQ_TOKEN")] = None,
    ca: str | None = None,
    session: str | None = None,
    http: bool = False,
    bind: str = "127.0.0.1",
    port: int = 8765,
    progress_interval: float | None = None,
    unreachable_limit: float | None = None,
    permission_tool: bool = False,
    permission_timeout: float = DECISION_TIMEOUT,
    scripted: Annotated[Path | None, Parameter(show=False)] = None,
) -> None:
    """Run an MCP server exposing ask_user_question, answered through a host or this terminal.

    Parameters
    ----------
    url
        URL of a running `uq serve` host that answers the questions, with an asker's token (the
        `export UQ_URL=...` line it prints); without it, the terminal. The host must answer at
        start.
    host
        Former name of --url.
    token
        The host's secret token, when the URL has none.
    ca
        A PEM file of the certificate authority that signed an https host's certificate,
        trusted besides the system's (and $SSL_CERT_FILE's).
    session
        Session name the host groups these questions under.
    http
        Serve streamable HTTP (at /mcp) instead of stdio.
    bind
        Address to listen on with --http; loopback unless you mean otherwise.
    port
        Port to listen on with --http.
    progress_interval
        Seconds between progress notifications while a question waits [default: 10].
    unreachable_limit
        Seconds a host that went away has to come back before the questions waiting on it
        fail [default: 300].
    permission_tool
        Also expose `approve`, Claude Code's permission prompt tool
        (`claude -p --permission-prompt-tool mcp__<server>__approve`). With --url, only an
        asker's token is accepted.
    permission_timeout
        Seconds each `approve` call may wait for a person; then it is denied, saying so.
    scripted
        Testing aid: answer from a JSON file {"answers": {id: answer}, "delay": seconds}.
    """
    if host is not None:
        print("uq mcp: --host is now --url; --host will go away", file=sys.stderr)
    if not 0 < permission_timeout < float("inf"):
        print(
            f"uq mcp: --permission-timeout must be a number of seconds above 0, got "
            f"{permission_timeout:g}",
            file=sys.stderr,
        )
        raise SystemExit(2)
    options = _Options(
        url or host,
        token,
        ca,
        session,
        http,
        bind,
        port,
        progress_interval,
        unreachable_limit,
        permission_tool,
        permission_timeout,
        scripted,
    )
    try:
        anyio.run(_run, options)
    except _Refused as refused:
        print(f"uq mcp: {refused}", file=sys.stderr)
        raise SystemExit(refused.status) from None


async def _run(options: _Options) -> None:
    try:
        from user_questions.bridges import claude_permission
        from user_questions.bridges.mcp import PROGRESS_INTERVAL, create_server
    except ImportError as error:
        raise _Refused(str(error)) from None
    sock = _listening(options.bind, options.port) if options.http else None
    async with _provider(options) as provider:
        ctx = Context()
        for plugin in (AgentRegistry, UserQuestionService, ToolRegistry, tool_ask_user):
            ctx.plugin(plugin)
        if options.permission_tool:
            timeout = options.permission_timeout
            ctx.plugin(claude_permission, claude_permission.Options(decision_timeout=timeout))
        ctx.user_questions.register_provider(provider)
        interval = options.progress_interval or PROGRESS_INTERVAL
        server = create_server(ctx, progress_interval=interval)
        if sock is not None:
            await _serve_http(server, sock, options.bind)
        else:
            await _serve_stdio(server)


@contextlib.asynccontextmanager
async def _provider(options: _Options) -> AsyncIterator[UserQuestionProvider]:
    if options.scripted is not None:
        yield _scripted(options.scripted)
        return
    if options.url is not None:
        from user_questions.providers.remote import (
            CONNECT_TIMEOUT,
            UNREACHABLE_LIMIT,
            RemoteProvider,
        )

        limit = (
            UNREACHABLE_LIMIT if options.unreachable_limit is None else options.unreachable_limit
        )
        try:
            remote = RemoteProvider(
                options.url,
                token=options.token,
                ca=options.ca,
                session=options.session,
                unreachable_limit=limit,
                connect_timeout=min(CONNECT_TIMEOUT, limit),
                require_asker=options.permission_tool,
            )
        except UserQuestionError as error:
            raise _Refused(str(error)) from None
        async with remote:
            try:
                await remote.connect()
            except UserQuestionError as error:
                answering = error.code == ErrorCode.FORBIDDEN  # a gate left to the CLI's prompt
                raise _Refused(str(error), 0 if answering else 1) from None
            yield remote
        return
    from user_questions.providers.terminal import TerminalProvider

    if options.http:
        yield TerminalProvider()
        return
    with _controlling_terminal() as (tty_in, tty_out):
        yield TerminalProvider(input=tty_in, output=tty_out)


def _scripted(path: Path) -> ScriptedProvider:
    try:
        document = load_json(path.read_text(encoding="utf-8"))
        answers, delay = document["answers"], float(document.get("delay", 0))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise _Refused(f"cannot read the script {str(path)!r}: {error}") from None
    return ScriptedProvider(answers, delay=delay)


@contextlib.contextmanager
def _controlling_terminal() -> Iterator[tuple[TextIO, TextIO]]:
    """The terminal, for reading and drawing, apart from the stdin and stdout of the protocol."""
    with contextlib.ExitStack() as stack:
        try:
            tty_in = stack.enter_context(open(TTY, encoding="utf-8", errors="replace"))
            tty_out = stack.enter_context(open(TTY, "w", encoding="utf-8"))
        except OSError as error:
            raise _Refused(
                f"no terminal to ask on ({error.strerror}); stdio carries the MCP protocol, so "
                "answer through a host with --url URL (as `uq serve` printed it)"
            ) from None
        yield tty_in, tty_out


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _listening(bind: str, port: int) -> socket.socket:
    """The socket `--http` serves on, bound before anything says it serves."""
    from user_questions.host.server import bind as bind_socket

    try:
        return bind_socket(bind, port)
    except OSError as error:
        raise _Refused(
            f"cannot listen on {bind}:{port} ({error.strerror or error}); choose another --port",
            1,
        ) from None


async def _serve_http(server: Any, sock: socket.socket, bind: str) -> None:
    import uvicorn

    app = server.streamable_http_app(host=bind)
    config = uvicorn.Config(app, log_level="warning")
    port = sock.getsockname()[1]
    print(f"uq mcp: serving MCP at http://{bind}:{port}/mcp", file=sys.stderr)
    await uvicorn.Server(config).serve(sockets=[sock])
