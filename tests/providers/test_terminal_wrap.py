"""Long labels and descriptions wrap at word boundaries, by display width, with a hanging indent."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from prompt_toolkit.utils import get_cwidth

from user_questions.presentation import AnswerDraft
from user_questions.providers._terminal_choices import ChoiceState, choice_lines, review_lines
from user_questions.providers._terminal_view import views_of
from user_questions.providers._terminal_wrap import Fragments, wrap
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

WIDTH = 60


def _shown(fragments: Fragments) -> list[str]:
    return "".join(text for _, text in fragments).splitlines()


def _plain(text: str, width: int) -> list[str]:
    return ["".join(part for _, part in line) for line in wrap([("", text)], width)]


def _state(label: str, description: str | None = None, *, multi: bool = False) -> ChoiceState:
    question = AskUserQuestionItem(
        id="q",
        question="Which?",
        options=[AskUserQuestionOption(label=label, description=description)],
        multi_select=multi or None,
    )
    return ChoiceState.start(views_of([question])[0], AnswerDraft())


def test_an_english_label_and_description_wrap_under_the_label_s_text() -> None:
    state = _state(
        "pnpm, a fast and disk-space efficient package manager for monorepos (Recommended)",
        "Strict node_modules layout and a content-addressed store shared across projects.",
    )
    assert _shown(choice_lines(state, WIDTH))[:5] == [
        "❯ 1. pnpm, a fast and disk-space efficient package manager",
        "     for monorepos (recommended)",
        "     Strict node_modules layout and a content-addressed",
        "     store shared across projects.",
        "  2. Other…",
    ]


def test_a_korean_label_and_description_wrap_at_spaces_counting_two_cells_a_syllable() -> None:
    state = _state(
        "npm 대신 pnpm을 사용하여 디스크 공간을 절약하고 설치 속도를 높입니다 (추천)",
        "모든 프로젝트가 하나의 저장소를 공유하므로 같은 패키지를 여러 번 내려받지 않습니다.",
    )
    shown = _shown(choice_lines(state, WIDTH))
    assert shown[:4] == [
        "❯ 1. npm 대신 pnpm을 사용하여 디스크 공간을 절약하고 설치",
        "     속도를 높입니다 (recommended)",
        "     모든 프로젝트가 하나의 저장소를 공유하므로 같은",
        "     패키지를 여러 번 내려받지 않습니다.",
    ]
    assert max(get_cwidth(line) for line in shown) <= WIDTH


def test_multi_select_rows_hang_after_the_tick_box_and_the_number() -> None:
    state = _state("Run the browser tests in Chromium, Firefox and WebKit " * 2, multi=True)
    assert _shown(choice_lines(state, WIDTH))[:3] == [
        "❯ [ ] 1. Run the browser tests in Chromium, Firefox and",
        "         WebKit Run the browser tests in Chromium, Firefox",
        "         and WebKit",
    ]


def test_a_review_row_hangs_after_its_number() -> None:
    question = AskUserQuestionItem(
        id="a",
        question="Which deployment target should the release pipeline use this week?",
        options=[AskUserQuestionOption(label="staging")],
    )
    views = views_of([question, AskUserQuestionItem(id="b", question="Notes?")])
    drafts = [AnswerDraft(selected=["staging"]), AnswerDraft(skipped=True)]
    assert _shown(review_lines(views, drafts, 1, WIDTH))[1:4] == [
        "  Submit answers",
        "❯ 1. Which deployment target should the release pipeline use",
        "     this week? → staging",
    ]


def test_chinese_and_japanese_break_between_characters_but_not_before_closing_marks() -> None:
    assert _plain("使用 npm，因为它随 Node.js 一起提供，不需要额外安装任何工具。", 20) == [
        "使用 npm，因为它随",
        "Node.js 一起提供，不",
        "需要额外安装任何工",
        "具。",  # the full stop keeps a character with it
    ]
    assert _plain("「ふりがな」を付けます", 10) == ["「ふりが", "な」を付け", "ます"]


def test_only_a_word_wider_than_the_line_is_cut() -> None:
    assert _plain("see https://example.com/a/very/long/path/to/the/page now", 20) == [
        "see",
        "https://example.com/",
        "a/very/long/path/to/",
        "the/page now",
    ]
    assert _plain("가나다라마바사아자차카타파하", 10) == ["가나다라마", "바사아자차", "카타파하"]


def test_newlines_break_tabs_are_spaces_and_breaking_spaces_vanish() -> None:
    assert _plain("one\ttwo   three\n\nfour", 9) == ["one two", "three", "", "four"]
    assert _plain("", 9) == [""]


def test_styles_survive_wrapping() -> None:
    lines = wrap([("a", "plain words and "), ("b", " (recommended)")], 20)
    assert lines == [[("a", "plain words and")], [("b", "(recommended)")]]


words = st.text(alphabet="abcdefghij", min_size=1, max_size=14) | st.sampled_from(
    ["패키지를", "사용하여", "설치", "디스크", "공간을", "(추천)"]
)


@given(st.lists(words, min_size=1, max_size=30), st.integers(min_value=14, max_value=60))
def test_words_are_never_cut_and_no_line_is_wider_than_the_width(
    text: list[str], width: int
) -> None:
    lines = _plain(" ".join(text), width)
    assert all(get_cwidth(line) <= width for line in lines)
    assert " ".join(lines).split() == text
