"""`uq ask` in process: how a request is built and refused, and what is printed for an answer.

The person answers through the line dialogue (stdin is not a terminal here); the same command in
a pseudo-terminal is tested in `tests/e2e/test_terminal_ask.py`.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Protocol

import pytest

from user_questions.cli import app
from user_questions.cli._ask import MAX_INPUT_BYTES
from user_questions.providers import terminal


class Uq(Protocol):
    def __call__(self, *args: str, stdin: str = "") -> tuple[object, str, str]: ...


@pytest.fixture
def uq(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Uq:
    """Run `uq ask ARGS` with `stdin` as its input: `(exit status, stdout, stderr)`."""

    def run(*args: str, stdin: str = "") -> tuple[object, str, str]:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        try:
            status = app(["ask", *args], result_action="return_value")
        except SystemExit as exit:
            status = exit.code
        out, err = capsys.readouterr()
        return status, out, err

    return run


def _request(tmp_path: Path, *questions: dict[str, object]) -> str:
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"questions": list(questions)}), encoding="utf-8")
    return str(path)


def test_the_chosen_label_alone_goes_to_stdout_and_the_dialogue_to_stderr(uq: Uq) -> None:
    status, out, err = uq("Deploy to production?", "-o", "Yes", "-o", "No", stdin="2\n")
    assert (status, out) == (0, "No\n")
    assert "Deploy to production?\n  1. Yes\n  2. No\n" in err


def test_json_prints_the_compact_wire_answer_with_non_ascii_kept(uq: Uq) -> None:
    status, out, _ = uq(
        "Ça va ?", "-o", "Oui ✓", "-o", "Non", "--json", "--id", "mood", stdin="1\n"
    )
    assert (status, out) == (0, '{"answers":[{"id":"mood","selected":["Oui ✓"]}]}\n')


def test_multi_select_prints_one_label_per_line_in_option_order(uq: Uq) -> None:
    status, out, _ = uq("Checks?", "--multi", "-o", "a", "-o", "b", "-o", "c", stdin="3,1\n")
    assert (status, out) == (0, "a\nc\n")


def test_typed_text_is_printed_after_the_labels(uq: Uq) -> None:
    args = ("Checks?", "--multi", "-o", "a", "-o", "b")
    assert uq(*args, stdin="2,3\nand docs\n")[:2] == (0, "b\nand docs\n")
    assert uq("When?", "-o", "Now", stdin="next week\n")[:2] == (0, "next week\n")


def test_a_skipped_question_prints_nothing(uq: Uq) -> None:
    assert uq("Anything else?", stdin="\n")[:2] == (0, "")
    assert uq("Anything else?", "--json", stdin="\n")[:2] == (
        0,
        '{"answers":[{"id":"1","selected":[]}]}\n',
    )


def test_a_batch_prefixes_each_line_with_the_question_id(uq: Uq, tmp_path: Path) -> None:
    request = _request(
        tmp_path,
        {"id": "target", "question": "Where?", "options": [{"label": "prod"}, {"label": "dev"}]},
        {
            "id": "checks",
            "question": "Which?",
            "multiSelect": True,
            "options": [{"label": "lint"}, {"label": "tests"}],
        },
        {"id": "note", "question": "Notes?"},
    )
    status, out, _ = uq("--request", request, stdin="1\n1,2\n\n\n")
    assert (status, out) == (0, "target\tprod\nchecks\tlint\nchecks\ttests\n")


def test_descriptions_header_and_detail_are_shown(uq: Uq, tmp_path: Path) -> None:
    detail = tmp_path / "detail.md"
    detail.write_text("Ships **1.4.2**.", encoding="utf-8")
    args = ("Deploy?", "-o", "Yes (Recommended)", "-o", "No", "-o", "Later")
    descriptions = ("--option-description", "All regions.", "--option-description", "")
    status, _, err = uq(*args, *descriptions, "--header", "Deploy", "--detail-file", str(detail))
    assert status == 3
    assert err.startswith(
        "[Deploy]\nDeploy?\n\nShips **1.4.2**.\n\n"
        "  1. Yes (recommended)\n     All regions.\n  2. No\n  3. Later\n"
    )


def test_a_plan_review_offers_the_approve_option_first(uq: Uq, tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text("1. Add the flag\n2. Test it\n", encoding="utf-8")
    args = ("Approve?", "--plan-file", str(plan), "-o", "Keep planning", "-o", "Approve")
    status, out, err = uq(*args, "--approve", "Approve", stdin="1\n")
    assert (status, out) == (0, "Approve\n")
    assert "----- plan -----\n1. Add the flag\n2. Test it\n\n----- end of plan -----\n" in err
    assert "  1. Approve\n  2. Keep planning\n" in err


def _huge(tmp_path: Path) -> str:
    path = tmp_path / "huge.md"
    path.write_bytes(b"x" * (MAX_INPUT_BYTES + 1))
    return str(path)


def _latin1(tmp_path: Path) -> str:
    path = tmp_path / "latin1.md"
    path.write_bytes("café".encode("latin-1"))
    return str(path)


BAD_INPUT = [
    (["Go?", "-o", "a", "-o", "a"], 'question 1 offers the option label "a" more than once'),
    (
        ["Go?", "--detail", "plan", "--approve", "Ship", "-o", "Go"],
        'question 1 declares intent plan-review whose approve label "Ship" names none of its '
        "options",
    ),
    (
        ["Go?", "--approve", "Go", "-o", "Go"],
        "question 1 declares intent plan-review without the detail it reviews",
    ),
    (
        ["Go?", "--plan-file", "/nonexistent/plan.md", "--approve", "Go", "-o", "Go"],
        "cannot read --plan-file /nonexistent/plan.md: No such file or directory",
    ),
    (["Go?", "--plan-file", "-"], "--plan-file needs --approve LABEL: the option that approves it"),
    (
        ["Go?", "--detail", "x", "--detail-file", "-"],
        "give one of --detail and --detail-file, not both",
    ),
    (
        ["Go?", "-o", "a", "--option-description", "x", "--option-description", "y"],
        "--option-description is given 2 times for 1 option(s)",
    ),
    (["-o", "a"], 'give a question ("uq ask QUESTION -o ...") or --request FILE|-'),
    (
        ["Go?", "--request", "-", "-o", "a", "--multi"],
        "--request holds the whole request; do not give a question, --option, --multi as well",
    ),
    (["Go?", "--timeout", "-1"], "--timeout must be a number of seconds, 0 or more; got -1.0"),
    (["Go?", "--timeout", "nan"], "--timeout must be a number of seconds, 0 or more; got nan"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUT)
def test_bad_input_is_refused_with_one_line_before_anything_is_shown(
    uq: Uq, args: list[str], message: str
) -> None:
    assert uq(*args, stdin="1\n") == (2, "", f"uq ask: {message}\n")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"questions": [{"id": "a", "question": "?"}, {"id": "a", "question": "?"}]},
            'question id "a" appears more than once; ids must be unique within a request',
        ),
        ({"questions": []}, "ask_user_question requires at least one question"),
        (
            {"questions": [{"id": "a", "question": "?", "multiSelect": "yes"}]},
            'invalid request: property "questions[0].multiSelect" must be a boolean, got string',
        ),
        (
            {"questions": [{"id": "a"}]},
            'invalid request: missing required property "questions[0].question"',
        ),
    ],
)
def test_a_bad_request_document_is_refused_with_one_line(
    uq: Uq, tmp_path: Path, document: dict[str, object], message: str
) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert uq("--request", str(path)) == (2, "", f"uq ask: {message}\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 1100 + "]" * 1100, "uq ask: invalid request: nested deeper than 64 levels\n"),
        (
            '{"questions": [{"id": "\\ud800", "question": "?"}]}',
            'uq ask: invalid request: property "questions[0].id" holds a lone surrogate (U+D800), '
            "which is not text\n",
        ),
        (
            json.dumps({"questions": [{"id": "a", "question": "?", "header": "h" * 1001}]}),
            'uq ask: property "questions[0].header" is 1001 characters long; '
            "at most 1000 are allowed\n",
        ),
        (
            json.dumps({"questions": [{"id": f"q{n}", "question": "?"} for n in range(33)]}),
            "uq ask: a request holds at most 32 questions, got 33\n",
        ),
    ],
)
def test_a_request_beyond_the_limits_is_refused_before_anything_is_shown(
    uq: Uq, tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "request.json"
    path.write_text(text, encoding="utf-8")
    assert uq("--request", str(path)) == (2, "", message)


def test_a_request_that_is_not_json_is_refused(uq: Uq) -> None:
    status, out, err = uq("--request", "-", stdin='{"questions": [')
    assert (status, out) == (2, "")
    assert err.startswith("uq ask: invalid request: not valid JSON (")
    assert err.count("\n") == 1


def test_files_too_large_or_not_utf8_are_refused(uq: Uq, tmp_path: Path) -> None:
    huge, latin1 = _huge(tmp_path), _latin1(tmp_path)
    assert uq("Go?", "--detail-file", huge) == (
        2,
        "",
        f"uq ask: --detail-file {huge} is larger than 1024 KiB\n",
    )
    assert uq("--request", huge)[0] == 2
    assert uq("Go?", "--detail-file", latin1) == (
        2,
        "",
        "uq ask: --detail-file is not UTF-8 text\n",
    )


def test_the_detail_comes_from_one_source_only(uq: Uq) -> None:
    args = ("Go?", "--detail-file", "-", "--plan-file", "-", "--approve", "a", "-o", "a")
    assert uq(*args)[2] == "uq ask: give one of --detail-file and --plan-file, not both\n"


def test_end_of_input_is_a_dismissal(uq: Uq) -> None:
    status, out, err = uq("Deploy?", "-o", "Yes")
    assert (status, out) == (3, "")
    assert err.endswith("> \nuq ask: the user cancelled ask_user_question\n")


def test_a_zero_timeout_times_out_before_anything_is_shown(uq: Uq) -> None:
    assert uq("Deploy?", "-o", "Yes", "--timeout", "0", stdin="1\n") == (
        4,
        "",
        "uq ask: ask_user_question timed out before the user answered\n",
    )


def test_a_terminal_without_the_extra_gets_the_install_line(
    uq: Uq, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(terminal, "_is_tty", lambda stream: True)
    monkeypatch.delitem(sys.modules, "user_questions.providers._terminal_prompt", raising=False)
    for name in ["rich", *(name for name in sys.modules if name.startswith("rich."))]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    assert uq("Deploy?", "-o", "Yes") == (
        1,
        "",
        "uq ask: asking at a terminal needs the terminal extra (rich is missing): "
        "pip install 'user-questions[terminal]'\n",
    )
