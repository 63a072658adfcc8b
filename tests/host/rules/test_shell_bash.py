"""The shell reader against bash itself: whenever it reads a command as plain words, bash run on
it passes exactly those words to its programs and creates nothing.

Bash (Debian's, 5.2) runs each command with its programs replaced by a script that records its
arguments (`prog`, `tool`), in an empty temporary folder, with its environment cleared and, where
the machine lets an unprivileged user make one (`unshare -rn`), no network. It runs twice, the
programs succeeding and then failing, so that both sides of `&&` and `||` run in one of the two.
A property test (hypothesis) builds commands from words, quotes, escapes, operators, expansions
and the characters the shell treats specially; a table holds the forms issue 35 found and the
grammar's corners.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from user_questions.host.rules.shell import read_script

BASH = shutil.which("bash")
PROGRAMS = ("prog", "tool")
"""The programs the commands run: scripts that record their arguments."""
RECORDER = """#!/bin/bash
printf '%s\\0' "${0##*/}" "$@" > "$UQ_LOG/$$"
exit "$UQ_STATUS"
"""
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")


@dataclass
class Sandbox:
    """A folder of recording programs, an empty folder to run in, and a folder of records."""

    root: Path
    isolate: list[str]

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def log(self) -> Path:
        return self.root / "log"

    def run(self, command: str, status: int) -> Counter[tuple[str, ...]]:
        """The argument lists bash gave the programs, running `command` with each program
        exiting with `status`; asserts that it created nothing where it ran."""
        for folder in (self.work, self.log):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
        environment = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "UQ_LOG": str(self.log),
            "UQ_STATUS": str(status),
        }
        assert BASH is not None
        subprocess.run(
            [*self.isolate, "/usr/bin/env", "-i", *_pairs(environment), BASH, "--norc", "-c",
             command],
            cwd=self.work,
            capture_output=True,
            timeout=20,
            check=False,
        )  # fmt: skip
        created = sorted(path.name for path in self.work.iterdir())
        assert created == [], f"{command!r} created {created}"
        runs: Counter[tuple[str, ...]] = Counter()
        for record in self.log.iterdir():
            words = record.read_bytes().split(b"\0")[:-1]
            runs[tuple(word.decode("utf-8", "surrogateescape") for word in words)] += 1
        return runs

    def agrees(self, command: str) -> None:
        """If the reader reads `command` as plain, bash runs exactly its words, and only them."""
        reading = read_script(command)
        if not reading.plain:
            return
        expected = Counter(reading.commands)
        succeeding, failing = self.run(command, 0), self.run(command, 1)
        for ran in (succeeding, failing):
            assert not ran - expected, f"{command!r}: bash ran {ran}, read as {expected}"
        assert set(succeeding) | set(failing) == set(expected), (
            f"{command!r}: bash ran {succeeding} and {failing}, read as {expected}"
        )


def _pairs(environment: dict[str, str]) -> list[str]:
    return [f"{name}={value}" for name, value in environment.items()]


def _isolation() -> list[str]:
    """`unshare -rn` (no network) where the machine lets this user make namespaces."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    tried = subprocess.run([unshare, "-rn", "true"], capture_output=True, check=False)
    return [unshare, "-rn"] if tried.returncode == 0 else []


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with tempfile.TemporaryDirectory() as folder:
        made = Sandbox(Path(folder), _isolation())
        made.bin.mkdir()
        for program in PROGRAMS:
            script = made.bin / program
            script.write_text(RECORDER)
            script.chmod(0o755)
        yield made


def test_the_recorder_records_what_bash_passes_and_a_command_that_writes_is_caught(
    sandbox: Sandbox,
) -> None:
    """The harness itself: a plain command's words are recorded as bash passes them, and a
    command that creates a file fails the check that nothing was created."""
    assert sandbox.run("prog 'a b' c && tool", 0) == Counter(
        {("prog", "a b", "c"): 1, ("tool",): 1}
    )
    with pytest.raises(AssertionError, match="created"):
        sandbox.run("prog x > made", 0)


