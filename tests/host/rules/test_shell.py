"""The shell reader: what makes a command plain, where the first thing that does not is, the
words of argv forms and of scripts run through a shell, and everything a command may run once
its wrappers are taken off (what deny rules search)."""

from __future__ import annotations

import pytest

from user_questions.host.rules.shell import (
    MAX_DEPTH,
    MAX_READ,
    MAX_SCRIPT,
    MAX_WRAPPERS,
    WRAPPERS,
    read_argv,
    read_script,
    unwrapped,
)


def problem(command: str) -> str:
    reading = read_script(command)
    assert reading.problem is not None, f"{command!r} read as plain: {reading.commands}"
    return str(reading.problem)


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("git status ${x:=\\$\\(touch\\ pwned\\)}${x@P}", "a parameter expansion at column 12"),
        ("git status $x", "a parameter expansion at column 12"),
        ("git status $'\\x3b id'", "an ANSI-C quoted string ($'...') at column 12"),
        ("git status $(id)", "a command substitution at column 12"),
        ('git status "$(id)"', "a command substitution at column 13"),
        ("git status `id`", "a command substitution at column 12"),
        ("git log $((1+1))", "an arithmetic expansion at column 9"),
        ("diff <(ls a) b", "a process substitution at column 6"),
        ("GIT_EXTERNAL_DIFF=x git status", "an assignment at column 1"),
        ("git status > out", "a redirection at column 1"),
        ("cat <<EOF\nx\nEOF", "a redirection at line 1, column 1"),
        ("(git status)", "a subshell at column 1"),
        ("{ git status; }", "a group { ... } at column 1"),
        ("if true; then ls; fi", "control flow (if) at column 1"),
        ("for f in a; do ls; done", "control flow (for) at column 1"),
        ("while true; do ls; done", "control flow (while) at column 1"),
        ("case x in x) ls;; esac", "control flow (case) at column 1"),
        ("f() { ls; }", "a function definition at column 1"),
        ("! git status", "a negation (!) at column 1"),
        ("[[ -f x ]]", "a test ([[ ... ]]) at column 1"),
        ("export A=1", "a declaration (export, declare, local, ...) at column 1"),
        ("git status &", "a background job (&) at column 12"),
        ("make |& tee log", "a pipe of errors too (|&) at column 6"),
        ("ls # why", "a comment at column 4"),
        ("time make", "the reserved word 'time' as a program at column 1"),
        ("ls *.py", "a glob pattern (*) at column 4"),
        ("ls ~/x", "a tilde expansion (~) at column 4"),
        ("echo {a,b}", "a brace expansion ({) at column 6"),
        ("git status 'unclosed", "a syntax error at column 11"),
        ("ls a\\\nb", "a line continuation inside a word at line 1, column 5"),
        ("ls\r", "a character that is not a blank between words at column 3"),
        ("", "an empty command at column 1"),
        ("ls\x00x", "a NUL character at column 3"),
        ("ls\ncat $x", "a parameter expansion at line 2, column 5"),
    ],
)
def test_what_is_not_plain_is_said_where_it_is(command: str, said: str) -> None:
    assert problem(command) == f"not a plain command: {said}"


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("git status -s", [["git", "status", "-s"]]),
        ("git status -- 'my file.txt'", [["git", "status", "--", "my file.txt"]]),
        ("npm run test -- --watch", [["npm", "run", "test", "--", "--watch"]]),
        ("git status && git diff", [["git", "status"], ["git", "diff"]]),
        ("a || b; c | d\ne", [["a"], ["b"], ["c"], ["d"], ["e"]]),
        ('echo "a\\$b" \'c\'d\\ e "x\\y"', [["echo", "a$b", "cd e", "x\\y"]]),
        ("git  \\\n  status", [["git", "status"]]),
        ("bash -lc 'git status && git diff'", [["git", "status"], ["git", "diff"]]),
        ("sh -c \"sh -c 'ls'\"", [["ls"]]),
    ],
)
def test_a_plain_command_is_read_as_the_words_bash_passes(
    command: str, words: list[list[str]]
) -> None:
    reading = read_script(command)
    assert reading.problem is None
    assert [list(command) for command in reading.commands] == words


