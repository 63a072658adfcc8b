"""The interactive list as a state machine: the keys a person presses and the rows they see."""

from __future__ import annotations

from user_questions.presentation import AnswerDraft
from user_questions.providers._terminal_choices import (
    SET_CURSOR,
    ChoiceState,
    choice_hint,
    choice_lines,
    field_prompt,
    review_lines,
)
from user_questions.providers._terminal_view import QuestionView, views_of
from user_questions.providers._terminal_wrap import Fragments
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption, PlanReviewIntent

WIDTH = 80


def _view(
    *labels: str, multi: bool = False, descriptions: dict[str, str] | None = None
) -> QuestionView:
    options = [
        AskUserQuestionOption(label=label, description=(descriptions or {}).get(label))
        for label in labels
    ]
    question = AskUserQuestionItem(
        id="q", question="Which?", options=options or None, multi_select=multi or None
    )
    return views_of([question])[0]


def _text(fragments: Fragments) -> str:
    return "".join(text for _, text in fragments)


def _styled(fragments: Fragments, style: str) -> list[str]:
    return [text for name, text in fragments if name == style]


def test_rows_show_numbers_descriptions_and_the_recommended_mark() -> None:
    view = _view("Yes (Recommended)", "No", descriptions={"Yes (Recommended)": "Ships now."})
    lines = choice_lines(ChoiceState.start(view, AnswerDraft()), WIDTH)
    assert _text(lines) == (
        "❯ 1. Yes (recommended)\n     Ships now.\n  2. No\n  3. Other…\n  4. Skip\n"
    )
    assert _styled(lines, "class:recommended") == [" (recommended)"]
    assert _styled(lines, "class:description") == ["Ships now."]


def test_the_highlighted_row_carries_the_cursor_position_so_long_lists_scroll_to_it() -> None:
    state = ChoiceState.start(_view("a", "b", "c"), AnswerDraft())
    state.move(1)
    lines = choice_lines(state, WIDTH)
    marker = lines.index((SET_CURSOR, ""))
    assert _text(lines[marker:]).startswith("❯ 2. b\n")
    assert lines.count((SET_CURSOR, "")) == 1


def test_the_highlight_starts_on_the_recommended_option() -> None:
    state = ChoiceState.start(_view("a", "b (recommended)"), AnswerDraft())
    assert state.choose() == AnswerDraft(selected=["b (recommended)"])


def test_arrows_wrap_around_and_enter_answers_with_the_full_label() -> None:
    state = ChoiceState.start(_view("Yes (Recommended)", "No"), AnswerDraft())
    state.move(-1)
    assert _text(choice_lines(state, WIDTH)).splitlines()[3] == "❯ 4. Skip"
    state.move(1)
    assert state.choose() == AnswerDraft(selected=["Yes (Recommended)"])


def test_a_digit_moves_the_highlight_without_answering_a_single_select_question() -> None:
    state = ChoiceState.start(_view("a", "b", "c"), AnswerDraft())
    state.jump(3)
    state.jump(9)  # no such row: nothing happens
    assert "❯ 3. c" in _text(choice_lines(state, WIDTH))
    assert state.choose() == AnswerDraft(selected=["c"])


def test_skip_row_skips() -> None:
    state = ChoiceState.start(_view("a", "b"), AnswerDraft())
    state.jump(4)
    assert state.choose() == AnswerDraft(skipped=True)


def test_other_opens_a_field_and_its_text_answers_a_single_select_question() -> None:
    state = ChoiceState.start(_view("a", "b"), AnswerDraft())
    state.move(2)
    assert state.choose() is None
    assert state.editing
    assert field_prompt(state) == "  Your answer: "
    assert choice_hint(state) == "enter confirm · esc back to the options"
    assert state.submit_text("  something else ") == AnswerDraft(custom="  something else ")


def test_other_s_digit_opens_the_field_on_a_single_select_question() -> None:
    state = ChoiceState.start(_view("a", "b"), AnswerDraft())
    state.jump(3)
    assert state.editing
    assert field_prompt(state) == "  Your answer: "
    assert state.submit_text("c") == AnswerDraft(custom="c")
    state = ChoiceState.start(_view("a", "b"), AnswerDraft())
    state.jump(4)  # Skip's digit only moves there
    assert not state.editing


def test_blank_other_text_goes_back_to_the_list_with_a_note() -> None:
    state = ChoiceState.start(_view("a"), AnswerDraft())
    state.jump(2)
    assert state.submit_text("   ") is None
    assert not state.editing
    assert "nothing typed" in _text(choice_lines(state, WIDTH))
    state.move(1)
    assert "nothing typed" not in _text(choice_lines(state, WIDTH))


def test_esc_in_the_field_returns_to_the_options() -> None:
    state = ChoiceState.start(_view("a"), AnswerDraft())
    state.jump(2)
    assert state.leave_text() is False
    assert not state.editing


def test_multi_select_ticks_with_space_and_digits_and_submits_in_option_order() -> None:
    state = ChoiceState.start(_view("Lint", "Tests", "Docs", multi=True), AnswerDraft())
    state.jump(3)
    state.jump(1)
    state.move(1)
    state.toggle()
    state.toggle()  # untick Tests again
    assert _text(choice_lines(state, WIDTH)).splitlines()[:3] == [
        "  [x] 1. Lint",
        "❯ [ ] 2. Tests",
        "  [x] 3. Docs",
    ]
    assert state.choose() == AnswerDraft(selected=["Lint", "Docs"], custom="")


