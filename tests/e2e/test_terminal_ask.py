"""`uq ask` in a real pseudo-terminal (xterm-256color, 100x30): what a person sees and presses.

Each test reads the screen as a person would, through a VT100 screen model, and waits for what
should appear under a deadline; keys are sent only once the screen shows the prompt they answer.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.e2e.pty_terminal import (
    COLUMNS,
    CTRL_C,
    DOWN,
    ENTER,
    ESC,
    PAGE_DOWN,
    PAGE_UP,
    ROWS,
    SPACE,
    UP,
    UQ,
    PtyTerminal,
)

HINT = "esc dismiss"
DEPLOY = ["Deploy to production?", "-o", "Yes (Recommended)", "-o", "No"]


def ask(
    spawn: type[PtyTerminal], *args: str, rows: int = ROWS, columns: int = COLUMNS
) -> PtyTerminal:
    """`uq ask ARGS` in a new terminal, once its prompt is up."""
    terminal = spawn([UQ, "ask", *args], rows=rows, columns=columns)
    terminal.wait_for(HINT)
    return terminal


def lines(terminal: PtyTerminal) -> list[str]:
    return terminal.display.splitlines()


def test_enter_answers_with_the_recommended_option_highlighted_first(
    spawn: type[PtyTerminal],
) -> None:
    terminal = ask(spawn, *DEPLOY, "--header", "Deploy", "--option-description", "All regions.")
    assert lines(terminal) == [
        " Deploy",
        "Deploy to production?",
        "❯ 1. Yes (recommended)",
        "     All regions.",
        "  2. No",
        "  3. Other…",
        "  4. Skip",
        "",
        "  ↑↓ move · 1-4 jump · n note · enter choose · esc dismiss",
    ]
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal) == [" Deploy", "Deploy to production?", "  ✔ Yes", "Yes (Recommended)"]


def test_arrows_and_digits_move_the_highlight(spawn: type[PtyTerminal]) -> None:
    terminal = ask(spawn, *DEPLOY, "-o", "Later")
    terminal.send(DOWN)
    terminal.wait_for("❯ 2. No")
    terminal.send("3")
    terminal.wait_for("❯ 3. Later")
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-2:] == ["  ✔ Later", "Later"]


def test_a_list_taller_than_the_terminal_scrolls_to_keep_the_highlight_in_sight(
    spawn: type[PtyTerminal],
) -> None:
    options = [word for number in range(1, 41) for word in ("-o", f"option {number}")]
    terminal = ask(spawn, "Pick one", *options)
    terminal.send(UP)  # wraps round to the last row, far below the screen's 30 rows
    screen = terminal.wait_for("❯ 42. Skip")
    assert screen.splitlines()[-2:] == [
        "❯ 42. Skip",
        "  ↑↓ move · 1-9 jump · n note · enter choose · esc dismiss",
    ]
    terminal.send(UP + UP + ENTER)  # past Other… to the last option
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-1] == "option 40"


def test_multi_select_ticks_with_space_and_digits_and_answers_in_option_order(
    spawn: type[PtyTerminal],
) -> None:
    terminal = ask(spawn, "Which checks?", "--multi", "-o", "Lint", "-o", "Tests", "-o", "Docs")
    terminal.send("3")
    terminal.wait_for("[x] 3. Docs")
    terminal.send(DOWN + DOWN + SPACE)  # from Docs, wrapping round to Lint
    terminal.wait_for("❯ [x] 1. Lint")
    assert "space or 1-4 tick · n note · enter submit" in terminal.display
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-3:] == ["  ✔ Lint, Docs", "Lint", "Docs"]


def test_other_s_digit_opens_a_text_field_whose_text_is_the_answer(
    spawn: type[PtyTerminal],
) -> None:
    terminal = ask(spawn, *DEPLOY, "--json")
    terminal.send("3")
    terminal.wait_for("Your answer:")
    terminal.send("after the freeze")
    terminal.wait_for("Your answer: after the freeze")
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert json.loads(lines(terminal)[-1]) == {
        "answers": [{"id": "1", "selected": [], "custom": "after the freeze"}]
    }
    assert lines(terminal)[-2] == "  ✔ Other: after the freeze"


def test_a_question_without_options_is_a_text_field(spawn: type[PtyTerminal]) -> None:
    terminal = ask(spawn, "Anything to add?")
    assert lines(terminal) == [
        "Anything to add?",
        "›",
        "  enter submit · enter on nothing skips · esc dismiss",
    ]
    terminal.send("ship it" + ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-2:] == ["  ✔ ship it", "ship it"]


def test_skip_answers_with_nothing_selected(spawn: type[PtyTerminal]) -> None:
    terminal = ask(spawn, *DEPLOY, "--json")
    terminal.send("4" + ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-2:] == ["  – skipped", '{"answers":[{"id":"1","selected":[]}]}']


def test_esc_dismisses_with_status_3_and_leaves_no_prompt(spawn: type[PtyTerminal]) -> None:
    terminal = ask(spawn, *DEPLOY)
    terminal.send(ESC)
    assert terminal.wait_exit() == 3
    assert lines(terminal) == [
        "Deploy to production?",
        "uq ask: the user cancelled ask_user_question",
    ]


PLAN_TAIL = [
    "  3. Other… (feedback on the plan)",
    "  4. Skip",
    "",
    "  ↑↓ move · 1-4 jump · n note · enter choose · esc dismiss",
]
"""The last rows of a plan review's prompt."""


