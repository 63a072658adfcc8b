"""Reading a shell command as the shell will run it: the simple commands it is made of, their
words after quote removal, and, when it is more than that, the first thing that makes it so.

The command is parsed with bash's grammar (tree-sitter-bash, from the `web` extra, loaded on
first use) and read in two ways:

- **plain**: the command parses without error into simple commands of literal words joined only
  by `&&`, `||`, `;`, `|` and newlines. A literal word is made of characters that are the same
  to bash and zsh whatever the machine, the environment or the folder: plain characters,
  backslash escapes, '...' and "..." without any `$` or backtick inside. Anything else is not
  plain: any `$` (parameters, `$(...)`, `$((...))`, `$'...'`, `$"..."`), backticks, a pattern
  or expansion character outside quotes (`* ? [ ~ { } ( ) ^ #`, `=` starting a word),
  assignments, redirections, here-documents, subshells, groups, control flow, functions,
  `!`, background `&`, `|&`, comments, a reserved word as the program (`time`, `if`, ...), a
  line continuation inside a word, a NUL, a parse error, an empty command. Its words are what
  bash passes the program (`ShellReading.commands`); a script run by a shell (`bash -lc
  SCRIPT`, the whole command) is read as that script. Only a plain command can be allowed.
- **everything it may run** (`ShellReading.found`), for deny rules: every simple command the
  parse finds anywhere (inside subshells, groups, control flow, substitutions, here-document
  bodies' substitutions), each also with its wrappers taken off (`WRAPPERS`: `sudo rm -rf /` is
  also `rm -rf /`), and the scripts that shells, `eval` and their kin run (`bash -c`, `sh -c`,
  `su -c`, `env -S`, `watch`, ...) read the same way, to `MAX_DEPTH` scripts deep. A word whose
  value is known only when the command runs is `None` there.

A plain command whose wrapped scripts are not plain is not plain either: a deny could not be
ruled out for what they run.
"""

from __future__ import annotations

import functools
import itertools
import posixpath
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from user_questions.errors import ErrorCode, UserQuestionError

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "MAX_DEPTH",
    "MAX_READ",
    "MAX_SCRIPT",
    "MAX_WRAPPERS",
    "RESERVED_WORDS",
    "SCRIPT_SHELLS",
    "WRAPPERS",
    "Problem",
    "ShellReading",
    "Word",
    "program_name",
    "read_argv",
    "read_script",
    "unwrapped",
]

Word = str | None
"""A word of a simple command after quote removal; `None` when only running the command tells
(an expansion, a substitution, a pattern)."""

MAX_DEPTH = 8
"""Scripts inside scripts (`bash -c "sh -c '...'"`) read at most; deeper is not plain."""
MAX_SCRIPT = 64 * 1024
"""Characters of a command read at most; a longer one is not plain (and searched no further)."""
MAX_READ = 2 * MAX_SCRIPT
"""Characters read at most for one command, the scripts it runs included; more is not plain."""
MAX_WRAPPERS = 32
"""Wrappers taken off one command at most (`sudo nice sudo ...`); more is not plain."""
SCRIPT_SHELLS = frozenset({"sh", "bash", "dash", "zsh"})
"""Shells whose `-c SCRIPT` (`-lc`, ...) is read as the script itself: `["bash", "-lc",
"git status"]` is `git status`."""
RESERVED_WORDS = frozenset(
    {
        *("!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac"),
        *("fi", "for", "function", "if", "in", "select", "then", "time", "until", "while"),
    }
)
"""Words bash reads as its own syntax in a program's place; such a command is not plain."""