def test_multi_select_other_is_ticked_by_typing_and_unticked_by_space() -> None:
    state = ChoiceState.start(_view("Lint", multi=True), AnswerDraft())
    state.jump(2)
    assert state.editing
    assert state.submit_text("typing") is None
    assert "[x] 2. Other: typing" in _text(choice_lines(state, WIDTH))
    assert state.choose() == AnswerDraft(selected=[], custom="typing")
    state.toggle()
    assert "[ ] 2. Other…" in _text(choice_lines(state, WIDTH))


def test_multi_select_submitted_with_nothing_ticked_is_skipped() -> None:
    state = ChoiceState.start(_view("a", "b", multi=True), AnswerDraft())
    assert "Skip" not in _text(choice_lines(state, WIDTH))
    assert state.choose() == AnswerDraft(skipped=True)


def test_an_optionless_question_is_only_a_text_field_where_nothing_skips() -> None:
    state = ChoiceState.start(_view(), AnswerDraft())
    assert state.editing
    assert choice_lines(state, WIDTH) == []
    assert field_prompt(state) == "› "
    assert state.submit_text("") == AnswerDraft(skipped=True)
    assert state.submit_text("hi") == AnswerDraft(custom="hi")
    assert state.leave_text() is True  # Esc there dismisses


def test_asking_again_starts_from_the_earlier_answer() -> None:
    view = _view("a", "b", "c", multi=True)
    state = ChoiceState.start(view, AnswerDraft(selected=["b", "c"], custom="x"))
    assert _text(choice_lines(state, WIDTH)).splitlines() == [
        "  [ ] 1. a",
        "❯ [x] 2. b",
        "  [x] 3. c",
        "  [x] 4. Other: x",
    ]
    single = ChoiceState.start(_view("a", "b"), AnswerDraft(custom="mine"))
    assert "❯ 3. Other: mine" in _text(choice_lines(single, WIDTH))


def test_hints_name_the_keys_of_each_mode() -> None:
    assert choice_hint(ChoiceState.start(_view("a", "b"), AnswerDraft())) == (
        "↑↓ move · 1-4 jump · n note · enter choose · esc dismiss"
    )
    assert choice_hint(ChoiceState.start(_view("a", "b", multi=True), AnswerDraft())) == (
        "↑↓ move · space or 1-3 tick · n note · enter submit · esc dismiss"
    )
    many = _view(*"abcdefghij")
    assert "1-9 jump" in choice_hint(ChoiceState.start(many, AnswerDraft()))


def test_plan_review_other_row_asks_for_feedback() -> None:
    question = AskUserQuestionItem(
        id="p",
        question="Approve?",
        detail="plan",
        options=[AskUserQuestionOption(label="Keep planning"), AskUserQuestionOption(label="Go")],
        intent=PlanReviewIntent(approve="Go"),
    )
    state = ChoiceState.start(views_of([question])[0], AnswerDraft())
    assert _text(choice_lines(state, WIDTH)).splitlines()[:3] == [
        "❯ 1. Go",
        "  2. Keep planning",
        "  3. Other… (feedback on the plan)",
    ]
    state.jump(3)
    assert field_prompt(state) == "  Feedback: "


def test_review_lists_submit_first_then_each_answer() -> None:
    views = views_of(
        [
            AskUserQuestionItem(
                id="a",
                question="Where?",
                header="Target",
                options=[AskUserQuestionOption(label="prod (Recommended)")],
            ),
            AskUserQuestionItem(id="b", question="Notes?"),
        ]
    )
    drafts = [AnswerDraft(selected=["prod (Recommended)"]), AnswerDraft(skipped=True)]
    assert _text(review_lines(views, drafts, 2, WIDTH)) == (
        "Review your answers\n  Submit answers\n  1. Target → prod\n❯ 2. Notes? → skipped\n"
    )


def test_n_opens_the_note_field_and_the_note_goes_beside_the_choice() -> None:
    state = ChoiceState.start(_view("Lint", "Tests"), AnswerDraft())
    assert "n note" in choice_hint(state)
    state.start_note()
    assert (state.editing, state.noting, field_prompt(state)) == (True, True, "  Note: ")
    assert choice_hint(state) == "enter keep the note · esc back to the options"
    assert state.submit_text("  skip the e2e  ") is None  # back to the list, nothing answered
    assert not state.editing
    assert "  Note: skip the e2e" in _text(choice_lines(state, WIDTH)).splitlines()
    assert "  Note: skip the e2e" in _text(choice_lines(state, WIDTH))
    state.start_note()
    state.leave_text()  # Esc in the note's field keeps the note as it was
    assert state.note == "skip the e2e"
    assert state.choose() == AnswerDraft(selected=["Lint"], note="skip the e2e")


def test_an_optionless_question_has_no_note_key() -> None:
    state = ChoiceState.start(_view(), AnswerDraft())
    state.start_note()
    assert not state.noting
    assert "note" not in choice_hint(state)