def test_argv_forms_are_words_as_given_and_a_shells_script_is_read_as_its_script() -> None:
    assert read_argv(["git", "status", "$(id)"]).commands == (("git", "status", "$(id)"),)
    assert read_argv(["bash", "-lc", "git status"]).commands == (("git", "status"),)
    assert read_argv(["/bin/sh", "-c", "ls; pwd"]).commands == (("ls",), ("pwd",))
    inner = read_argv(["bash", "-lc", "git status ${x:=a\\[\\$\\(id\\)\\]}$[x]"]).problem
    assert str(inner) == (
        "not a plain command: a parameter expansion at column 12 of the script bash -lc runs"
    )
    # Not the form a shell reads as a script: words as given (an allow must name `bash`).
    assert read_argv(["bash", "-c", "ls", "x"]).commands == (("bash", "-c", "ls", "x"),)
    assert read_argv(["zsh", "-i", "-c", "ls"]).commands == (("zsh", "-i", "-c", "ls"),)


DENIED_FORMS = [
    "sudo rm -rf /",
    "sudo -u root -- rm -rf /",
    "sudo -uroot rm -rf /",
    "/bin/rm -rf /",
    "\\rm -rf /",
    "'rm' -rf /",
    "rm -fr /",
    "rm -r -f /",
    "command rm -rf /",
    "builtin command exec rm -rf /",
    "env rm -rf /",
    "env -i A=1 -u B rm -rf /",
    "env -S 'rm -rf /'",
    "(rm -rf /)",
    "{ rm -rf /; }",
    "bash -c 'rm -rf /'",
    "sh -ec 'rm -rf /'",
    "bash -x -o pipefail -c 'cd / && rm -rf /'",
    "eval rm -rf /",
    "eval 'rm -rf /'",
    "nohup rm -rf / &",
    "time rm -rf /",
    "nice -n 5 rm -rf /",
    "timeout -s KILL 10 rm -rf /",
    "xargs -0 rm -rf < list",
    "echo / | xargs rm -rf",
    "! rm -rf /",
    "ls && rm -rf /",
    "echo $(rm -rf /)",
    'echo "`rm -rf /`"',
    "if true; then rm -rf /; fi",
    "for x in y; do rm -rf /; done",
    "f() { rm -rf /; }",
    "cat <(rm -rf /)",
    "x=$(rm -rf /) ls",
    "stdbuf -o0 ionice -c3 setsid rm -rf /",
    "su -c 'rm -rf /' root",
    "watch -n 1 rm -rf /",
    "trap 'rm -rf /' EXIT",
    "find / -exec rm -rf {} +",
    "busybox rm -rf /",
    "sudo sh -c \"bash -c 'rm -rf /'\"",
]


@pytest.mark.parametrize("command", DENIED_FORMS)
def test_everything_a_command_may_run_is_found_wrappers_taken_off(command: str) -> None:
    found = read_script(command).found
    assert any(
        words[:1] and words[0] is not None and words[0].rsplit("/", 1)[-1].lstrip("\\") == "rm"
        for words in found
    ), found


def test_a_wrapper_is_taken_off_with_its_options_operands_and_assignments() -> None:
    assert unwrapped(["sudo", "-u", "root", "A=1", "rm", "x"]) == ("rm", "x")
    assert unwrapped(["timeout", "--signal=KILL", "5s", "make"]) == ("make",)
    assert unwrapped(["nice", "-10", "make"]) == ("make",)
    assert unwrapped(["command", "-v", "rm"]) is None  # only looks rm up
    assert unwrapped(["sudo", "-l"]) is None
    assert unwrapped(["su", "root"]) is None  # names a user, runs no command
    assert unwrapped(["git", "status"]) is None
    assert {"sudo", "env", "command", "exec", "nohup", "time", "nice", "timeout", "xargs"} <= set(
        WRAPPERS
    )


def test_scripts_nested_too_deep_too_long_or_built_at_run_time_are_not_plain() -> None:
    assert "nested more than" in problem("eval " * (MAX_DEPTH + 2) + "ls")
    deep = "ls"
    for _ in range(MAX_DEPTH + 1):
        deep = "bash -c " + _quoted(deep)
    assert "not a plain command" in problem(deep)  # too deep, or too long, to read whole
    assert "wrappers nested more than" in problem("nice " * (MAX_WRAPPERS + 1) + "ls")
    assert f"scripts of more than {MAX_READ} characters" in problem("eval eval ls " + "x " * 30000)
    assert "more than" in problem("ls " + "a" * MAX_SCRIPT)
    assert problem("eval $x") == "not a plain command: a parameter expansion at column 6"
    assert problem("sudo bash -c 'ls $x'") == (
        "not a plain command: a parameter expansion at column 4 of the script bash -c runs"
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