_OPERATORS = {"&&", "||", ";", "|"}
_ARGUMENTS = frozenset({"word", "string", "raw_string", "concatenation", "number"})
"""The nodes a literal word may be parsed as (its text is then read by `_literal`)."""
_INSIDE_ARGUMENTS = _ARGUMENTS | {"string_content"}
_BETWEEN_WORDS = re.compile(r"(?:[ \t]|\\\n)*")
_BETWEEN_COMMANDS = re.compile(r"(?:[ \t\n]|\\\n)*")
_WHAT: dict[str, str] = {
    "simple_expansion": "a parameter expansion",
    "expansion": "a parameter expansion",
    "command_substitution": "a command substitution",
    "process_substitution": "a process substitution",
    "arithmetic_expansion": "an arithmetic expansion",
    "ansi_c_string": "an ANSI-C quoted string ($'...')",
    "translated_string": 'a translated string ($"...")',
    "variable_assignment": "an assignment",
    "variable_assignments": "an assignment",
    "file_redirect": "a redirection",
    "heredoc_redirect": "a here-document",
    "herestring_redirect": "a here-string",
    "redirected_statement": "a redirection",
    "subshell": "a subshell",
    "compound_statement": "a group { ... }",
    "if_statement": "control flow (if)",
    "for_statement": "control flow (for)",
    "c_style_for_statement": "control flow (for)",
    "while_statement": "control flow (while)",
    "case_statement": "control flow (case)",
    "function_definition": "a function definition",
    "negated_command": "a negation (!)",
    "test_command": "a test ([[ ... ]])",
    "declaration_command": "a declaration (export, declare, local, ...)",
    "unset_command": "unset",
    "comment": "a comment",
    "brace_expression": "a brace expansion",
    "&": "a background job (&)",
    "|&": "a pipe of errors too (|&)",
    "$": "a parameter expansion",
}
_UNQUOTED: dict[str, str] = {
    "$": "a parameter expansion",
    "`": "a command substitution",
    "*": "a glob pattern (*)",
    "?": "a glob pattern (?)",
    "[": "a glob pattern ([)",
    "~": "a tilde expansion (~)",
    "{": "a brace expansion ({)",
    "}": "a brace expansion (})",
    "(": "a parenthesis",
    ")": "a parenthesis",
    "^": "a pattern character of zsh (^)",
    "#": "a comment or a pattern character of zsh (#)",
    "\x00": "a NUL character",
}
"""What a character outside quotes makes of a word: it is not literal."""
_DOUBLE_QUOTED = {"$": "a parameter expansion", "`": "a command substitution"}
_DOUBLE_ESCAPES = frozenset('$`"\\')
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


@dataclass(frozen=True, slots=True)
class Problem:
    """What makes a command not plain, and where (1-based, in characters)."""

    what: str
    """`a parameter expansion`, `a redirection`, `a syntax error`, ..."""
    line: int
    column: int
    script: str | None = None
    """The program whose script it is in (`bash -c`), when not in the command itself."""
    multiline: bool = False

    def __str__(self) -> str:
        where = (
            f"line {self.line}, column {self.column}"
            if self.multiline
            else (f"column {self.column}")
        )
        inside = "" if self.script is None else f" of the script {self.script} runs"
        return f"not a plain command: {self.what} at {where}{inside}"


@dataclass(frozen=True, slots=True)
class ShellReading:
    """A command as the shell will run it (the module docstring says how it is read)."""

    commands: tuple[tuple[str, ...], ...]
    """Its simple commands' words, in order, when it is plain; empty when it is not."""
    problem: Problem | None
    """Why it is not plain; `None` when it is."""
    found: tuple[tuple[Word, ...], ...] = field(default=())
    """Every simple command it may run, wrappers taken off one by one, scripts included."""

    @property
    def plain(self) -> bool:
        return self.problem is None


def read_script(script: str) -> ShellReading:
    """`script` (a command line, as a shell tool takes it) read as bash will run it.

    Raises:
        UserQuestionError: `BAD_REQUEST` when the shell grammar is not installed (the `web`
            extra), with the line that installs it.
    """
    if len(script) <= _CACHED_LENGTH:
        return _read_short(script)
    return _Reader().script(script, 0, None)


