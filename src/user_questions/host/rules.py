"""Rules: decisions people made once, applied by the host before anyone is disturbed again.

A rule decides approval requests only (a request that carries an `approval`, made by
`user_questions.approvals`); plain questions never match one. What a rule matches depends on
the kind of tool it names:

- shell tools (Claude's `Bash`, Codex's shell and exec): `command` is a prefix of whole words
  (`git status` matches `git status -s`, not `git statusx`). A command holding `;`, `&`, `|`,
  `$(`, a backtick, a redirection (`<`, `>`) or a newline never matches an allow rule, even
  quoted: it may run more than its first words say. It may match a deny rule, whose prefix is
  then looked for at the start of each of its parts (`cd x && rm -rf /` matches `rm -rf`).
- file tools (a `file_path`, `notebook_path` or `path` argument, or the files of a patch):
  `path` is an absolute glob (`*` within one folder, `**` across folders, `?` one character)
  that the call's path must match once resolved against the call's folder (`..` and `.` taken
  out; symbolic links are not followed: the host may not see the agent's disk). A patch matches
  an allow rule only when every file it touches does.
- web tools (a `url` argument): `domain` is the URL's host, or `*.example.com` for
  `example.com` and every host below it.
- any other tool (an MCP tool, say) by its name alone; a rule without a `command`, `path` or
  `domain` matches every call of its tool (but a compound command never matches an allow).

`tool` `*` names every tool, for a deny only. A rule may be narrowed to one asker (the name of
the token that asked: the host knows it, the request cannot claim it) and to a folder (`cwd`:
the folder the call runs in, or one below it, as the agent says). Deny beats allow: when both
match, the request is denied, by the lowest-numbered deny. A revoked or expired rule never
matches. `Rules` keeps a host's copy of the active rules and reloads it as soon as the store
says they changed (another process ran `uq rule`; on PostgreSQL another node did).
"""

from __future__ import annotations

import contextlib
import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import anyio

from user_questions._hooks.approval_card import SHELL_TOOLS, decision_of
from user_questions._lifecycle.lifetime import AsyncLifetime
from user_questions.approvals import ALLOW
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval, iso
from user_questions.host._reloader import Reloader
from user_questions.host.stores import Decision, Escalation, Rule, RuleRecord, RuleStore
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
)

__all__ = [
    "ANY_TOOL",
    "NONE",
    "RELOAD_RETRY",
    "RULE_PREFIX",
    "SHELL_TOOLS",
    "Match",
    "Rules",
    "add_rule",
    "answered_decision",
    "check_rule",
    "match",
    "offered_rule",
    "duration_text",
    "escalation_text",
    "parse_duration",
    "parse_escalation",
    "proposed_rule",
    "rule_answer",
    "rule_fields",
    "rule_json",
    "rule_text",
    "revoke_rule",
    "timer_seconds",
    "timer_steps",
]