def _plan(tmp_path: Path) -> list[str]:
    plan = tmp_path / "plan.md"
    plan.write_text("# Release 1.5\n\n1. Tag **v1.5.0**\n2. Publish\n", encoding="utf-8")
    return [
        "Approve this plan?",
        "--header",
        "Plan review",
        "--plan-file",
        str(plan),
        "--approve",
        "Approve",
        "-o",
        "Keep planning",
        "-o",
        "Approve",
    ]


def test_plan_review_shows_the_plan_and_approves_with_the_first_option(
    spawn: type[PtyTerminal], tmp_path: Path
) -> None:
    terminal = ask(spawn, *_plan(tmp_path))
    screen = terminal.display
    assert "│  1 Tag v1.5.0" in screen  # markdown rendered, not shown as source
    assert "Release 1.5" in screen
    assert "#" not in screen
    assert "**" not in screen
    assert lines(terminal)[-6:] == [
        "❯ 1. Approve",
        "  2. Keep planning",
        *PLAN_TAIL,
    ]
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-2:] == ["  ✔ Approve", "Approve"]


def test_plan_review_declines_with_feedback(spawn: type[PtyTerminal], tmp_path: Path) -> None:
    terminal = ask(spawn, *_plan(tmp_path), "--json")
    terminal.send("3")
    terminal.wait_for("Feedback:")
    terminal.send("publish before tagging" + ENTER)
    assert terminal.wait_exit() == 0
    assert json.loads(lines(terminal)[-1]) == {
        "answers": [{"id": "1", "selected": [], "custom": "publish before tagging"}]
    }


def test_plan_review_declines_with_the_other_option(
    spawn: type[PtyTerminal], tmp_path: Path
) -> None:
    terminal = ask(spawn, *_plan(tmp_path))
    terminal.send("2" + ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-1] == "Keep planning"


def test_long_labels_and_descriptions_wrap_under_their_text_at_60_columns(
    spawn: type[PtyTerminal],
) -> None:
    terminal = ask(
        spawn,
        "Which package manager should this repository use for its JavaScript dependencies?",
        "-o",
        "pnpm, a fast and disk-space efficient package manager (Recommended)",
        "--option-description",
        "Strict node_modules layout and a content-addressed store shared across projects.",
        "-o",
        "npm",
        columns=60,
    )
    assert lines(terminal) == [
        "Which package manager should this repository use for its",
        "JavaScript dependencies?",
        "❯ 1. pnpm, a fast and disk-space efficient package manager",
        "     (recommended)",
        "     Strict node_modules layout and a content-addressed",
        "     store shared across projects.",
        "  2. npm",
        "  3. Other…",
        "  4. Skip",
        "",
        "  ↑↓ move · 1-4 jump · n note · enter choose · esc dismiss",
    ]
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal) == [
        "Which package manager should this repository use for its",
        "JavaScript dependencies?",
        "  ✔ pnpm, a fast and disk-space efficient package manager",
        "pnpm, a fast and disk-space efficient package manager (Recom",  # stdout, as the
        "mended)",  # terminal wraps it
    ]


