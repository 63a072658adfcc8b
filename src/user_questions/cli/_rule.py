"""`uq rule add | list | revoke`: decisions about agents' tool calls that a host applies itself.

Each command opens the host's store beside the running host (`_beside`), as `uq token` does; every
host on the store applies the change at once (SQLite: within `WATCH_INTERVAL`; PostgreSQL: a
NOTIFY). `host/rules.py` says what a rule matches. A rule made here records who made it as
`cli:<the OS user>`: whoever may write the store's file, not a token's person. Exit statuses: 0
done, 1 the store cannot be reached, 2 bad input (a rule that cannot be kept, no such rule, an
unusable store).
"""

from __future__ import annotations

import getpass
import json
import sys
from typing import Annotated

from cyclopts import App, Parameter

from user_questions.cli._beside import local_time, print_columns, with_store
from user_questions.cli._store_option import OldDb, StoreOption, chosen_store
from user_questions.host.rules import add_rule, revoke_rule, rule_json, rule_text
from user_questions.host.stores import Decision, RuleRecord, Store

__all__ = ["rule_app"]

rule_app = App(
    name="rule",
    help="Rules: decisions about agents' tool calls, remembered so nobody is asked again.",
)

_Flag = Annotated[bool, Parameter(negative="")]


def _maker() -> str:
    """Who makes a rule from the command line, as the rule records it: `cli:alice`."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name and no entry in the password database
        user = "unknown"
    return f"cli:{user}"


@rule_app.command(name="add")
def add(
    *,
    tool: str,
    command: str | None = None,
    path: str | None = None,
    domain: str | None = None,
    allow: _Flag = False,
    deny: _Flag = False,
    asker: str | None = None,
    cwd: str | None = None,
    expires: str | None = None,
    store: StoreOption = None,
    db: OldDb = None,
) -> None:
    """Make a rule: calls it matches are allowed (or denied) by the host, nobody asked.

    Parameters
    ----------
    tool
        The tool's name as the agent calls it: Bash, Read, WebFetch, mcp__github__create_pr;
        '*' (with --deny only) for every tool.
    command
        Shell tools: a prefix of whole words ('git status' matches 'git status -s'). A command
        holding ; & | $( ` < > or a newline never matches an allow rule.
    path
        File tools: an absolute glob of the resolved path ('/home/dev/shop/**').
    domain
        Web tools: the URL's host ('example.com'; '*.example.com' for its subdomains too).
    allow
        Allow what it matches.
    deny
        Deny what it matches (a deny beats any allow).
    asker
        Only calls asked with this asker's token (its name).
    cwd
        Only calls in this folder or below it.
    expires
        Stop matching after this long: 30s, 10m, 2h, 7d.
    """
    if allow == deny:
        print("uq rule: give exactly one of --allow and --deny", file=sys.stderr)
        raise SystemExit(2)
    decision = Decision.ALLOW if allow else Decision.DENY

    async def work(store: Store) -> RuleRecord:
        return await add_rule(
            store,
            tool,
            decision,
            command=command,
            path=path,
            domain=domain,
            asker=asker,
            cwd=cwd,
            expires=expires,
            created_by=_maker(),
        )

    made = with_store("rule", chosen_store("rule", store, db), work)
    print(made.id)
    print(f"rule {made.id}: {rule_text(made.rule)}; running hosts apply it now", file=sys.stderr)


@rule_app.command(name="list")
def list_rules(
    *,
    store: StoreOption = None,
    db: OldDb = None,
    json_: Annotated[bool, Parameter(name="--json", negative="")] = False,
) -> None:
    """List the rules: id, what each decides, who made it, hits, last used, expiry, revocation.

    Parameters
    ----------
    json_
        One JSON object per rule and line, for scripts.
    """

    async def work(store: Store) -> list[RuleRecord]:
        return await store.rules()

    rules = with_store("rule", chosen_store("rule", store, db), work)
    if json_:
        for rule in rules:
            print(json.dumps(rule_json(rule), ensure_ascii=False))
        return
    if not rules:
        print("no rules yet; add one with `uq rule add --tool NAME --allow ...`", file=sys.stderr)
        return
    rows = [("ID", "RULE", "MADE BY", "HITS", "LAST USED", "EXPIRES", "REVOKED")]
    rows += [
        (
            str(r.id),
            rule_text(r.rule),
            r.rule.created_by or "-",
            str(r.hits),
            local_time(r.last_used_at),
            local_time(r.rule.expires_at),
            local_time(r.revoked_at),
        )
        for r in rules
    ]
    print_columns(rows, 3)


@rule_app.command(name="revoke")
def revoke(rule_id: int, /, *, store: StoreOption = None, db: OldDb = None) -> None:
    """Revoke rule ID: running hosts stop applying it at once.

    Parameters
    ----------
    rule_id
        The rule's id, as `uq rule list` shows it.
    """

    async def work(store: Store) -> RuleRecord:
        return await revoke_rule(store, rule_id)

    with_store("rule", chosen_store("rule", store, db), work)
    print(f"revoked rule {rule_id}; hosts no longer apply it", file=sys.stderr)
