"""Making rules: what a rule may hold, how it is kept (`check_rule`), made and revoked, and how
it reads in words on every surface (`rule_text`, `rule_fields`, `rule_json`).

A rule names one tool (or `*`, every tool, to deny) and matches the field that tool's kind
has (`calls.FIELDS`): a shell tool's `command` (one simple command of plain words, kept as
`shlex` writes them), a file tool's `path` (a glob starting with `/` or `~`), a web tool's
`domain` (a host as a browser reads it, `*.` for its subdomains too), or none of them (every
call of the tool). It may be narrowed to one asker and to a folder (absolute).
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from datetime import UTC, datetime
from typing import TypedDict, Unpack

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import iso
from user_questions.host.gate.durations import parse_duration
from user_questions.host.gate.quorum import parse_approvals
from user_questions.host.rules.calls import FIELDS, Kind, tool_kind
from user_questions.host.rules.paths import PathError, check_pattern
from user_questions.host.rules.shell import read_script
from user_questions.host.rules.urls import UrlError, read_host
from user_questions.host.stores import Decision, Rule, RuleRecord, RuleStore

__all__ = [
    "ANY_TOOL",
    "MAX_TEXT",
    "RuleFields",
    "add_rule",
    "check_rule",
    "new_rule",
    "revoke_rule",
    "rule_fields",
    "rule_json",
    "rule_text",
]

ANY_TOOL = "*"
"""The `tool` of a rule that names every tool (deny only)."""
MAX_TEXT = 4096
"""Characters of each of a rule's texts."""
_ARTICLE = {Kind.SHELL: "a shell tool", Kind.FILE: "a file tool", Kind.WEB: "a web tool"}


def check_rule(rule: Rule) -> Rule:
    """`rule` if it can be kept and matched, with its command, path or domain written as the
    host compares it (a command's words as `shlex` writes them, a domain in ASCII).

    Raises:
        UserQuestionError: `BAD_REQUEST` saying what is wrong: no tool, more than one of
            `command`, `path` and `domain`, `*` allowing, a path or folder that is not
            absolute, a command that is not one simple command of plain words, a domain that
            is not a host, a field the tool's kind does not match, a text too long or holding
            a NUL.
    """
    for name in ("tool", "command", "path", "domain", "asker", "cwd"):
        value = getattr(rule, name)
        if value is not None and (not value.strip() or len(value) > MAX_TEXT or "\x00" in value):
            raise _bad(f"{name} must be 1 to {MAX_TEXT} characters of text, without a NUL")
    given = [name for name in ("command", "path", "domain") if getattr(rule, name) is not None]
    if len(given) > 1:
        raise _bad(f"a rule matches one of command, path or domain, not {' and '.join(given)}")
    if rule.tool == ANY_TOOL and rule.decision is Decision.ALLOW:
        raise _bad("a rule for every tool (*) can only deny")
    if rule.cwd is not None and not rule.cwd.startswith("/"):
        raise _bad(f"cwd must be an absolute path, got {rule.cwd!r}")
    if rule.path is not None:
        try:
            check_pattern(rule.path)
        except PathError as error:
            raise _bad(str(error)) from error
    checked = rule
    if rule.command is not None:
        checked = replace(rule, command=_plain_words(rule.command))
    if rule.domain is not None:
        checked = replace(rule, domain=_domain(rule.domain))
    if given and rule.tool != ANY_TOOL:
        _check_kind(rule.tool, given[0])
    return checked


def _plain_words(command: str) -> str:
    reading = read_script(command)
    if reading.problem is not None or len(reading.commands) != 1:
        why = "several commands" if reading.problem is None else str(reading.problem)
        raise _bad(f"command must be plain words (one simple command), got {command!r}: {why}")
    return shlex.join(reading.commands[0])


def _domain(domain: str) -> str:
    wildcard = domain.startswith("*.")
    try:
        host = read_host(domain[2:] if wildcard else domain)
    except UrlError as error:
        raise _bad(
            f"domain must be a host such as example.com or *.example.com, got {domain!r}: {error}"
        ) from error
    return f"*.{host}" if wildcard else host


def _check_kind(tool: str, field: str) -> None:
    kind = tool_kind(tool)
    if kind is Kind.OTHER:
        raise _bad(
            f"{tool} is not a shell, file or web tool: its rules match it by name alone, "
            f"not by {field} (--{field})"
        )
    wanted = FIELDS[kind]
    if field != wanted:
        raise _bad(
            f"{tool} is {_ARTICLE[kind]}: its rules match a {wanted} (--{wanted}), "
            f"not a {field} (--{field})"
        )