def read_argv(argv: Sequence[str]) -> ShellReading:
    """A command given as its program and arguments (Codex's `["git", "status"]`): run without
    a shell, so its words are exactly these; `[SHELL, "-c", SCRIPT]` (`-lc`, ...) is read as
    `SCRIPT` for the shells of `SCRIPT_SHELLS`."""
    words = tuple(argv)
    if sum(len(word) for word in words) <= _CACHED_LENGTH:
        return _read_short_argv(words)
    return _Reader().argv(words, 0)


_CACHED_LENGTH = 4096
"""The commands up to this many characters are read once and remembered (a host offers,
checks and matches the same command more than once); the cache stays small whatever comes."""


@functools.lru_cache(maxsize=512)
def _read_short(script: str) -> ShellReading:
    return _Reader().script(script, 0, None)


@functools.lru_cache(maxsize=512)
def _read_short_argv(argv: tuple[str, ...]) -> ShellReading:
    return _Reader().argv(argv, 0)


def program_name(word: str) -> str:
    """A program as a deny rule compares it: by its base name (`/bin/rm` is `rm`)."""
    return posixpath.basename(word) or word


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """A program that runs the rest of its arguments as a command (`sudo`, `env`, `xargs`)."""

    takes_value: frozenset[str] = frozenset()
    """Its options followed by a value (`-u USER`); `--name=value` is read as one word."""
    operands: int = 0
    """Words before the command that are not options (`timeout DURATION`, `chroot DIR`)."""
    assignments: bool = False
    """`NAME=value` words may come before the command (`env`, `sudo`)."""
    script: frozenset[str] = frozenset()
    """Options whose value is a script run by a shell (`su -c SCRIPT`)."""
    split: frozenset[str] = frozenset()
    """Options whose value is split into the command's words (`env -S "rm -rf /"`)."""
    joined: bool = False
    """The command's words are joined by spaces and run as a script (`eval`, `watch`)."""
    runs_rest: bool = True
    """Whether the words after its options are a command it runs (`su USER` names a user)."""
    queries: frozenset[str] = frozenset()
    """Options with which it runs nothing (`command -v rm` only looks `rm` up)."""


def _options(text: str) -> frozenset[str]:
    return frozenset(text.split())


WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _Wrapper(
        _options(
            "-u -g -C -D -h -p -r -t -T -U -R --user --group --close-from --chdir --host "
            "--prompt --role --type --command-timeout --other-user --chroot"
        ),
        assignments=True,
        queries=_options("-l --list -v --validate -V --version -e --edit -K --remove-timestamp"),
    ),
    "doas": _Wrapper(_options("-u -C")),
    "env": _Wrapper(
        _options("-u -C -S --unset --chdir --split-string"),
        assignments=True,
        split=_options("-S --split-string"),
    ),
    "command": _Wrapper(queries=_options("-v -V")),
    "builtin": _Wrapper(),
    "exec": _Wrapper(_options("-a")),
    "nohup": _Wrapper(),
    "time": _Wrapper(_options("-f -o --format --output")),
    "nice": _Wrapper(_options("-n --adjustment")),
    "ionice": _Wrapper(_options("-c -n -p -P -u --class --classdata --pid --pgid --uid")),
    "timeout": _Wrapper(_options("-s -k --signal --kill-after"), operands=1),
    "xargs": _Wrapper(
        _options(
            "-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --replace --max-lines "
            "--max-args --max-procs --max-chars --process-slot-var"
        )
    ),
    "stdbuf": _Wrapper(_options("-i -o -e --input --output --error")),
    "setsid": _Wrapper(),
    "chroot": _Wrapper(_options("--userspec --groups"), operands=1),
    "chrt": _Wrapper(_options("-T -P -D --sched-runtime --sched-period --sched-deadline"), 1),
    "taskset": _Wrapper(operands=1),
    "flock": _Wrapper(
        _options("-w -E -c --timeout --conflict-exit-code --command"),
        operands=1,
        script=_options("-c --command"),
    ),
    "unbuffer": _Wrapper(),
    "busybox": _Wrapper(),
    "su": _Wrapper(
        _options("-c -s -g -G --command --shell --group --supp-group"),
        script=_options("-c --command"),
        runs_rest=False,
    ),
    "runuser": _Wrapper(
        _options("-c -u -g -G -s --command --user --group --supp-group --shell"),
        script=_options("-c --command"),
    ),
    "script": _Wrapper(
        _options("-c -E -I -O -T -B --command --echo --log-in --log-out"),
        script=_options("-c --command"),
        runs_rest=False,
    ),
    "watch": _Wrapper(_options("-n -d --interval --differences"), joined=True),
    "eval": _Wrapper(joined=True),
}
"""The programs that run (the rest of) their arguments as a command, and how to find it; a
deny rule is looked for in what each runs. The shells (`bash -c SCRIPT`, ...) are read by
`_shell_script`."""
_DENY_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})
_SHELL_TAKES_VALUE = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def unwrapped(words: Sequence[Word]) -> tuple[Word, ...] | None:
    """The command a wrapper (`WRAPPERS`) runs, its words, or `None` when `words` is no
    wrapper's or runs none (`sudo -v`)."""
    if not words or words[0] is None:
        return None
    wrapper = WRAPPERS.get(program_name(words[0]))
    if wrapper is None or wrapper.joined or not wrapper.runs_rest:
        return None
    if any(word in wrapper.queries for word in words[1:]):
        return None
    rest = _after_options(words[1:], wrapper)
    return rest or None


