"""`uq token add | list | revoke`: the named tokens of the people who use a host.

Each command opens the host's store beside the running host (`_beside`); a host hears of the change
at once (SQLite: within `WATCH_INTERVAL`; PostgreSQL: a NOTIFY), so a new token opens the page
straight away and a revoked one is refused, its open connections closed. Exit statuses: 0 done, 1
the store cannot be reached, 2 bad input (a bad or taken name, no such token, an unusable store).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

from cyclopts import App, Parameter

from user_questions.cli._beside import DB_HELP, local_time, with_store
from user_questions.frames import iso
from user_questions.host.gate.people import add_person, revoke_person
from user_questions.host.stores import Store, TokenRecord

__all__ = ["token_app"]

token_app = App(
    name="token",
    help="Named tokens: one per person, recorded with every answer they give.",
)

Db = Annotated[str | None, Parameter(env_var="UQ_DB", help=DB_HELP)]


@token_app.command(name="add")
def add(name: str, *, db: Db = None, url: str = "http://127.0.0.1:8765/") -> None:
    """Make a token for NAME; print it (shown this once) and the page's URL with it.

    Parameters
    ----------
    name
        Who the token is for: 1 to 64 characters from A-Z a-z 0-9 . _ -.
    url
        The host's address, to print the page's URL with the token.
    """

    async def work(store: Store) -> str:
        return await add_person(store, name)

    token = with_store("token", db, work)
    print(token)
    print(f"{url.rstrip('/')}/?token={token}")
    print(
        f"{name}'s token is shown this once: the store keeps only its hash. Running hosts "
        "accept it now.",
        file=sys.stderr,
    )


@token_app.command(name="list")
def list_tokens(
    *,
    db: Db = None,
    json_: Annotated[bool, Parameter(name="--json", negative="")] = False,
) -> None:
    """List the named tokens: name, created, last used, revoked (never the tokens themselves).

    Parameters
    ----------
    json_
        One JSON object per token and line, for scripts.
    """

    async def work(store: Store) -> list[TokenRecord]:
        return await store.tokens()

    tokens = with_store("token", db, work)
    if json_:
        for token in tokens:
            print(json.dumps(_json_of(token), ensure_ascii=False))
        return
    if not tokens:
        print("no named tokens yet; add one with `uq token add NAME`", file=sys.stderr)
        return
    rows = [("NAME", "CREATED", "LAST USED", "REVOKED")]
    rows += [
        (t.name, local_time(t.created_at), local_time(t.last_used_at), local_time(t.revoked_at))
        for t in tokens
    ]
    width = max(len(row[0]) for row in rows)
    for name, *times in rows:
        print(f"{name:<{width}}  " + "  ".join(f"{time:<16}" for time in times).rstrip())


@token_app.command(name="revoke")
def revoke(name: str, *, db: Db = None) -> None:
    """Revoke NAME's token: running hosts refuse it at once and close its connections.

    Parameters
    ----------
    name
        Whose token to revoke.
    """

    async def work(store: Store) -> TokenRecord:
        return await revoke_person(store, name)

    with_store("token", db, work)
    print(f"revoked {name}'s token; hosts refuse it from now on", file=sys.stderr)


def _json_of(token: TokenRecord) -> dict[str, str]:
    """A token as JSON for scripts: camelCase, times ISO 8601 UTC, absent when not set."""
    times = {
        "createdAt": token.created_at,
        "lastUsedAt": token.last_used_at,
        "revokedAt": token.revoked_at,
    }
    return {"name": token.name} | {key: iso(at) for key, at in times.items() if at is not None}
