"""`uq mcp`: an MCP server whose `ask_user_question` tool is answered by a host or a terminal.

Level 10, extra `mcp` (and `terminal` or `web` for the provider). The server speaks stdio by
default, streamable HTTP with `--http`. With stdio the protocol owns stdin and stdout (and the
client usually collects stderr as a log), so the terminal provider reads and draws on the
controlling terminal, `/dev/tty`; with `--http` it uses the process's stdin and stderr.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any, TextIO

import anyio
from cyclopts import Parameter

from user_questions import tool_ask_user
from user_questions.agents import AgentRegistry
from user_questions.errors import UserQuestionError
from user_questions.kernel import Context
from user_questions.providers.scripted import ScriptedProvider
from user_questions.service import UserQuestionProvider, UserQuestionService
from user_questions.tools import ToolRegistry

__all__ = ["mcp"]

TTY = "/dev/tty"


class _Refused(Exception):
    """`uq mcp` cannot start; the message says why and what to do."""


def mcp(
    *,
    host: str | None = None,
    token: Annotated[str | None, Parameter(env_var="UQ_TOKEN")] = None,
    session: str | None = None,
    http: bool = False,
    bind: str = "127.0.0.1",
    port: int = 8765,
    progress_interval: float | None = None,
    scripted: Annotated[Path | None, Parameter(show=False)] = None,
) -> None:
    """Run an MCP server exposing ask_user_question, answered through a host or this terminal.

    Parameters
    ----------
    host
        URL of a running `uq serve` host that answers the questions; without it, the terminal.
    token
        The host's secret token.
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
    scripted
        Testing aid: answer from a JSON file {"answers": {id: answer}, "delay": seconds}.
    """
    try:
        anyio.run(_run, host, token, session, http, bind, port, progress_interval, scripted)
    except _Refused as refused:
        print(f"uq mcp: {refused}", file=sys.stderr)
        raise SystemExit(2) from None


async def _run(
    host: str | None,
    token: str | None,
    session: str | None,
    http: bool,
    bind: str,
    port: int,
    progress_interval: float | None,
    scripted: Path | None,
) -> None:
    try:
        from user_questions.bridges.mcp import PROGRESS_INTERVAL, create_server
    except ImportError as error:
        raise _Refused(str(error)) from None
    async with _provider(host, token, session, scripted, http) as provider:
        ctx = Context()
        for plugin in (AgentRegistry, UserQuestionService, ToolRegistry, tool_ask_user):
            ctx.plugin(plugin)
        ctx.user_questions.register_provider(provider)
        server = create_server(ctx, progress_interval=progress_interval or PROGRESS_INTERVAL)
        if http:
            await _serve_http(server, bind, port)
        else:
            await _serve_stdio(server)


@contextlib.asynccontextmanager
async def _provider(
    host: str | None, token: str | None, session: str | None, scripted: Path | None, http: bool
) -> AsyncIterator[UserQuestionProvider]:
    if scripted is not None:
        yield _scripted(scripted)
        return
    if host is not None:
        from user_questions.providers.remote import RemoteProvider

        try:
            remote = RemoteProvider(host, token=token, session=session)
        except UserQuestionError as error:
            raise _Refused(str(error)) from None
        async with remote:
            yield remote
        return
    from user_questions.providers.terminal import TerminalProvider

    if http:
        yield TerminalProvider()
        return
    with _controlling_terminal() as (tty_in, tty_out):
        yield TerminalProvider(input=tty_in, output=tty_out)


def _scripted(path: Path) -> ScriptedProvider:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
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
                "answer through a host with --host URL --token T"
            ) from None
        yield tty_in, tty_out


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def _serve_http(server: Any, bind: str, port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host=bind)
    config = uvicorn.Config(app, host=bind, port=port, log_level="warning")
    print(f"uq mcp: serving MCP at http://{bind}:{port}/mcp", file=sys.stderr)
    await uvicorn.Server(config).serve()