def test_korean_labels_wrap_at_spaces_by_display_width_at_60_columns(
    spawn: type[PtyTerminal],
) -> None:
    terminal = ask(
        spawn,
        "어떤 패키지 관리자를 사용할까요? 모든 기여자가 같은 도구를 쓰도록 하나만 고르세요.",
        "--header",
        "패키지",
        "-o",
        "npm 대신 pnpm을 사용하여 디스크 공간을 절약하고 설치 속도를 높입니다 (추천)",
        "--option-description",
        "모든 프로젝트가 하나의 저장소를 공유하므로 같은 패키지를 여러 번 내려받지 않습니다.",
        "-o",
        "npm을 그대로 사용합니다",
        columns=60,
    )
    assert lines(terminal) == [
        " 패키지",
        "어떤 패키지 관리자를 사용할까요? 모든 기여자가 같은 도구를",
        "쓰도록 하나만 고르세요.",
        "❯ 1. npm 대신 pnpm을 사용하여 디스크 공간을 절약하고 설치",
        "     속도를 높입니다 (recommended)",
        "     모든 프로젝트가 하나의 저장소를 공유하므로 같은",
        "     패키지를 여러 번 내려받지 않습니다.",
        "  2. npm을 그대로 사용합니다",
        "  3. Other…",
        "  4. Skip",
        "",
        "  ↑↓ move · 1-4 jump · n note · enter choose · esc dismiss",
    ]
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[3:] == [
        "  ✔ npm 대신 pnpm을 사용하여 디스크 공간을 절약하고 설치",
        "    속도를 높입니다",
        "npm 대신 pnpm을 사용하여 디스크 공간을 절약하고 설치 속도를",
        "높입니다 (추천)",
    ]


def test_a_resize_draws_the_header_question_plan_and_options_again_at_the_new_width(
    spawn: type[PtyTerminal], tmp_path: Path
) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(
        "# Add `--dry-run` to `deploy`\n\n1. Parse the flag in `cli.py`.\n"
        "2. Skip the upload step when it is set, printing what would be sent.\n",
        encoding="utf-8",
    )
    terminal = ask(
        spawn,
        "Approve this plan and leave plan mode?",
        "--header",
        "Plan review",
        "--plan-file",
        str(plan),
        "--approve",
        "Approve",
        "-o",
        "Approve",
        "--option-description",
        "Leave plan mode and start making the changes the plan describes, one by one.",
        "-o",
        "Keep planning",
        columns=100,
    )
    assert "╰" + "─" * 98 + "╯" in lines(terminal)
    terminal.resize(30, 60)
    screen = terminal.wait_for(lambda screen: "╰" + "─" * 58 + "╯" in screen.splitlines())
    assert screen.splitlines() == [
        " Plan review",
        "Approve this plan and leave plan mode?",
        "╭─ Plan ───────────────────────────────────────────────────╮",
        "│                 Add --dry-run to deploy                  │",
        "│                                                          │",
        "│  1 Parse the flag in cli.py.                             │",
        "│  2 Skip the upload step when it is set, printing what    │",
        "│    would be sent.                                        │",
        "╰──────────────────────────────────────────────────────────╯",
        "❯ 1. Approve",
        "     Leave plan mode and start making the changes the plan",
        "     describes, one by one.",
        "  2. Keep planning",
        *PLAN_TAIL,
    ]
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-2:] == ["  ✔ Approve", "Approve"]