TABLE = [
    # The forms issue 35 found allowed: none is plain, so none is run as plain words.
    "git status ${x:=\\$\\(touch\\ pwned\\)}${x@P}",
    "git status $x",
    "git status ${HOME}",
    "git status $'\\x3b id'",
    "prog ${x:=a\\[\\$\\(touch\\ pwned\\)\\]}$[x]",
    # Plain words that must be read exactly as bash passes them.
    "prog status -s",
    "prog status -- 'my file.txt'",
    "prog run test -- --watch",
    "prog a\\ b 'c d' \"e f\" g'h'\"i\"",
    'prog "a\\$b" "c\\`d" "e\\\\f" "g\\h" "i\\"j"',
    "prog \"a\\\nb\" 'c\\\nd'",
    "prog a \\\n b",
    "prog \\prog \\-x \\'",
    "'prog' a; \"tool\" b",
    "p\"ro\"g x && t'oo'l y || prog z | tool w",
    "prog a\nprog b\n\ntool c",
    "prog 'it''s' \"it's\" it\\'s",
    "prog '' \"\" x",
    "prog -- -rf --force=yes a=b c:d @e %f +g ,h",
    "prog é 日本 'ü' \"ñ\"",
    "prog a!b '!c' \"d!\"",
    "prog 0x10 010 1e3",
    # Near misses that must not be read as plain (bash would do more than pass words).
    "prog a\\\nb",
    "prog *.py",
    "prog ~/x",
    "prog x=~/y",
    "prog {a,b}",
    "prog a{b,c}d",
    "prog [ab]",
    "prog ?",
    "prog $(tool x)",
    "prog `tool x`",
    "prog <(tool x)",
    "prog $((1+2))",
    'prog $"x"',
    'prog "a$"',
    "prog 'a' $",
    "X=1 prog",
    "prog > out",
    "prog 2>&1",
    "prog < /dev/null",
    "prog <<< x",
    "prog <<EOF\nx\nEOF",
    "(prog)",
    "{ prog; }",
    "prog &",
    "prog |& tool",
    "! prog",
    "time prog",
    "if prog; then tool; fi",
    "for x in a; do prog; done",
    "prog # comment",
    "#prog",
    "prog\r",
    "prog a\x0bb",
    "prog a\x0cb",
    "",
    "prog 'unclosed",
    'prog "unclosed',
    "prog \\",
    "prog =x",
    "prog a^b",
    "prog a#b",
    "f() { prog; }; f",
    "coproc prog",
    "%1",
]


@pytest.mark.parametrize("command", TABLE)
def test_bash_runs_exactly_what_the_reader_reads_as_plain(sandbox: Sandbox, command: str) -> None:
    sandbox.agrees(command)


def test_the_table_reads_plain_and_not_plain_where_it_should() -> None:
    """The table's first forms are not plain, its words plain, its near misses not."""
    plain = [read_script(command).plain for command in TABLE]
    first_plain = TABLE.index("prog status -s")
    first_miss = TABLE.index("prog a\\\nb")
    assert plain[:first_plain] == [False] * first_plain
    assert plain[first_plain:first_miss] == [True] * (first_miss - first_plain)
    assert not any(plain[first_miss:])


# -- generated commands ---------------------------------------------------------------------------

_CHARACTERS = "abz09-./=:@%+,_"
_RISKY = [
    "*", "?", "[a]", "~", "{a,b}", "{", "}", "!", "#", "^", "=", "$", "$x", "${x}", "${x:-a}",
    "$(prog s)", "`tool t`", "$((1+2))", "$'a\\x3bb'", '$"t"', "\\", "\\\n", "\r", "\x0b", "(",
    ")", "<", ">", ">>", "2>&1", "&", "|&", ";;", "$(touch pwned)", "`touch pwned`",
    "${x:=\\$\\(touch\\ pwned\\)}${x@P}", "\t", "\\$x", "\\`", "\\*", "\\~", "\\{",
]  # fmt: skip
_QUOTED_TEXT = st.lists(
    st.sampled_from([*"ab $`\\\"';&|*?~{}()#!\n\t", "$x", "${x}", "$(prog q)"]), max_size=6
).map("".join)


def _quoted() -> st.SearchStrategy[str]:
    single = _QUOTED_TEXT.map(lambda text: "'" + text.replace("'", "") + "'")
    double = _QUOTED_TEXT.map(lambda text: '"' + text.replace('"', '\\"') + '"')
    escaped = st.sampled_from(list("ab $;&|*?~'\"\\\n{}#")).map(lambda c: "\\" + c)
    return st.one_of(single, double, escaped)


_PIECE = st.one_of(
    st.text(alphabet=_CHARACTERS, min_size=1, max_size=4),
    _quoted(),
    st.sampled_from(_RISKY),
)
_WORD = st.lists(_PIECE, min_size=1, max_size=3).map("".join)
_PROGRAM = st.sampled_from(
    ["prog", "tool", "'prog'", '"tool"', "\\prog", 'p"ro"g', "t'oo'l", "time prog", "X=1 prog"]
)
_BETWEEN = st.sampled_from([" ", "  ", "\t", " \\\n "])
_OPERATOR = st.sampled_from(
    [" && ", " || ", "; ", " | ", "\n", "&&", "||", ";", "|", " & ", " |& ", "\n\n", " ;\n"]
)


@st.composite
def _command(draw: st.DrawFn) -> str:
    count = draw(st.integers(min_value=1, max_value=3))
    parts = []
    for index in range(count):
        words = draw(st.lists(_WORD, max_size=3))
        simple = draw(_PROGRAM) + "".join(draw(_BETWEEN) + word for word in words)
        parts.append(simple if index == 0 else draw(_OPERATOR) + simple)
    return "".join(parts)


@settings(
    max_examples=250,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(_command())
def test_bash_runs_exactly_the_words_of_any_command_the_reader_reads_as_plain(
    sandbox: Sandbox, command: str
) -> None:
    sandbox.agrees(command)


def test_the_generated_commands_are_plain_often_enough_to_test_something() -> None:
    """The generator's commands are a mix: enough of them plain that bash checks words."""
    found = []

    @settings(max_examples=250, derandomize=True, database=None, deadline=None)
    @given(_command())
    def read(command: str) -> None:
        found.append(read_script(command).plain)

    read()
    assert sum(found) >= 40, f"{sum(found)} plain of {len(found)}"
    assert len(found) - sum(found) >= 40
