"""The `uq` command: one cyclopts app whose commands are loaded only when run.

Level 10. Each command lives in its own private module, imported lazily, so `uq --version` starts
fast and a command that needs an extra fails with the line that installs it.
"""

from __future__ import annotations

import sys

from user_questions._version import __version__

__all__ = ["app", "main"]

try:
    from cyclopts import App
except ImportError:  # pragma: no cover - exercised by hand on a core-only install
    App = None  # type: ignore[assignment,misc]

if App is not None:
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
        "user_questions.cli._mcp:mcp",
        name="mcp",
        help="Run an MCP server exposing ask_user_question, answered by a host or this terminal.",
    )


def main() -> None:
    """Entry point of the `uq` console script."""
    if App is None:
        print("uq needs its command-line extra: pip install 'user-questions[cli]'", file=sys.stderr)
        raise SystemExit(2)
    try:
        app()
    except BrokenPipeError:  # `uq schema | head`: the reader left, which is not our failure
        sys.stderr.close()
        raise SystemExit(0) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
