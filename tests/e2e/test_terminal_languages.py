"""`uq ask` in a real pseudo-terminal in Korean, Japanese and Chinese: the words around the
question follow `UQ_LANG`, then `LC_ALL`, `LC_MESSAGES`, `LANG`, as a person's shell sets them."""

from __future__ import annotations

import pytest

from tests.e2e.pty_terminal import DOWN, ENTER, UQ, PtyTerminal

DEPLOY = ["배포할까요?", "-o", "예 (Recommended)", "-o", "아니요"]
UNSET = {"UQ_LANG": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": ""}
"""The tests' own `UQ_LANG=en` and the machine's locale, cleared: each test says its own."""


def ask(spawn: type[PtyTerminal], environment: dict[str, str], *args: str) -> PtyTerminal:
    """`uq ask ARGS` (the Korean deploy question without them) in a new terminal."""
    return spawn([UQ, "ask", *(args or DEPLOY)], env={**UNSET, **environment})


def test_lang_ko_gives_korean_options_and_key_hints(spawn: type[PtyTerminal]) -> None:
    terminal = ask(spawn, {"LANG": "ko_KR.UTF-8"})
    screen = terminal.wait_for("esc 취소")
    assert screen.splitlines() == [
        "배포할까요?",
        "❯ 1. 예 (추천)",
        "  2. 아니요",
        "  3. 기타…",
        "  4. 건너뛰기",
        "",
        "  ↑↓ 이동 · 1-4 바로 가기 · n 메모 · enter 선택 · esc 취소",
    ]
    terminal.send(DOWN + DOWN + DOWN)
    terminal.wait_for("❯ 4. 건너뛰기")
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
    assert terminal.display.splitlines()[-1] == "  – 건너뜀"


def test_a_multi_select_question_in_korean_names_its_keys(spawn: type[PtyTerminal]) -> None:
    terminal = ask(spawn, {"LANG": "ko_KR.UTF-8"}, "검사?", "-o", "린트", "-o", "테스트", "--multi")
    terminal.wait_for("↑↓ 이동 · space 또는 1-3 체크 · n 메모 · enter 보내기 · esc 취소")
    terminal.send("1" + ENTER)
    assert terminal.wait_exit() == 0
    assert "✔ 린트" in terminal.display


@pytest.mark.parametrize(
    ("environment", "hint", "other"),
    [
        (
            {"UQ_LANG": "ja", "LANG": "ko_KR.UTF-8"},
            "↑↓ 移動 · 1-4 でジャンプ · n メモ · enter 選択 · esc 取り消し",
            "  3. その他…",
        ),
        (
            {"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"},
            "↑↓ 移动 · 1-4 跳转 · n 备注 · enter 选择 · esc 取消",
            "  3. 其他…",
        ),
        (
            {"LC_MESSAGES": "zh_Hans", "LANG": "ja_JP.UTF-8"},
            "↑↓ 移动 · 1-4 跳转 · n 备注 · enter 选择 · esc 取消",
            "  3. 其他…",
        ),
        (
            {"LANG": "C.UTF-8"},
            "↑↓ move · 1-4 jump · n note · enter choose · esc dismiss",
            "  3. Other…",
        ),
    ],
    ids=["uq-lang-ja-over-lang", "lc-all-zh-cn", "lc-messages-zh-hans", "c-locale-english"],
)
def test_the_first_variable_set_decides_the_language(
    spawn: type[PtyTerminal], environment: dict[str, str], hint: str, other: str
) -> None:
    terminal = ask(spawn, environment)
    screen = terminal.wait_for(hint)
    assert other in screen.splitlines()
    terminal.send(ENTER)
    assert terminal.wait_exit() == 0