def _after_options(words: Sequence[Word], wrapper: _Wrapper) -> tuple[Word, ...]:
    """The words after a wrapper's options, operands and assignments."""
    index, operands = 0, wrapper.operands
    while index < len(words):
        word = words[index]
        if word is None:
            return tuple(words[index:])
        if word == "--":
            index += 1
            break
        if word.startswith("-") and len(word) > 1:
            if "=" not in word and (word in wrapper.takes_value or _takes_next(word, wrapper)):
                index += 1
            index += 1
            continue
        if wrapper.assignments and _ASSIGNMENT.match(word):
            index += 1
            continue
        if operands:
            operands -= 1
            index += 1
            continue
        break
    while operands and index < len(words):
        operands -= 1
        index += 1
    return tuple(words[index:])


def _takes_next(word: str, wrapper: _Wrapper) -> bool:
    """Whether a bundle of short options takes the next word as its value: its last option
    does (`-nu root`), none before it does (`-uroot` holds its value)."""
    if word.startswith("--"):
        return False
    for index, letter in enumerate(word[1:], start=1):
        if f"-{letter}" in wrapper.takes_value:
            return index == len(word) - 1
    return False


class _Budget:
    """Characters a reading may still parse, its nested scripts included: a command that
    wraps scripts in scripts is read at most `MAX_READ` characters in all."""

    def __init__(self) -> None:
        self.left = MAX_READ


