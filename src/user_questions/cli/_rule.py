"""`uq rule add | list | revoke | check`: decisions about agents' tool calls that a host applies
itself, and which of them decides a call.

Each command opens the host's store beside the running host (`_beside`), as `uq token` does; a
change decides every call any host on the store is asked once the command has returned (the
store's rules version, checked as each decision is committed: `host/rules/cache.py`).
`host/rules` says what a rule matches. A rule made here is the store's owner's act, as `uq token`
is: it may be for any asker and any tool, and records who made it as `cli:<the OS user>`
(whoever may write the store's file, not a token's person). Exit statuses: 0 done, 1 the store
cannot be reached, 2 bad input (a rule that cannot be kept, no such rule, an unusable store).
"""

from __future__ import annotations

import getpass
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from cyclopts import App, Parameter

from user_questions.cli._beside import local_time, print_columns, with_store
from user_questions.cli._serve import fail
from user_questions.cli._store_option import OldDb, StoreOption, chosen_store
from user_questions.errors import UserQuestionError
from user_questions.frames import Approval
from user_questions.host.rules import (
    Verdict,
    explain,
    new_rule,
    revoke_rule,
    rule_json,
    rule_text,
)
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
    approvals: str | None = None,
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
        Shell tools only: a prefix of whole words ('git status' matches 'git status -s'). An
        allow matches only plain commands (words, no $ expansion, redirection, subshell, ...);
        a deny is looked for in everything a command may run.
    path
        File tools only (Read, Write, Edit, apply_patch, ...): a glob of the path, absolute
        ('/home/dev/shop/**') or starting with ~ ('~/notes/**').
    domain
        Web tools only (WebFetch): the URL's host as a browser reads it ('example.com';
        '*.example.com' for its subdomains too).
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
    approvals
        With --allow: a matching call is not allowed outright but needs this many people's
        approvals (2 to 10; default 1, allowed by the rule alone).
    """
    if allow == deny:
        print("uq rule: give exactly one of --allow and --deny", file=sys.stderr)
        raise SystemExit(2)
    decision = Decision.ALLOW if allow else Decision.DENY
    try:
        rule = new_rule(
            tool,
            decision,
            command=command,
            path=path,
            domain=domain,
            asker=asker,
            cwd=cwd,
            expires=expires,
            created_by=_maker(),
            approvals=approvals,
        )
    except UserQuestionError as error:
        fail("rule", error.message, 2)

    async def work(store: Store) -> RuleRecord:
        return await store.add_rule(rule)

    made = with_store("rule", chosen_store("rule", store, db), work)
    print(made.id)
    print(
        f"rule {made.id}: {rule_text(made.rule)}; it decides every call asked from now on",
        file=sys.stderr,
    )


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
    print(f"revoked rule {rule_id}; it decides no call asked from now on", file=sys.stderr)


@rule_app.command(name="check")
def check(
    *,
    tool: str,
    command: str | None = None,
    path: str | None = None,
    url: str | None = None,
    patch: str | None = None,
    input_: Annotated[str | None, Parameter(name="--input")] = None,
    cwd: str | None = None,
    asker: str | None = None,
    store: StoreOption = None,
    db: OldDb = None,
    json_: Annotated[bool, Parameter(name="--json", negative="")] = False,
) -> None:
    """Say which rule decides a call, or why none can (a person is then asked).

    Parameters
    ----------
    tool
        The tool's name as the agent calls it: Bash, Read, WebFetch, apply_patch, ...
    command
        A shell tool's command.
    path
        A file tool's path (its file_path).
    url
        A web tool's URL.
    patch
        apply_patch: the file holding the patch ('-': standard input).
    input_
        Any tool's arguments as a JSON object, instead of the above.
    cwd
        The folder the agent runs in.
    asker
        The name of the token that would ask.
    json_
        One JSON object: {"decision": "allow" | "deny" | "ask", "rule"?: ..., "reason": ...}.
    """
    arguments = _arguments(command, path, url, patch, input_)
    try:
        approval = Approval(tool=tool, input=arguments, cwd=cwd)
    except ValueError as error:
        fail("rule", f"this call cannot be checked: {error}", 2)

    async def work(store: Store) -> Verdict:
        return explain(await store.rules(), approval, asker, datetime.now(UTC))

    verdict = with_store("rule", chosen_store("rule", store, db), work)
    found = verdict.match
    if json_:
        shown: dict[str, Any] = {"decision": "ask", "reason": verdict.reason}
        if found is not None:
            shown["decision"] = str(found.rule.rule.decision)
            shown["rule"] = rule_json(found.rule)
        print(json.dumps(shown, ensure_ascii=False))
    elif found is None:
        print(f"no rule decides it, a person is asked: {verdict.reason}")
    else:
        print(verdict.reason)


def _arguments(
    command: str | None,
    path: str | None,
    url: str | None,
    patch: str | None,
    given: str | None,
) -> dict[str, Any]:
    """The call's arguments from the one of `uq rule check`'s flags that gives them."""
    named = {"--command": command, "--path": path, "--url": url, "--patch": patch, "--input": given}
    used = [flag for flag, value in named.items() if value is not None]
    if len(used) > 1:
        fail("rule", f"give one of --command, --path, --url, --patch, --input, not {used}", 2)
    if command is not None:
        return {"command": command}
    if path is not None:
        return {"file_path": path}
    if url is not None:
        return {"url": url}
    if patch is not None:
        try:
            text = sys.stdin.read() if patch == "-" else Path(patch).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            fail("rule", f"cannot read the patch {patch}: {error}", 2)
        return {"command": text}
    if given is not None:
        try:
            value = json.loads(given)
        except ValueError as error:
            fail("rule", f"--input is not JSON: {error}", 2)
        if not isinstance(value, dict):
            fail("rule", "--input must be a JSON object of the call's arguments", 2)
        return value
    return {}