ANY_TOOL = "*"
"""The `tool` of a rule that names every tool (deny only)."""
RULE_PREFIX = "rule:"
"""`by` of a request a rule settled is `rule:<id>`."""
NONE = "none"
"""Given for a token's deadline, reminder period or escalation steps: take them away."""
RELOAD_RETRY = 1.0
"""Seconds before reloading the rules again when the store could not be read."""
_COMPOUND = re.compile(r"[;&|`<>\n\r]|\$\(")
"""What makes a command more than one simple command: it never matches an allow rule."""
_PARTS = re.compile(r"&&|\|\||[;&|\n\r]|\$\(|`|\(|\)")
"""Where a compound command is cut into the parts a deny rule's prefix is looked for in."""
_PATH_KEYS = ("file_path", "notebook_path", "path")
_PATCH_TOOLS = frozenset({"apply_patch"})
_PATCHED_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (?P<path>.+)$", re.MULTILINE)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash"})
_DURATION = re.compile(r"(?P<count>[1-9][0-9]{0,6})(?P<unit>[smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_MAX_TEXT = 4096


def parse_duration(text: str) -> timedelta:
    """A duration written as `uq` writes them everywhere: `30s`, `10m`, `2h`, `7d`.

    Raises:
        UserQuestionError: `BAD_REQUEST` for anything else.
    """
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise UserQuestionError(
            f"invalid duration {text!r}: write a whole number and a unit, such as 30s, 10m, "
            "2h or 7d",
            ErrorCode.BAD_REQUEST,
        )
    return timedelta(seconds=int(found["count"]) * _UNITS[found["unit"]])


def timer_seconds(text: str | None) -> int | None:
    """A token's deadline or reminder period as given (`10m`) in seconds; `None` when not
    given (a change keeps the one it has), 0 for `none` (a change takes it away).

    Raises:
        UserQuestionError: `BAD_REQUEST` for a duration not written as `parse_duration` reads.
    """
    if text is None:
        return None
    if text.strip() == NONE:
        return 0
    return int(parse_duration(text).total_seconds())


def timer_steps(texts: Sequence[str] | None) -> list[Escalation] | None:
    """A token's escalation steps as given (`10m:@oncall`); `None` when not given, none at
    all for the one word `none`.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a step not written as `parse_escalation` reads.
    """
    if texts is None:
        return None
    if [text.strip() for text in texts] == [NONE]:
        return []
    return [parse_escalation(text) for text in texts]


def parse_escalation(text: str) -> Escalation:
    """An escalation step written `AFTER:TARGET` (`10m:@oncall`, `1h:admin`); the target is a
    person's name or `@group`, checked as a route is where it is kept (`people.check_grants`).

    Raises:
        UserQuestionError: `BAD_REQUEST` for a step not written so.
    """
    after, colon, to = text.strip().partition(":")
    if not colon or not to:
        raise UserQuestionError(
            f"invalid escalation step {text!r}: write AFTER:TARGET, such as 10m:@oncall or "
            "1h:admin",
            ErrorCode.BAD_REQUEST,
        )
    return Escalation(int(parse_duration(after).total_seconds()), to)


def duration_text(seconds: int) -> str:
    """`seconds` written as `parse_duration` reads them, in the largest whole unit (`10m`)."""
    unit, size = next((u, n) for u, n in reversed(_UNITS.items()) if seconds % n == 0)
    return f"{seconds // size}{unit}"


def escalation_text(step: Escalation) -> str:
    """`step` written as `parse_escalation` reads it (`10m:@oncall`)."""
    return f"{duration_text(step.after)}:{step.to}"


def check_rule(rule: Rule) -> Rule:
    """`rule` if it can be kept and matched, with its command's spacing made canonical.

    Raises:
        UserQuestionError: `BAD_REQUEST` saying what is wrong: no tool, more than one of
            `command`, `path` and `domain`, `*` allowing, a relative path or folder, a command
            that is not words, a text too long or holding a NUL.
    """
    for name in ("tool", "command", "path", "domain", "asker", "cwd"):
        value = getattr(rule, name)
        if value is not None and (not value.strip() or len(value) > _MAX_TEXT or "\x00" in value):
            raise _bad(f"{name} must be 1 to {_MAX_TEXT} characters of text, without a NUL")
    given = [name for name in ("command", "path", "domain") if getattr(rule, name) is not None]
    if len(given) > 1:
        raise _bad(f"a rule matches one of command, path or domain, not {' and '.join(given)}")
    if rule.tool == ANY_TOOL and rule.decision is Decision.ALLOW:
        raise _bad("a rule for every tool (*) can only deny")
    for name in ("path", "cwd"):
        value = getattr(rule, name)
        if value is not None and not value.startswith("/"):
            raise _bad(f"{name} must be an absolute path, got {value!r}")
    if rule.command is not None:
        words = _words(rule.command)
        if not words or _COMPOUND.search(rule.command):
            raise _bad(f"command must be plain words, got {rule.command!r}")
        return _replace_command(rule, shlex.join(words))
    return rule


async def add_rule(
    store: RuleStore,
    tool: str,
    decision: Decision,
    *,
    command: str | None = None,
    path: str | None = None,
    domain: str | None = None,
    asker: str | None = None,
    cwd: str | None = None,
    expires: str | None = None,
    created_by: str | None = None,
) -> RuleRecord:
    """Check and store a new rule (`expires` a duration from now: `7d`); what `uq rule add` and
    `POST /api/rules` both do. Every host applies it at once.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a rule that cannot be kept (`check_rule`) or a bad
            duration.
    """
    now = datetime.now(UTC)
    rule = Rule(
        tool=tool,
        decision=decision,
        created_at=now,
        command=command,
        path=path,
        domain=domain,
        asker=asker,
        cwd=cwd,
        created_by=created_by,
        expires_at=None if expires is None else now + parse_duration(expires),
    )
    return await store.add_rule(check_rule(rule))


async def revoke_rule(store: RuleStore, rule_id: int) -> RuleRecord:
    """Revoke rule `rule_id`; every host stops applying it at once.

    Raises:
        UserQuestionError: `NOT_FOUND` when no active rule has that id.
    """
    revoked = await store.revoke_rule(rule_id)
    if revoked is None:
        raise UserQuestionError(
            f"no active rule has id {rule_id} (uq rule list shows them)", ErrorCode.NOT_FOUND
        )
    return revoked


@dataclass(frozen=True, slots=True)
class Match:
    """The rule that decided a request, and what of the call it matched."""

    rule: RuleRecord
    matched: str
    """What it matched, in words: `npm run test`, `/home/dev/shop/src/a.py`, `example.com`."""

    @property
    def allowed(self) -> bool:
        return self.rule.rule.decision is Decision.ALLOW


def match(
    rules: Iterable[RuleRecord],
    approval: Approval,
    asked_by: str | None,
    now: datetime | None = None,
) -> Match | None:
    """The rule that decides `approval`, asked with the token named `asked_by`: the first deny
    that matches, else the first allow, else `None` (ask a person)."""
    moment = now or datetime.now(UTC)
    allow: Match | None = None
    for record in rules:
        if not record.active(moment) or not _in_scope(record.rule, approval, asked_by):
            continue
        decision = record.rule.decision
        if decision is Decision.ALLOW and allow is not None:
            continue
        matched = _matched(record.rule, approval)
        if matched is None:
            continue
        found = Match(record, matched)
        if decision is Decision.DENY:
            return found
        allow = found
    return allow


def rule_answer(found: Match, question_id: str, labels: Sequence[str]) -> AskUserQuestionAnswer:
    """The answer `found` gives the approval card `question_id` with options `labels`: its
    approving option, or (a deny) the reason the agent reads.

    Raises:
        UserQuestionError: `BAD_ANSWER` when the card has no approving option to choose.
    """
    if not found.allowed:
        reason = f"denied by rule {found.rule.id}: {found.matched}"
        item = AskUserQuestionAnswerItem(id=question_id, selected=[], custom=reason)
        return AskUserQuestionAnswer(answers=[item])
    if ALLOW not in labels:
        raise UserQuestionError(
            f"the card has no {ALLOW!r} option for rule {found.rule.id} to choose",
            ErrorCode.BAD_ANSWER,
        )
    return AskUserQuestionAnswer(
        answers=[AskUserQuestionAnswerItem(id=question_id, selected=[ALLOW])]
    )


def proposed_rule(
    approval: Approval, asked_by: str | None, decision: Decision = Decision.ALLOW
) -> Rule | None:
    """The narrowest rule that decides this call, and the same call again, as `decision`: for
    the asker that made it (`asked_by`, the token's name), in its folder; a shell command
    exactly (its words), a file by its resolved path, a web call by its URL's host, any other
    tool by its name. What a card's "Allow and don't ask again" and the history's "Make a rule"
    create. `None` when no rule can be that narrow, so none is offered: a compound or
    unreadable command (an allow would never match it; a deny of it all is not plain words), a
    shell call without a command, a patch of several files, a path holding a glob character, a
    URL without a host, a folder that is not absolute.
    """
    fields: dict[str, str] = {}
    arguments = approval.input
    if approval.tool.lower() in SHELL_TOOLS:
        command = _command(arguments)
        words = None if command is None or _COMPOUND.search(command) else _words(command)
        if not words:
            return None
        fields["command"] = shlex.join(words)
    elif paths := _paths(approval):
        if len(set(paths)) != 1 or any(glob in paths[0] for glob in "*?"):
            return None
        fields["path"] = paths[0]
    elif "url" in arguments:
        host = _host(arguments)
        if host is None or "*" in host:
            return None
        fields["domain"] = host
    cwd = approval.cwd
    if cwd is not None:
        if not cwd.startswith("/"):
            return None
        cwd = _resolved(cwd, "/")
    rule = Rule(
        approval.tool,
        decision,
        datetime.now(UTC),
        command=fields.get("command"),
        path=fields.get("path"),
        domain=fields.get("domain"),
        asker=asked_by,
        cwd=cwd,
    )
    try:
        rule = check_rule(rule)
    except UserQuestionError:
        return None
    # It must decide the very call it is made from, or it is not offered.
    return rule if match([RuleRecord(0, rule)], approval, asked_by) is not None else None


def answered_decision(
    questions: Sequence[AskUserQuestionItem], answer: AskUserQuestionAnswer
) -> Decision | None:
    """What a person's `answer` to an approval card decided (only a chosen `Allow` allows:
    `approvals.approval_decision`); `None` when it does not answer a one-question card."""
    if len(questions) != 1:
        return None
    items = [item for item in answer.answers if item.id == questions[0].id]
    if not items:
        return None
    allowed = decision_of(items[0].selected, items[0].custom).allowed
    return Decision.ALLOW if allowed else Decision.DENY


def offered_rule(
    questions: Sequence[AskUserQuestionItem],
    approval: Approval | None,
    asked_by: str | None,
    decision: Decision = Decision.ALLOW,
) -> Rule | None:
    """The rule a person is offered for a request (`proposed_rule`), `None` when it offers
    none: a plain question (no `approval`), more than one question, an allow on a card without
    the `Allow` a rule chooses (it could never settle the next one)."""
    if approval is None or len(questions) != 1:
        return None
    labels = [option.label for option in questions[0].options or ()]
    if decision is Decision.ALLOW and ALLOW not in labels:
        return None
    return proposed_rule(approval, asked_by, decision)


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


def rule_json(record: RuleRecord) -> dict[str, object]:
    """A rule as `GET /api/rules` and `uq rule list --json` give it."""
    rule = record.rule
    shown: dict[str, object] = {"id": record.id, **rule_fields(rule)}
    shown["createdBy"] = rule.created_by
    shown["createdAt"] = iso(rule.created_at)
    shown["expiresAt"] = None if rule.expires_at is None else iso(rule.expires_at)
    shown["hits"] = record.hits
    shown["lastUsedAt"] = None if record.last_used_at is None else iso(record.last_used_at)
    shown["revokedAt"] = None if record.revoked_at is None else iso(record.revoked_at)
    return shown


class Rules(AsyncLifetime):
    """A host's copy of the rules, reloaded whenever the store says they changed.

    Use as `async with Rules(store) as rules`. `loaded` is `False` while the rules could not be
    read: the hub then asks a person (a failure never allows).
    """

    def __init__(self, store: RuleStore) -> None:
        self.store = store
        self._rules: tuple[RuleRecord, ...] = ()
        self.loaded = False
        self._reloader = Reloader(self.reload, "the rules", RELOAD_RETRY)

    def __repr__(self) -> str:
        return f"<Rules {len(self._rules)} active>"

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        stack.callback(self.store.on_rules_change(self._reloader.changed))
        await self.reload()
        following = await stack.enter_async_context(anyio.create_task_group())
        following.start_soon(self._reloader.follow)
        stack.callback(following.cancel_scope.cancel)

    def decide(self, approval: Approval, asked_by: str | None) -> Match | None:
        """The rule that decides `approval` now, `None` when a person must."""
        if not self.loaded or not self._rules:
            return None
        return match(self._rules, approval, asked_by)

    async def reload(self) -> None:
        """Read the rules again now: the writer of a change applies it to its next request."""
        now = datetime.now(UTC)
        try:
            records = await self.store.rules()
        except BaseException:
            self.loaded = False
            raise
        self._rules = tuple(record for record in records if record.active(now))
        self.loaded = True


# -- matching --------------------------------------------------------------------------------


def _in_scope(rule: Rule, approval: Approval, asked_by: str | None) -> bool:
    if rule.tool not in (ANY_TOOL, approval.tool):
        return False
    if rule.asker is not None and rule.asker != asked_by:
        return False
    if rule.cwd is not None:
        return approval.cwd is not None and _within(_resolved(approval.cwd, "/"), rule.cwd)
    return True


def _matched(rule: Rule, approval: Approval) -> str | None:
    """What of the call `rule` matches, in words; `None` when it does not match."""
    arguments = approval.input
    allow = rule.decision is Decision.ALLOW
    if approval.tool.lower() in SHELL_TOOLS:
        command = _command(arguments)
        if command is None:
            return None if rule.command is not None else approval.tool
        return _command_match(rule.command, command, allow=allow)
    if rule.command is not None:
        return None
    if rule.path is not None:
        paths = _paths(approval)
        if not paths:
            return None
        hits = [path for path in paths if _glob(rule.path).fullmatch(path)]
        if not hits or (allow and len(hits) < len(paths)):
            return None
        return ", ".join(hits)
    if rule.domain is not None:
        host = _host(arguments)
        return host if host is not None and _domain_matches(rule.domain, host) else None
    return approval.tool


def _command(arguments: Mapping[str, Any]) -> str | None:
    """The shell command a call runs, as one string (`bash -lc SCRIPT` is its script)."""
    value = arguments.get("command", arguments.get("cmd"))
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        if (
            len(value) == 3
            and posixpath.basename(value[0]) in _SHELLS
            and value[1] in ("-c", "-lc")
        ):
            return str(value[2])
        return shlex.join(value)
    return None


def _command_match(prefix: str | None, command: str, *, allow: bool) -> str | None:
    compound = _COMPOUND.search(command) is not None
    if allow and compound:
        return None
    if prefix is None:
        return command
    wanted = _words(prefix)
    if not wanted:  # a kept rule's command is words (`check_rule`)
        return None
    parts = _PARTS.split(command) if compound else [command]
    for part in parts:
        words = _words(part)
        if words is not None and words[: len(wanted)] == wanted:
            return shlex.join(wanted)
    return None


def _words(command: str) -> list[str] | None:
    """`command`'s words as a shell reads them; `None` when they cannot be read (an unclosed
    quote): such a command matches no allow."""
    try:
        return shlex.split(command)
    except ValueError:
        return None


def _paths(approval: Approval) -> list[str]:
    arguments = approval.input
    found: list[str] = []
    if approval.tool.lower() in _PATCH_TOOLS:
        for key in ("command", "patch", "input"):
            value = arguments.get(key)
            if isinstance(value, str):
                found = [path.strip() for path in _PATCHED_FILE.findall(value)]
                break
    else:
        found = [arguments[key] for key in _PATH_KEYS if isinstance(arguments.get(key), str)]
    base = approval.cwd or "/"
    return [_resolved(path, base) for path in found if path]


def _resolved(path: str, base: str) -> str:
    """`path` made absolute against `base`, `.` and `..` taken out (`~` is not expanded)."""
    return posixpath.normpath(posixpath.join(base, path)).replace("//", "/")


def _within(path: str, folder: str) -> bool:
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder if folder == "/" else folder + "/")


def _glob(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(parts))


def _host(arguments: Mapping[str, Any]) -> str | None:
    url = arguments.get("url")
    if not isinstance(url, str):
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.rstrip(".").lower() if host else None


def _domain_matches(domain: str, host: str) -> bool:
    wanted = domain.lower().rstrip(".")
    if wanted.startswith("*."):
        base = wanted[2:]
        return host == base or host.endswith("." + base)
    return host == wanted


def _replace_command(rule: Rule, command: str) -> Rule:
    return Rule(
        tool=rule.tool,
        decision=rule.decision,
        created_at=rule.created_at,
        command=command,
        asker=rule.asker,
        cwd=rule.cwd,
        created_by=rule.created_by,
        expires_at=rule.expires_at,
    )


def _bad(message: str) -> UserQuestionError:
    return UserQuestionError(f"invalid rule: {message}", ErrorCode.BAD_REQUEST)
