"""The line dialogue's replies and text: numbered options and typed lines, for pipes and logs.

The whole dialogue, behind a real service, is tested in `test_terminal.py`.
"""

from __future__ import annotations

from user_questions.presentation import AnswerDraft
from user_questions.providers._terminal_dialogue import (
    Invalid,
    NeedsText,
    parse_reply,
    render_question,
)
from user_questions.providers._terminal_view import QuestionView, views_of
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption, PlanReviewIntent


def _view(*labels: str, multi: bool = False) -> QuestionView:
    question = AskUserQuestionItem(
        id="q",
        question="Which?",
        options=[AskUserQuestionOption(label=label) for label in labels] or None,
        multi_select=multi or None,
    )
    return views_of([question])[0]


def test_a_number_chooses_its_option() -> None:
    assert parse_reply(_view("Yes", "No"), " 2 ") == AnswerDraft(selected=["No"])


def test_numbers_choose_several_options_on_a_multi_select_question() -> None:
    view = _view("a", "b", "c", multi=True)
    assert parse_reply(view, "3, 1 3") == AnswerDraft(selected=["c", "a"])


def test_the_number_after_the_options_asks_for_text_next() -> None:
    assert parse_reply(_view("a", "b", multi=True), "1,3") == NeedsText(selected=["a"])
    assert parse_reply(_view("a", "b"), "3") == NeedsText(selected=[])


def test_a_label_in_any_case_chooses_its_option_and_keeps_the_full_label() -> None:
    view = _view("Yes (Recommended)", "No")
    assert parse_reply(view, "yes") == AnswerDraft(selected=["Yes (Recommended)"])
    assert parse_reply(view, "YES (recommended)") == AnswerDraft(selected=["Yes (Recommended)"])


def test_other_text_is_the_users_own_answer() -> None:
    assert parse_reply(_view("Yes", "No"), "not today") == AnswerDraft(custom="not today")
    assert parse_reply(_view(), "42") == AnswerDraft(custom="42")


def test_an_empty_line_skips() -> None:
    assert parse_reply(_view("a"), "   ") == AnswerDraft(skipped=True)
    assert parse_reply(_view(), "") == AnswerDraft(skipped=True)


def test_unreadable_numbers_are_explained() -> None:
    assert parse_reply(_view("a", "b"), "4") == Invalid(
        "there is no option 4; answer with a number from 1 to 3"
    )
    assert parse_reply(_view("a", "b"), "0") == Invalid(
        "there is no option 0; answer with a number from 1 to 3"
    )
    assert parse_reply(_view("a", "b"), "1,2") == Invalid(
        "this question takes one answer: give a single number"
    )


def test_render_numbers_options_marks_the_recommended_one_and_adds_other() -> None:
    question = AskUserQuestionItem(
        id="q",
        header="Deploy",
        question="Deploy now?",
        detail="Ships **1.4.2**.",
        options=[
            AskUserQuestionOption(label="Yes (Recommended)", description="All regions."),
            AskUserQuestionOption(label="No"),
        ],
    )
    assert render_question(views_of([question])[0]) == (
        "[Deploy]\n"
        "Deploy now?\n"
        "\n"
        "Ships **1.4.2**.\n"
        "\n"
        "  1. Yes (recommended)\n"
        "     All regions.\n"
        "  2. No\n"
        "  3. Other (type your own answer)\n"
        "Answer with a number, or type your own answer; an empty line skips.\n"
    )


def test_render_frames_a_plan_and_offers_approval_first() -> None:
    question = AskUserQuestionItem(
        id="p",
        question="Approve?",
        detail="1. do it",
        options=[AskUserQuestionOption(label="Keep planning"), AskUserQuestionOption(label="Go")],
        intent=PlanReviewIntent(approve="Go"),
    )
    assert render_question(views_of([question])[0]).splitlines()[1:7] == [
        "----- plan -----",
        "1. do it",
        "----- end of plan -----",
        "  1. Go",
        "  2. Keep planning",
        "  3. Other (feedback on the plan)",
    ]


def test_render_counts_questions_of_a_batch() -> None:
    questions = [AskUserQuestionItem(id=i, question=f"{i}?") for i in "ab"]
    assert render_question(views_of(questions)[1]).splitlines()[:2] == [
        "(question 2 of 2)",
        "b?",
    ]
