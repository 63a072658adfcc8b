"""The `uq` command: one cyclopts app whose commands are loaded only when run.

Each command lives in its own private module, imported lazily, so `uq --version` starts fast and a
command that needs an extra fails with the line that installs it. `uq hook claude` and `uq hook
codex` run on every tool call of an agent CLI, so `main` looks at their event before the app is even
built (`_hook_stdin`): an event the hook does not answer ends there, in milliseconds. `uq --version`
is answered before anything else is imported (not even `typing`): scripts call it to check what is
installed, and it should cost no more than starting Python.
"""

from __future__ import annotations

import sys

from user_questions._version import __version__

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from cyclopts import App

    from user_questions._hooks.events import Client
    from user_questions.cli._hook_options import HookOptions

    app: App

__all__ = ["app", "main"]

_MISSING_CLI = "uq needs its command-line extra: pip install 'user-questions[cli]'"


def __getattr__(name: str) -> Any:
    if name != "app":
        raise AttributeError(f"module 'user_questions.cli' has no attribute {name!r}")
    return _app()


def _app() -> App:
    """The app, built on first use."""
    built: App | None = globals().get("app")
    if built is None:
        built = globals()["app"] = _build_app()
    return built


def _build_app() -> App:
    from cyclopts import App

    app = App(
        name="uq",
        version=__version__,
        help="Ask a human structured questions, and answer them: in a terminal or a web page.",
    )
    app.command(
        "user_questions.cli._ask:ask",
        name="ask",
        help="Ask a person a question at this terminal and print the answer.\n\n"
        "Exit status: 0 answered, 2 bad input, 3 dismissed, 4 timed out, 130 interrupted.",
    )
    app.command(
        "user_questions.cli._serve:serve",
        name="serve",
        help="Run the host: a web page where people answer the questions agents ask.",
    )
    app.command(
        "user_questions.cli._token:token_app",
        name="token",
        help="Named tokens: one per person, recorded with every answer they give.",
    )
    app.command(
        "user_questions.cli._rule:rule_app",
        name="rule",
        help="Rules: decisions about agents' tool calls, remembered so nobody is asked again.",
    )
    app.command(
        "user_questions.cli._chat:chat_app",
        name="chat",
        help="Pair people's Telegram or Slack users with the host, to answer there.",
    )
    app.command(
        "user_questions.cli._backup:backup",
        name="backup",
        help="Copy a host's SQLite store to a new file, while the host runs.",
    )
    app.command(
        "user_questions.cli._audit:audit_app",
        name="audit",
        help="The audit log: every settlement, hash-chained and signed; check it, export it, "
        "sign it.",
    )
    app.command(
        "user_questions.cli._history:history",
        name="history",
        help="Print settled questions, newest first, with their answers and who gave them.",
    )
    app.command(
        "user_questions.cli._pending:pending",
        name="pending",
        help="List the questions waiting on a host, oldest first.",
    )
    app.command(
        "user_questions.cli._answer:answer",
        name="answer",
        help="Answer a question waiting on a host, here, with the keys of `uq ask`.\n\n"
        "Exit status: 0 answered, 2 bad input, 3 dismissed, 4 nothing to answer, "
        "5 not pending (settled elsewhere), 6 answer refused, 130 interrupted.",
    )
    app.command(
        "user_questions.cli._demo:demo",
        name="demo",
        help="Run a host on a temporary store, with a demo agent asking through it.",
    )
    app.command(
        "user_questions.cli._schema:schema",
        name="schema",
        help="Print the JSON Schema of the wire vocabulary and of the model-facing tools.",
    )
    app.command(
        "user_questions.cli._acp:acp",
        name="acp",
        help="Run an ACP agent for an editor, with its questions in the inbox too: "
        "uq acp -- AGENT [ARGS...].\n\n"
        "Exit status: the agent's; 2 bad input or an agent that cannot be started.",
    )
    app.command(
        "user_questions.cli._a2a:a2a_app",
        name="a2a",
        help="Answer A2A agents' questions from the inbox: uq a2a watch AGENT_URL --task ID.",
    )
    app.command(
        "user_questions.cli._mcp:mcp",
        name="mcp",
        help="Run an MCP server exposing ask_user_question, answered by a host or this terminal.",
    )
    app.command(
        "user_questions.cli._hook:hook_app",
        name="hook",
        help="Answer an agent CLI's questions and permission prompts through a host's inbox.",
    )
    return app


def main() -> None:
    """Entry point of the `uq` console script."""
    client = None
    cli: Callable[[], object] = _print_version
    if sys.argv[1:] != ["--version"]:  # which the app answers the same, once it is built
        from user_questions.cli._hook_stdin import hook_run_client, is_answered

        client = hook_run_client(sys.argv[1:])
        if client is not None:
            if not is_answered(client):  # the CLI goes on as without the hook
                _give_kept_note(client)
                return
            from user_questions.cli._hook_options import fast_options

            options = fast_options(sys.argv[1:])
            if options is not None:  # the plain options a settings file holds
                _hook(client, options)
                return
        try:
            cli = _app()
        except ImportError:
            print(_MISSING_CLI, file=sys.stderr)
            raise SystemExit(2) from None
    try:
        cli()
    except SystemExit as exit_:
        if client is not None and exit_.code == 2:
            # To Claude Code and Codex, status 2 denies the call: a hook command that cannot
            # run (a mistyped option) must leave the decision to the CLI instead.
            raise SystemExit(1) from None
        raise
    except BrokenPipeError:  # `uq schema | head`: the reader left, which is not our failure
        sys.stderr.close()
        raise SystemExit(0) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None


def _give_kept_note(client: Client) -> None:
    """Print the `PostToolUse` output that gives the model a note kept for the call that has
    just run, if there is one (`_hook_stdin.note_for_the_model`)."""
    from user_questions.cli._hook_stdin import note_for_the_model

    output = note_for_the_model(client)
    if output is not None:
        import json

        print(json.dumps(output, ensure_ascii=False), flush=True)


def _hook(client: Client, options: HookOptions) -> None:
    """Run the hook: its quick path first (a call a rule decides: one HTTP request, nothing
    else loaded), then, when a person is to be asked, the full one."""
    import json

    from user_questions.cli._hook_rule import rule_output
    from user_questions.cli._hook_stdin import event_text

    output = rule_output(client, options, event_text())
    if output is not None:  # a rule decided; an empty output says nothing (the CLI goes on)
        if output:
            print(json.dumps(output, ensure_ascii=False), flush=True)
        return
    from user_questions.cli._hook_run import run

    run(client, options)


def _print_version() -> None:
    print(__version__, flush=True)