class RuleFields(TypedDict, total=False):
    """What a rule may be made with besides its tool and decision (`Rule` says what each is;
    `expires` is a duration from now, `7d`)."""

    command: str | None
    path: str | None
    domain: str | None
    asker: str | None
    cwd: str | None
    expires: str | None
    created_by: str | None
    approvals: str | int | None


async def add_rule(
    store: RuleStore, tool: str, decision: Decision, **fields: Unpack[RuleFields]
) -> RuleRecord:
    """Check and store a new rule (`new_rule`); it decides every call any host is asked once
    this returns.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a rule that cannot be kept (`check_rule`) or a bad
            duration.
    """
    return await store.add_rule(new_rule(tool, decision, **fields))


def new_rule(tool: str, decision: Decision, **fields: Unpack[RuleFields]) -> Rule:
    """The rule these fields make, checked (`check_rule`), made now: what `uq rule add` and
    `POST /api/rules` store.

    Raises:
        UserQuestionError: `BAD_REQUEST` as `check_rule`, or for a bad duration.
    """
    now = datetime.now(UTC)
    expires = fields.get("expires")
    approvals = parse_approvals(fields.get("approvals")) or 1
    if approvals > 1 and decision is not Decision.ALLOW:
        raise UserQuestionError(
            "a quorum of approvals goes with an allow rule: a deny needs nobody",
            ErrorCode.BAD_REQUEST,
        )
    rule = Rule(
        tool=tool,
        decision=decision,
        created_at=now,
        command=fields.get("command"),
        path=fields.get("path"),
        domain=fields.get("domain"),
        asker=fields.get("asker"),
        cwd=fields.get("cwd"),
        created_by=fields.get("created_by"),
        expires_at=None if expires is None else now + parse_duration(expires),
        approvals=approvals,
    )
    return check_rule(rule)


async def revoke_rule(store: RuleStore, rule_id: int) -> RuleRecord:
    """Revoke rule `rule_id`; every host stops applying it to the calls asked once this
    returns.

    Raises:
        UserQuestionError: `NOT_FOUND` when no active rule has that id.
    """
    revoked = await store.revoke_rule(rule_id)
    if revoked is None:
        raise UserQuestionError(
            f"no active rule has id {rule_id} (uq rule list shows them)", ErrorCode.NOT_FOUND
        )
    return revoked


def rule_text(rule: Rule) -> str:
    """A rule in one line, as the pages and `uq rule list` show it: `allow Bash npm run test for
    agents in /home/dev/shop`."""
    what = rule.command or rule.path or rule.domain
    text = f"{rule.decision} {'every tool' if rule.tool == ANY_TOOL else rule.tool}"
    if what is not None:
        text += f" {what}"
    if rule.asker is not None:
        text += f" for {rule.asker}"
    if rule.cwd is not None:
        text += f" in {rule.cwd}"
    if rule.approvals > 1:
        text += f" once {rule.approvals} people approve"
    return text


def rule_fields(rule: Rule) -> dict[str, str]:
    """What a rule matches and decides, with its `text`: the fields `POST /api/rules` takes, as
    a proposed rule (`frames.RuleProposal`) and `GET /api/rules` give them."""
    shown = {"tool": rule.tool, "decision": str(rule.decision)}
    for name in ("command", "path", "domain", "asker", "cwd"):
        value = getattr(rule, name)
        if value is not None:
            shown[name] = value
    shown["text"] = rule_text(rule)
    return shown


def rule_json(record: RuleRecord, *, may_change: bool | None = None) -> dict[str, object]:
    """A rule as `GET /api/rules` and `uq rule list --json` give it; `may_change` (the rules
    API's, for the token that asks) says whether that token may revoke it."""
    rule = record.rule
    shown: dict[str, object] = {"id": record.id, **rule_fields(rule)}
    if rule.approvals > 1:
        shown["approvals"] = rule.approvals
    shown["createdBy"] = rule.created_by
    shown["createdAt"] = iso(rule.created_at)
    shown["expiresAt"] = None if rule.expires_at is None else iso(rule.expires_at)
    shown["hits"] = record.hits
    shown["lastUsedAt"] = None if record.last_used_at is None else iso(record.last_used_at)
    shown["revokedAt"] = None if record.revoked_at is None else iso(record.revoked_at)
    if may_change is not None:
        shown["mayChange"] = may_change
    return shown


def _bad(message: str) -> UserQuestionError:
    return UserQuestionError(f"invalid rule: {message}", ErrorCode.BAD_REQUEST)