def test_a_plan_taller_than_the_terminal_scrolls_with_the_page_keys_above_the_options(
    spawn: type[PtyTerminal], tmp_path: Path
) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text(
        "".join(f"{step}. Step {step} of the migration.\n" for step in range(1, 41)),
        encoding="utf-8",
    )
    arguments = ["Approve?", "--plan-file", str(plan), "--approve", "Go", "-o", "Go", "-o", "No"]
    terminal = ask(spawn, *arguments, rows=20, columns=60)
    options = ["❯ 1. Go", "  2. No", *PLAN_TAIL]
    screen = lines(terminal)
    assert screen[:4] == [
        "Approve?",
        "╭─ Plan ───────────────────────────────────────────────────╮",
        "│                                                          │",
        "│   1 Step 1 of the migration.                             │",
    ]
    assert screen[13:] == ["  lines 1-13 of 44 · pgup pgdn scroll", *options]
    terminal.send(PAGE_DOWN)
    screen = terminal.wait_for("lines 14-26 of 44").splitlines()
    assert screen[0] == "│  11 Step 11 of the migration.                            │"
    assert screen[13:] == ["  lines 14-26 of 44 · pgup pgdn scroll", *options]
    terminal.send(PAGE_DOWN * 3)  # past the end: the last page shows
    screen = terminal.wait_for("lines 32-44 of 44").splitlines()
    assert screen[11:13] == [
        "│  40 Step 40 of the migration.                            │",
        "╰──────────────────────────────────────────────────────────╯",
    ]
    terminal.send(PAGE_UP * 4)
    terminal.wait_for("lines 1-13 of 44")
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-1] == "Go"


def test_bad_input_exits_2_before_anything_is_shown(spawn: type[PtyTerminal]) -> None:
    terminal = spawn([UQ, "ask", "Go?", "-o", "a", "-o", "a"])
    assert terminal.wait_exit() == 2
    assert terminal.display == 'uq ask: question 1 offers the option label "a" more than once'


def test_a_batch_read_from_stdin_is_answered_on_the_terminal_and_reviewed(
    spawn: type[PtyTerminal], tmp_path: Path
) -> None:
    request = tmp_path / "request.json"
    request.write_text(
        json.dumps(
            {
                "questions": [
                    {
                        "id": "target",
                        "header": "Target",
                        "question": "Where?",
                        "options": [{"label": "staging"}, {"label": "production (Recommended)"}],
                    },
                    {"id": "note", "question": "Anything else?"},
                ]
            }
        ),
        encoding="utf-8",
    )
    terminal = spawn(["bash", "-c", f"{UQ} ask --request - < {request}"])
    terminal.wait_for("❯ 2. production (recommended)")
    terminal.send(ENTER)
    terminal.wait_for("question 2 of 2")
    terminal.send("none" + ENTER)
    terminal.wait_for("Review your answers")
    assert lines(terminal)[-6:] == [
        "Review your answers",
        "❯ Submit answers",
        "  1. Target → production",
        "  2. Anything else? → none",
        "",
        "  ↑↓ move · enter on a question changes it · enter on submit sends · esc dismiss",
    ]
    terminal.send("1" + ENTER)  # change the first answer
    terminal.wait_for(lambda screen: screen.count("question 1 of 2") == 2 and HINT in screen)
    terminal.send("1" + ENTER)
    terminal.wait_for(lambda screen: "1. Target → staging" in screen)
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert lines(terminal)[-2:] == ["target\tstaging".expandtabs(), "note\tnone".expandtabs()]


@pytest.fixture
def shell(spawn: type[PtyTerminal]) -> PtyTerminal:
    """An interactive bash with a plain prompt."""
    terminal = spawn(["bash", "--norc", "--noprofile", "-i"], env={"PS1": "$ "})
    terminal.wait_for("$")
    return terminal


def _run_in_shell(shell: PtyTerminal, command: str) -> None:
    """Run `command`, then print its status and whether the terminal mode came back intact.

    The markers are computed, so the echoed command line never matches them."""
    shell.send(
        f's=$(stty -g); {command}; echo "status=$((0+$?))"; '
        f'[ "$(stty -g)" = "$s" ] && echo "mode-$((6*7))"\r'
    )


def _back_at_the_prompt(screen: str) -> bool:
    return screen.splitlines()[-2:] == ["mode-42", "$"]