class _Reader:
    """One reading of a command and the scripts it runs (its depth bound and its findings)."""

    def __init__(self, budget: _Budget | None = None) -> None:
        self.budget = budget or _Budget()
        self.found: list[tuple[Word, ...]] = []
        self.nested: Problem | None = None
        """The first problem of a script that a wrapper of the command runs."""
        self.scripts: dict[str, ShellReading] = {}
        """The scripts its wrappers run, read (each once: a shell's script is also the plain
        reading of `bash -c SCRIPT`)."""

    def script(self, script: str, depth: int, inside: str | None) -> ShellReading:
        if depth > MAX_DEPTH:
            return self._read((), Problem(f"scripts nested more than {MAX_DEPTH} deep", 1, 1))
        if len(script) > MAX_SCRIPT:
            return self._read((), Problem(f"more than {MAX_SCRIPT} characters", 1, 1, inside))
        if len(script) > self.budget.left:
            return self._read((), Problem(f"scripts of more than {MAX_READ} characters", 1, 1))
        self.budget.left -= len(script)
        if "\x00" in script:
            return self._read((), _at(script, script.index("\x00"), "a NUL character", inside))
        source = script.encode("utf-8", "surrogatepass")
        root = _parser().parse(source).root_node
        text = _Text(script, source, inside)
        problem: Problem | None = None
        commands: list[tuple[str, ...]] = []
        try:
            commands = _plain(root, text)
        except _NotPlain as refused:
            problem = refused.problem
        for node in _commands(root):
            self._add(_command_words(node, text), depth)
        if problem is None and not commands:
            problem = Problem("an empty command", 1, 1, inside)
        if problem is None and len(commands) == 1:
            return self._through_shell(commands[0], depth)
        return self._read(commands, problem)

    def argv(self, argv: tuple[str, ...], depth: int) -> ShellReading:
        if not argv:
            return self._read((), Problem("an empty command", 1, 1))
        self._add(argv, depth)
        return self._through_shell(argv, depth)

    def _through_shell(self, words: tuple[str, ...], depth: int) -> ShellReading:
        """`words`, one plain command, read as the script it gives a shell, if it does."""
        run = _shell_script(words)
        if run is None:
            return self._read([words], None)
        inner = self.scripts.get(run)
        if inner is None:
            inner = _Reader(self.budget).script(
                run, depth + 1, f"{program_name(words[0])} {words[1]}"
            )
        return self._read(inner.commands, inner.problem)

    def _read(self, commands: Sequence[tuple[str, ...]], problem: Problem | None) -> ShellReading:
        problem = problem or self.nested
        shown = () if problem is not None else tuple(commands)
        return ShellReading(shown, problem, tuple(self.found))

    def _add(self, words: tuple[Word, ...], depth: int) -> None:
        """Add a simple command to `found`, each of its wrappers taken off in turn, with the
        commands of the scripts they run."""
        layer: tuple[Word, ...] | None = words
        for _ in range(MAX_WRAPPERS + 1):
            if not layer:
                return
            self.found.append(layer)
            self.found.extend(_executed(layer))
            for script, program in _scripts_of(layer):
                if script is None:
                    self._note(Problem(f"a script {program} builds when it runs", 1, 1))
                    continue
                if script not in self.scripts:
                    self.scripts[script] = _Reader(self.budget).script(script, depth + 1, program)
                reading = self.scripts[script]
                self.found.extend(reading.found)
                self._note(reading.problem)
            layer = unwrapped(layer)
        self._note(Problem(f"wrappers nested more than {MAX_WRAPPERS} deep", 1, 1))

    def _note(self, problem: Problem | None) -> None:
        if self.nested is None and problem is not None:
            self.nested = problem


def _shell_script(words: Sequence[str]) -> str | None:
    """The script of `[SHELL, -c, SCRIPT]` (`-lc`, `-ec`, ...) for a shell of `SCRIPT_SHELLS`."""
    if len(words) != 3 or program_name(words[0]) not in SCRIPT_SHELLS:
        return None
    flags = words[1]
    if not re.fullmatch(r"-[celxu]+", flags) or "c" not in flags:
        return None
    return words[2]


def _scripts_of(words: tuple[Word, ...]) -> Iterator[tuple[str | None, str]]:
    """The scripts a command runs through a shell, `eval`, `trap` or their kin, with the
    program that runs each; `None` for one whose words are known only when it runs."""
    program = None if words[0] is None else program_name(words[0])
    if program is None:
        return
    if program in _DENY_SHELLS:
        flag, script = _shell_option_script(words[1:])
        if flag is not None:
            yield script, f"{program} {flag}"
        return
    if program == "trap":
        operands = [word for word in words[1:] if word is None or not word.startswith("-")]
        if operands:
            yield operands[0], "trap"
        return
    wrapper = WRAPPERS.get(program)
    if wrapper is None:
        return
    if wrapper.joined:
        rest = _after_options(words[1:], wrapper)
        if rest:
            known = [word for word in rest if word is not None]
            yield (" ".join(known) if len(known) == len(rest) else None), program
        return
    for index, word in enumerate(words[1:-1], start=1):
        if word in wrapper.script or word in wrapper.split:
            yield words[index + 1], f"{program} {word}"


