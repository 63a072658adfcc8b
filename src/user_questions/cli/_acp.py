"""`uq acp -- AGENT...`: run an ACP agent for an editor, with its questions in the inbox too.

Extras `acp` and `web`. The editor starts `uq acp -- AGENT ARGS...` where it would start the agent:
the proxy starts the agent with the same environment and working directory, relays the protocol on
stdio unchanged (`_acp_proxy`), and shows the agent's permission requests and forms in the inbox
(`--url` / `$UQ_URL`) as well; the first answer wins. The agent's stderr is the proxy's. The exit
status is the agent's (128+N when a signal N stopped it); 2 for bad input (no agent command, a URL
that is not http(s), no token, an agent that cannot be started), 128+N when SIGTERM or SIGHUP
stopped the proxy, which then stops the agent.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import Annotated

import anyio
from cyclopts import Parameter

from user_questions.cli._host_client import CA_HELP, URL_HELP, HostAddress, host_address
from user_questions.cli._pending import TOKEN_HELP
from user_questions.cli._serve import fail
from user_questions.cli._stopping import StoppedError, until_stopped
from user_questions.errors import UserQuestionError

__all__ = ["acp"]


def acp(
    *command: Annotated[str, Parameter(allow_leading_hyphen=True)],
    url: Annotated[str | None, Parameter(env_var="UQ_URL", help=URL_HELP)] = None,
    token: Annotated[str | None, Parameter(help=TOKEN_HELP)] = None,
    ca: Annotated[str | None, Parameter(help=CA_HELP)] = None,
    session: str | None = None,
) -> None:
    """Run an ACP agent for an editor; its permission requests and forms also go to the inbox.

    Parameters
    ----------
    command
        The agent's command and arguments, after `--`.
    session
        Session name the inbox groups the questions under [default: AGENT@HOSTNAME].
    """
    if not command:
        fail("acp", "name the agent to run after --, as in: uq acp -- AGENT [ARGS...]", 2)
    try:
        import user_questions.cli._acp_proxy  # noqa: F401 - needs the ACP SDK
    except ImportError:
        fail("acp", "uq acp needs the ACP SDK: pip install 'user-questions[acp]'", 2)
    try:
        address = host_address(url, token, ca)
    except UserQuestionError as error:
        fail("acp", error.message, 2)
    name = session or f"{Path(command[0]).name}@{socket.gethostname()}"
    try:
        status = anyio.run(until_stopped, lambda: _run(list(command), address, name))
    except StoppedError as stopped:
        raise SystemExit(128 + stopped.signum) from None
    except _CannotStart as error:
        fail("acp", str(error), 2)
    raise SystemExit(status if status >= 0 else 128 - status)


class _CannotStart(Exception):
    """The agent's command could not be run; the message says why."""


async def _run(command: list[str], address: HostAddress, session: str) -> int:
    from acp import stdio_streams
    from acp.transports import spawn_stdio_transport

    from user_questions.cli._acp_proxy import MAX_LINE_BYTES, HostInbox, relay
    from user_questions.frames import Origin

    spawning = spawn_stdio_transport(
        command[0], *command[1:], env=dict(os.environ), stderr=None, limit=MAX_LINE_BYTES
    )
    stack = contextlib.AsyncExitStack()
    try:
        agent_out, agent_in, process = await stack.enter_async_context(spawning)
    except OSError as error:
        reason = error.strerror or str(error)
        raise _CannotStart(f"cannot start the agent {command[0]!r}: {reason}") from None
    try:
        editor = await stdio_streams(limit=MAX_LINE_BYTES)
        origin = Origin(client=f"{Path(command[0]).name} (ACP)", cwd=os.getcwd())
        await relay(HostInbox(address, session, origin), editor, (agent_out, agent_in))
    finally:
        # Stopping the agent (its stdin closed, then SIGTERM, then SIGKILL) must finish even
        # when a stop signal cancelled the relay.
        with anyio.CancelScope(shield=True):
            await stack.aclose()
    return process.returncode if process.returncode is not None else 0
