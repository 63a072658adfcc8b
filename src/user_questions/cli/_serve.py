"""`uq serve`: run the host, the web page where people answer the questions agents ask.

Level 10. Prints one line on stdout, the URL with the token, once the host serves; errors are one
line on stderr. Exit statuses: 0 stopped (Ctrl-C, SIGTERM), 1 could not start (store in use,
address busy), 2 bad input (a token or store that cannot be used).
"""

from __future__ import annotations

import sys
from typing import Annotated

from cyclopts import Parameter

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.server import serve as run_host
from user_questions.host.stores import default_store_path

__all__ = ["fail", "serve"]

_BAD_INPUT = frozenset({ErrorCode.BAD_TOKEN, ErrorCode.BAD_STORE})


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    db: Annotated[str | None, Parameter(env_var="UQ_DB")] = None,
    token: Annotated[str | None, Parameter(env_var="UQ_TOKEN")] = None,
) -> None:
    """Run the host: a web page where people answer the questions agents ask.

    Parameters
    ----------
    host
        Address to listen on. Loopback by default; any other address is reachable from other
        machines (a warning says so).
    port
        Port to listen on; 0 picks a free one (the printed URL has it).
    db
        The store: a SQLite file, or a store URL. Default: host.db in
        $XDG_STATE_HOME/user-questions (~/.local/state/user-questions).
    token
        The secret every browser and asker must present; kept in the store. Default: the stored
        one, or a new random one.
    """
    store = db or str(default_store_path())
    try:
        run_host(store, host=host, port=port, token=token)
    except UserQuestionError as error:
        fail("serve", error.message, 2 if error.code in _BAD_INPUT else 1)


def fail(command: str, message: str, status: int) -> None:
    """Print `uq <command>: <message>` on stderr and exit with `status`."""
    print(f"uq {command}: {message}", file=sys.stderr)
    raise SystemExit(status)