def _executed(words: tuple[Word, ...]) -> list[tuple[Word, ...]]:
    """The commands `find` runs for each file (`-exec rm -rf {} ;`), as they are written."""
    if words[0] is None or program_name(words[0]) != "find":
        return []
    commands: list[tuple[Word, ...]] = []
    index = 1
    while index < len(words):
        if words[index] in _FIND_RUNS:
            end = index + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            if end > index + 1:
                commands.append(words[index + 1 : end])
            index = end
        index += 1
    return commands


_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _shell_option_script(words: Sequence[Word]) -> tuple[str | None, str | None]:
    """The option with which a shell's arguments give it a script (`-c`, `-lc`: `None` when
    they give none), and that script (`None`: known only when it runs)."""
    command: str | None = None
    index = 0
    while index < len(words):
        word = words[index]
        if word is None:
            return command, None
        if word == "--":
            index += 1
            break
        if word in _SHELL_TAKES_VALUE:
            index += 2
            continue
        if re.fullmatch(r"[-+][A-Za-z]+", word):
            if command is None and word.startswith("-") and "c" in word:
                command = word
            index += 1
            continue
        if word.startswith("--"):
            index += 1
            continue
        break
    if command is None or index >= len(words):
        return None, None
    return command, words[index]


# -- the plain reading ----------------------------------------------------------------------------


class _NotPlain(Exception):
    def __init__(self, problem: Problem) -> None:
        self.problem = problem