def test_a_script_captures_the_answer_while_the_person_sees_the_question(
    shell: PtyTerminal,
) -> None:
    shell.send(f"answer=$({UQ} ask 'Deploy?' -o Yes -o No); echo \"got [$answer]\"\r")
    shell.wait_for(HINT)
    shell.send(DOWN + ENTER)
    screen = shell.wait_for(lambda screen: screen.splitlines()[-1:] == ["$"])
    assert screen.splitlines()[-4:] == ["Deploy?", "  ✔ No", "got [No]", "$"]


def test_a_timeout_exits_4_and_leaves_the_terminal_clean(shell: PtyTerminal) -> None:
    # The timeout runs from the ask, after start-up; 3 s leaves a loaded machine time to draw it.
    _run_in_shell(shell, f"{UQ} ask 'Deploy?' -o Yes -o No --timeout 3")
    shell.wait_for(HINT)
    screen = shell.wait_for(_back_at_the_prompt)
    assert screen.splitlines()[-5:] == [
        "Deploy?",
        "uq ask: ask_user_question timed out before the user answered",
        "status=4",
        "mode-42",
        "$",
    ]
    assert not shell.screen.cursor.hidden
    shell.send("echo typed-$((1+1))\r")  # the shell reads and echoes again
    screen = shell.wait_for(lambda screen: screen.splitlines()[-2:] == ["typed-2", "$"])
    assert screen.splitlines()[-3] == "$ echo typed-$((1+1))"


def test_ctrl_c_exits_130_and_leaves_the_terminal_clean(shell: PtyTerminal) -> None:
    _run_in_shell(shell, f"{UQ} ask 'Deploy?' -o Yes -o No")
    shell.wait_for(HINT)
    shell.send(CTRL_C)
    screen = shell.wait_for(_back_at_the_prompt)
    assert screen.splitlines()[-5:] == [
        "Deploy?",
        "uq ask: interrupted",
        "status=130",
        "mode-42",
        "$",
    ]
    assert not shell.screen.cursor.hidden


def _process_asking(question: str) -> int:
    """The pid of the `uq ask` whose arguments hold `question` (read from /proc)."""
    for entry in Path("/proc").iterdir():
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # not a process, or it ended meanwhile
            continue
        if b"ask" in arguments and question.encode() in arguments:
            return int(entry.name)
    raise AssertionError(f"no uq ask is asking {question!r}")


def test_sigterm_withdraws_the_prompt_and_leaves_the_terminal_clean(shell: PtyTerminal) -> None:
    # A question no other test asks, so that the signal reaches this prompt only.
    _run_in_shell(shell, f"{UQ} ask 'Deploy at once?' -o Yes -o No")
    shell.wait_for(HINT)
    os.kill(_process_asking("Deploy at once?"), signal.SIGTERM)
    screen = shell.wait_for(_back_at_the_prompt)
    assert screen.splitlines()[-5:] == [
        "Deploy at once?",
        "uq ask: stopped by SIGTERM",
        "status=143",
        "mode-42",
        "$",
    ]
    assert not shell.screen.cursor.hidden


def test_a_form_is_asked_field_by_field_with_its_default_filled_in(
    spawn: type[PtyTerminal], tmp_path: Path
) -> None:
    form = {
        "id": "deploy",
        "question": "How should it deploy?",
        "schema": {
            "type": "object",
            "properties": {
                "replicas": {
                    "type": "integer",
                    "title": "Replicas",
                    "minimum": 1,
                    "maximum": 10,
                    "default": 2,
                },
                "canary": {"type": "boolean", "title": "Canary first"},
            },
            "required": ["replicas"],
        },
    }
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"questions": [form]}), encoding="utf-8")
    terminal = ask(spawn, "--request", str(request), "--json")
    assert "› 2" in terminal.display  # the default, ready to send or change
    assert "A whole number from 1 to 10." in terminal.display
    terminal.send("\x7f" + "12" + ENTER)
    terminal.wait_for("Must be at most 10.")
    terminal.send("\x7f\x7f" + "5" + ENTER)
    terminal.wait_for("Canary first")
    terminal.send("1" + ENTER)
    assert terminal.wait_exit() == 0
    assert json.loads(lines(terminal)[-1]) == {
        "answers": [{"id": "deploy", "selected": [], "value": {"replicas": 5, "canary": True}}]
    }
