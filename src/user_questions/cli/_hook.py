"""`uq hook claude` and `uq hook codex`: an agent CLI's prompts asked in a host's inbox.

Extra `web` (for `RemoteProvider`). The CLI runs the hook with one event as JSON on stdin and no
terminal; `main` has already read it and left at once if it is not an event the hook asks about
(`_hook_stdin`). Here the event becomes questions (`bridges.claude_code`, `bridges.codex`), asked
through the host at `--url` (else `$UQ_URL`) in the CLI's session (`claude-code:<session_id>`), and
the answer becomes the hook's JSON output on stdout.

Failing never allows anything: no URL, a host that does not answer within `--connect-timeout`,
a refused token, a redirect, a token that can answer, an event that cannot be asked, no answer
within `--timeout` (which bounds every phase, the quick path's request and the connection
included), or any other error prints nothing on stdout (one line on stderr says why) and exits
0, so the CLI shows its own prompt (docs/security.md, "Fail closed"). The hook gates
permissions, so it asks only with an asker's token, which can never answer: with any other, an
agent that found the token could approve its own request. The host says the token's role in the
handshake, and the hook refuses any other before asking (`RemoteProvider(require_asker=True)`),
at no cost to its start-up. SIGTERM, SIGINT or SIGHUP (the CLI stopping its hook: at the hook's
timeout, or when its session ends) withdraw the question from every page before the hook exits.

This module is the command line (cyclopts); the run itself is `_hook_run`, which `main` calls
directly, without building the command line, when the options are the plain ones a settings file
holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

from cyclopts import App, Parameter

from user_questions.cli._hook_options import CLIENT_NAMES, CONNECT_TIMEOUT, HookOptions
from user_questions.cli._hook_run import run

if TYPE_CHECKING:
    from user_questions._hooks.events import Client

__all__ = ["hook_app"]

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
    name = CLIENT_NAMES[client]

    def command(
        *,
        url: Url = None,
        token: Token = None,
        ca: str | None = None,
        timeout: float | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        run(client, HookOptions(url, token, ca, timeout, connect_timeout))

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
        Seconds the whole hook may take (asking the host's rules, connecting, waiting for an
        answer); then the question is withdrawn and {name} asks in its own terminal. Set it
        under the hook's timeout in the settings (`uq hook install` does).
    connect_timeout
        Seconds the host has to answer (the rules' one request, then the connection) before
        {name} is left to ask in its own terminal.
    """
    return command


hook_app.command(_hook_command("claude", "PreToolUse and PermissionRequest"), name="claude")
hook_app.command(_hook_command("codex", "PermissionRequest and PreToolUse"), name="codex")