@dataclass(frozen=True, slots=True)
class _Text:
    """A script with its UTF-8 bytes, for turning the parse's byte offsets into positions."""

    script: str
    source: bytes
    inside: str | None
    words: dict[tuple[int, int], tuple[str, tuple[int, str] | None]] = field(default_factory=dict)
    """Each word's `_literal`, by its span: read once for the plain reading and the search."""

    def of(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def literal(self, node: Node) -> tuple[str, tuple[int, str] | None]:
        span = (node.start_byte, node.end_byte)
        read = self.words.get(span)
        if read is None:
            read = self.words[span] = _literal(self.of(node))
        return read

    def between(self, start: int, end: int) -> str:
        return self.source[start:end].decode("utf-8", "surrogatepass")

    def problem(self, byte: int, what: str) -> _NotPlain:
        index = len(self.source[:byte].decode("utf-8", "surrogatepass"))
        return _NotPlain(_at(self.script, index, what, self.inside))


def _at(script: str, index: int, what: str, inside: str | None) -> Problem:
    before = script[:index]
    line = before.count("\n") + 1
    column = index - (before.rfind("\n") + 1) + 1
    return Problem(what, line, column, inside, "\n" in script.strip("\n"))


def _plain(root: Node, text: _Text) -> list[tuple[str, ...]]:
    """The simple commands of a plain command, in order; `_NotPlain` saying why it is not."""
    if root.has_error:
        raise text.problem(_first_error(root).start_byte, _error_what(_first_error(root)))
    commands: list[tuple[str, ...]] = []
    covered = _sequence(root, text, commands)
    _check_gaps(root.start_byte, root.end_byte, covered, text, _BETWEEN_COMMANDS)
    return commands


def _sequence(node: Node, text: _Text, commands: list[tuple[str, ...]]) -> list[tuple[int, int]]:
    """Read a program, list or pipeline; the byte spans of what it is made of."""
    covered: list[tuple[int, int]] = []
    for child in node.children:
        kind = child.type
        if kind in ("list", "pipeline"):
            covered += _sequence(child, text, commands)
        elif kind == "command":
            commands.append(_plain_command(child, text))
            covered.append((child.start_byte, child.end_byte))
        elif kind in _OPERATORS and not child.is_named:
            covered.append((child.start_byte, child.end_byte))
        else:
            raise text.problem(child.start_byte, _what(child))
    return covered


def _plain_command(node: Node, text: _Text) -> tuple[str, ...]:
    words: list[str] = []
    spans: list[tuple[int, int]] = []
    for child in node.children:
        target = child
        if child.type == "command_name":
            if child.named_child_count != 1 or child.child_count != 1:
                raise text.problem(child.start_byte, "a program name it cannot read")
            target = child.children[0]
        if target.type not in _ARGUMENTS:
            raise text.problem(target.start_byte, _what(target))
        for inner in _walk(target) if target.child_count else ():
            if inner.is_named and inner.type not in _INSIDE_ARGUMENTS:
                raise text.problem(inner.start_byte, _what(inner))
        value, problem = text.literal(target)
        if problem is not None:
            offset, what = problem
            raw = text.of(target)[:offset].encode("utf-8", "surrogatepass")
            raise text.problem(target.start_byte + len(raw), what)
        words.append(value)
        spans.append((target.start_byte, target.end_byte))
    if not words:
        raise text.problem(node.start_byte, "an empty command")
    if words[0] in RESERVED_WORDS:
        raise text.problem(node.start_byte, f"the reserved word {words[0]!r} as a program")
    if words[0].startswith("%"):
        raise text.problem(node.start_byte, f"a job ({words[0]}) as a program")
    for (_, end), (start, _) in itertools.pairwise(spans):
        gap = text.between(end, start)
        if _BETWEEN_WORDS.fullmatch(gap) is None or not gap.replace("\\\n", ""):
            raise text.problem(end, "a line continuation inside a word")
    return tuple(words)


def _check_gaps(
    start: int,
    end: int,
    covered: list[tuple[int, int]],
    text: _Text,
    allowed: re.Pattern[str],
) -> None:
    """Refuse anything between the parts read that is not blank (a character the parse took
    for a blank that bash does not, such as a carriage return or a form feed)."""
    position = start
    for span_start, span_end in sorted(covered):
        if allowed.fullmatch(text.between(position, span_start)) is None:
            raise text.problem(position, "a character that is not a blank between words")
        position = max(position, span_end)
    if allowed.fullmatch(text.between(position, end)) is None:
        raise text.problem(position, "a character that is not a blank between words")


_SIMPLE_WORD = re.compile(r"[A-Za-z0-9_./:@%+,-][A-Za-z0-9_./:@%+,=-]*")
"""A word of plain characters only, the most common kind, read without a character loop."""


def _literal(raw: str) -> tuple[str, tuple[int, str] | None]:
    """A word's text after quote removal, or where and why it is not literal."""
    if _SIMPLE_WORD.fullmatch(raw):
        return raw, None
    out: list[str] = []
    index = 0
    if raw.startswith("="):
        return "", (0, "a word starting with = (zsh expands it)")
    while index < len(raw):
        char = raw[index]
        if char == "\\":
            if index + 1 >= len(raw):
                return "", (index, "a backslash ending the command")
            if raw[index + 1] != "\n":
                out.append(raw[index + 1])
            index += 2
        elif char == "'":
            end = raw.find("'", index + 1)
            if end < 0:
                return "", (index, "an unclosed quote")
            out.append(raw[index + 1 : end])
            index = end + 1
        elif char == '"':
            index, problem = _double_quoted(raw, index + 1, out)
            if problem is not None:
                return "", problem
        elif char in _UNQUOTED:
            return "", (index, _unquoted_what(raw, index))
        elif char in " \t\n;&|<>":
            return "", (index, "an operator or a blank inside a word")
        else:
            out.append(char)
            index += 1
    return "".join(out), None


def _double_quoted(raw: str, index: int, out: list[str]) -> tuple[int, tuple[int, str] | None]:
    """Read "..." from just after its opening quote; the index after its closing one."""
    while index < len(raw):
        char = raw[index]
        if char == '"':
            return index + 1, None
        if char == "\\" and index + 1 < len(raw) and raw[index + 1] in _DOUBLE_ESCAPES:
            out.append(raw[index + 1])
            index += 2
        elif char == "\\" and index + 1 < len(raw) and raw[index + 1] == "\n":
            index += 2
        elif char in _DOUBLE_QUOTED:
            return index, (index, _unquoted_what(raw, index))
        else:
            out.append(char)
            index += 1
    return index, (index, "an unclosed quote")


def _unquoted_what(raw: str, index: int) -> str:
    if raw[index] != "$":
        return _UNQUOTED.get(raw[index], _DOUBLE_QUOTED.get(raw[index], "an expansion"))
    following = raw[index + 1 : index + 3]
    if following.startswith("(("):
        return "an arithmetic expansion"
    if following.startswith("("):
        return "a command substitution"
    if following.startswith("'"):
        return "an ANSI-C quoted string ($'...')"
    if following.startswith('"'):
        return 'a translated string ($"...")'
    return "a parameter expansion"


def _what(node: Node) -> str:
    kind = node.type
    if kind in _WHAT:
        return _WHAT[kind]
    if node.is_named:
        return f"a {kind.replace('_', ' ')}"
    return f"the operator {kind!r}"


def _first_error(root: Node) -> Node:
    for node in _walk(root):
        if node.type == "ERROR" or node.is_missing:
            return node
    return root


def _error_what(node: Node) -> str:
    if node.is_missing:
        return f"an unfinished command (a missing {node.type!r})"
    return "a syntax error"


def _walk(root: Node) -> Iterator[Node]:
    """Every node under `root` (itself included), in document order."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


# -- everything it may run ------------------------------------------------------------------------


def _command_words(node: Node, text: _Text) -> tuple[Word, ...]:
    """A simple command's words as far as they are literal (`None` where they are not),
    leaving out its assignments and redirections."""
    words: list[Word] = []
    for child in node.children:
        target = child.children[0] if child.type == "command_name" and child.children else child
        if child.type == "command_name" or target.type in _ARGUMENTS or _is_expansion(target):
            literal = target.type in _ARGUMENTS and not (
                target.child_count
                and any(
                    inner.is_named and inner.type not in _INSIDE_ARGUMENTS
                    for inner in _walk(target)
                )
            )
            value, problem = text.literal(target) if literal else ("", (0, ""))
            words.append(value if problem is None else None)
    return tuple(words)


def _is_expansion(node: Node) -> bool:
    return node.type in (
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "ansi_c_string",
        "translated_string",
        "brace_expression",
    )


# -- the parser -----------------------------------------------------------------------------------

_local = threading.local()


def _parser() -> Parser:
    """This thread's bash parser (a parser is not shared between threads)."""
    parser: Parser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = _Grammar.get().parser()
    return parser


def _commands(root: Node) -> list[Node]:
    """Every `command` node under `root`, in document order (found by a query: the tree's own
    code walks it, not Python)."""
    found = _Grammar.get().captures(root).get("command", [])
    return sorted(found, key=lambda node: node.start_byte)


class _Grammar:
    """Bash's grammar (tree-sitter-bash, the `web` extra), loaded on first use."""

    _loaded: _Grammar | None = None

    def __init__(self) -> None:
        try:
            import tree_sitter
            import tree_sitter_bash
        except ImportError as missing:
            raise UserQuestionError(
                f"reading shell commands needs {missing.name}: pip install 'user-questions[web]'",
                ErrorCode.BAD_REQUEST,
            ) from missing
        self._tree_sitter = tree_sitter
        self._language = tree_sitter.Language(tree_sitter_bash.language())
        self._commands = tree_sitter.Query(self._language, "(command) @command")

    @classmethod
    def get(cls) -> _Grammar:
        if cls._loaded is None:
            cls._loaded = cls()
        return cls._loaded

    def parser(self) -> Parser:
        parser: Parser = self._tree_sitter.Parser(self._language)
        return parser

    def captures(self, root: Node) -> dict[str, list[Node]]:
        cursor = self._tree_sitter.QueryCursor(self._commands)
        found: dict[str, list[Node]] = cursor.captures(root)
        return found
