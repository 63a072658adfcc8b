"""Matching rules to a call: which rule decides it, or why none can (`explain`).

The call is read once (`calls.read_call`); then, of the active rules in scope (its tool or
`*`, its asker, a folder it runs in or below):

1. **A deny** decides when it matches anything the call may do: for a shell call, any simple
   command found anywhere in it, each wrapper taken off in turn (`shell.ShellReading.found`),
   compared as a deny compares (below); for a file call, any of its paths; for a web call, its
   host. The lowest-numbered deny that matches decides.
2. **An allow** decides only a call read whole: a plain command (`shell`), a patch that parses,
   a URL whose host a browser would read the same, paths that can be read. Each part must be
   allowed by some rule: every simple command of a plain sequence (by a rule whose command is
   a prefix of its words, exactly), every file of a patch (its glob). A command after `cd`,
   `pushd` or `popd` runs in a folder nobody knows: only a rule for any folder allows it.
3. Otherwise a person decides.

A deny's command compares by what it means rather than as written: the program by its base
name (`/bin/rm` is `rm`), short options as sets of letters (`-rf` is `-fr` and `-r -f`), long
options by name, and its other words in order among the command's (`git push` is in
`git -C x push origin`); after `--` every word is an operand.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from user_questions.frames import Approval
from user_questions.host.rules.calls import FIELDS, Call, Kind, read_call
from user_questions.host.rules.making import ANY_TOOL, rule_text
from user_questions.host.rules.paths import glob, within
from user_questions.host.rules.shell import Word, program_name
from user_questions.host.stores import Decision, Rule, RuleRecord

__all__ = ["FOLDER_CHANGES", "Match", "Verdict", "explain", "match"]

FOLDER_CHANGES = frozenset({"cd", "pushd", "popd"})
"""Programs after which the commands of a sequence run in a folder nobody knows."""


@dataclass(frozen=True, slots=True)
class Match:
    """The rule that decided a request, and what of the call it matched."""

    rule: RuleRecord
    matched: str
    """What it matched, in words: `npm run test`, `/home/dev/shop/src/a.py`, `example.com`."""
    also: tuple[RuleRecord, ...] = ()
    """The other rules that allowed the other parts of the call (a sequence's commands, a
    patch's files)."""

    @property
    def allowed(self) -> bool:
        return self.rule.rule.decision is Decision.ALLOW

    @property
    def ids(self) -> tuple[int, ...]:
        """The ids of every rule that decided: `rule`'s, then `also`'s."""
        return (self.rule.id, *(record.id for record in self.also))


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the rules make of a call: the rule that decides it, and why, in one line."""

    match: Match | None
    reason: str
    """`rule 3 allows it: ...`, `not a plain command: ...`, `no rule allows git push`."""
    unreadable: str | None = None
    """Why no allow rule could decide it, when some allow rule was in scope and the call could
    not be read whole (`not a plain command: a parameter expansion at column 12`)."""
    version: int | None = None
    """The rules' version it was made at, when a host's `Rules` made it: the store keeps what
    it decided only while the rules are still at it (`NewQuestion.rules_version`)."""


def match(
    rules: Iterable[RuleRecord],
    approval: Approval,
    asked_by: str | None,
    now: datetime | None = None,
) -> Match | None:
    """The rule that decides `approval`, asked with the token named `asked_by`: the first deny
    that matches, else the allows that cover the whole call, else `None` (ask a person)."""
    return explain(rules, approval, asked_by, now).match


def explain(
    rules: Iterable[RuleRecord],
    approval: Approval,
    asked_by: str | None,
    now: datetime | None = None,
) -> Verdict:
    """The rule that decides `approval` (as `match`), and why, or why none can."""
    moment = now or datetime.now(UTC)
    call = read_call(approval)
    scoped = [
        record
        for record in rules
        if record.active(moment) and _in_scope(record.rule, call, asked_by)
    ]
    for record in scoped:
        if record.rule.decision is Decision.DENY:
            hit = _denied(record.rule, call)
            if hit is not None:
                return Verdict(Match(record, hit), f"rule {record.id} denies it: {_text(record)}")
    allows = [record for record in scoped if record.rule.decision is Decision.ALLOW]
    if not allows:
        return Verdict(None, "no rule for this tool, asker and folder allows it")
    if call.problem is not None:
        return Verdict(None, call.problem, unreadable=call.problem)
    return _allowed(allows, call)


def _text(record: RuleRecord) -> str:
    return rule_text(record.rule)


def _in_scope(rule: Rule, call: Call, asked_by: str | None) -> bool:
    if rule.tool not in (ANY_TOOL, call.approval.tool):
        return False
    if rule.asker is not None and rule.asker != asked_by:
        return False
    if rule.cwd is not None:
        return call.folder is not None and within(call.folder, rule.cwd)
    return True


def _field(rule: Rule) -> str | None:
    return next((name for name in ("command", "path", "domain") if getattr(rule, name)), None)


def _fits(rule: Rule, call: Call) -> bool:
    """Whether the field `rule` matches is the one its call's kind has (none: any call)."""
    name = _field(rule)
    return name is None or FIELDS.get(call.kind) == name


# -- deny -----------------------------------------------------------------------------------------


def _denied(rule: Rule, call: Call) -> str | None:
    """What of `call` the deny `rule` matches, `None` when nothing does."""
    if not _fits(rule, call):
        return None
    if rule.command is not None:
        if call.shell is None:
            return None
        pattern = _pattern(rule.command)
        if any(pattern.within(_Words.of(found)) for found in call.shell.found):
            return rule.command
        return None
    if rule.path is not None:
        hits = [path for path in call.paths if glob(rule.path).fullmatch(path)]
        return ", ".join(hits) if hits else None
    if rule.domain is not None:
        return call.host if call.host is not None and _domain(rule.domain, call.host) else None
    return call.command or call.approval.tool


@dataclass(frozen=True, slots=True)
class _Words:
    """A simple command as a deny compares it."""

    program: str | None
    short: frozenset[str] = frozenset()
    long: frozenset[str] = frozenset()
    operands: tuple[str, ...] = ()

    @staticmethod
    def of(words: Sequence[Word]) -> _Words:
        if not words or words[0] is None:
            return _Words(None)
        short: set[str] = set()
        long: set[str] = set()
        operands: list[str] = []
        ended = False
        for word in words[1:]:
            if word is None:
                continue
            if ended or word == "-" or not word.startswith("-"):
                operands.append(word)
            elif word == "--":
                ended = True
            elif word.startswith("--"):
                long.add(word)
                long.add(word.partition("=")[0])
            else:
                short.update(word[1:])
        return _Words(program_name(words[0]), frozenset(short), frozenset(long), tuple(operands))

    def within(self, command: _Words) -> bool:
        """Whether `command` does all this deny names."""
        if self.program is None or self.program != command.program:
            return False
        if not self.short <= command.short or not self.long <= command.long:
            return False
        remaining = iter(command.operands)
        return all(any(word == seen for seen in remaining) for word in self.operands)


@functools.lru_cache(maxsize=4096)
def _pattern(command: str) -> _Words:
    """A deny rule's command as a deny compares it (read once per rule, not per call)."""
    return _Words.of(shlex.split(command))


# -- allow ----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _prefix(command: str) -> tuple[str, ...]:
    """An allow rule's command as its words (kept as `shlex` writes them: `check_rule`)."""
    return tuple(shlex.split(command))


def _allowed(allows: list[RuleRecord], call: Call) -> Verdict:
    """The allows that cover every part of a call read whole, or the part none covers."""
    fitting = [record for record in allows if _fits(record.rule, call)]
    if call.kind is Kind.SHELL:
        return _covered(fitting, call, _shell_parts(call))
    if call.kind is Kind.FILE:
        parts = [(path, path, True) for path in call.paths]
        return _covered(fitting, call, parts)
    if call.kind is Kind.WEB:
        assert call.host is not None  # read whole
        return _covered(fitting, call, [(call.host, call.host, True)])
    return _covered(fitting, call, [(call.approval.tool, call.approval.tool, True)])


def _shell_parts(call: Call) -> list[tuple[object, str, bool]]:
    """A plain sequence's commands, each with its words in one line and whether it runs in
    the call's own folder (not after a `cd`)."""
    assert call.shell is not None  # read whole
    parts: list[tuple[object, str, bool]] = []
    here = True
    for words in call.shell.commands:
        parts.append((words, shlex.join(words), here))
        here = here and program_name(words[0]) not in FOLDER_CHANGES
    return parts


def _covered(
    allows: list[RuleRecord], call: Call, parts: Sequence[tuple[object, str, bool]]
) -> Verdict:
    used: list[RuleRecord] = []
    matched: list[str] = []
    for part, text, here in parts:
        found = next(
            (
                (record, hit)
                for record in allows
                if (here or record.rule.cwd is None)
                and (hit := _allows(record.rule, call, part)) is not None
            ),
            None,
        )
        if found is None:
            return Verdict(None, _uncovered(call, text, here))
        record, hit = found
        if record not in used:
            used.append(record)
        if hit not in matched:
            matched.append(hit)
    first, *others = used
    reason = f"rule {first.id} allows it: {_text(first)}"
    for other in others:
        reason += f"; rule {other.id}: {_text(other)}"
    return Verdict(Match(first, "; ".join(matched), tuple(others)), reason)


def _uncovered(call: Call, text: str, here: bool) -> str:
    if call.kind is Kind.SHELL:
        where = "" if here else " (after a change of folder)"
        return f"no rule allows {text}{where}"
    if text in call.moves:
        return f"the patch moves a file to {text}, which no rule allows"
    return f"no rule allows {text}"


def _allows(rule: Rule, call: Call, part: object) -> str | None:
    """What of one part of `call` the allow `rule` matches."""
    if rule.command is not None:
        assert isinstance(part, tuple)
        wanted = _prefix(rule.command)
        return rule.command if part[: len(wanted)] == wanted else None
    if rule.path is not None:
        assert isinstance(part, str)
        return part if glob(rule.path).fullmatch(part) else None
    if rule.domain is not None:
        assert isinstance(part, str)
        return part if _domain(rule.domain, part) else None
    return shlex.join(part) if isinstance(part, tuple) else str(part)


def _domain(domain: str, host: str) -> bool:
    """Whether a rule's `domain` names `host` (a trailing dot is the same host)."""
    wanted = domain.rstrip(".")
    host = host.rstrip(".")
    if wanted.startswith("*."):
        base = wanted[2:]
        return host == base or host.endswith("." + base)
    return host == wanted
