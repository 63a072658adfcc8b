"""The terminal's view of questions: order, marks, safe text and answers in words."""

from __future__ import annotations

from user_questions._reading.text import printable
from user_questions.presentation import AnswerDraft
from user_questions.providers._terminal_view import describe, views_of
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption, PlanReviewIntent


def _options(*labels: str) -> list[AskUserQuestionOption]:
    return [AskUserQuestionOption(label=label) for label in labels]


def _plan(*labels: str, approve: str = "Approve") -> AskUserQuestionItem:
    return AskUserQuestionItem(
        id="plan",
        question="Approve?",
        detail="# Plan",
        options=_options(*labels),
        intent=PlanReviewIntent(approve=approve),
    )


def test_printable_drops_escape_sequences_and_bidi_overrides_but_keeps_lines() -> None:
    text = "red\x1b[31m alert\x07\r\nnext\tcol \u202egnirts\u2066x\u2069 \x9b2J"
    assert printable(text) == "red[31m alert\nnext\tcol gnirtsx 2J"


def test_every_model_written_field_is_made_printable() -> None:
    question = AskUserQuestionItem(
        id="q",
        question="Go\x1b]0;pwned\x07?",
        header="Head\x1b[2J",
        detail="see \x1b[8mhidden",
        options=[AskUserQuestionOption(label="Yes\x1b[1m", description="why\x1b[0m")],
    )
    (view,) = views_of([question])
    assert (view.question, view.header, view.detail) == ("Go]0;pwned?", "Head[2J", "see [8mhidden")
    assert (view.options[0].display, view.options[0].description) == ("Yes[1m", "why[0m")
    assert view.options[0].label == "Yes\x1b[1m"  # the answer still carries the label as asked


def test_recommended_option_is_marked_without_its_suffix_and_starts_highlighted() -> None:
    question = AskUserQuestionItem(
        id="q", question="Pick", options=_options("npm", "pnpm (Recommended)", "yarn（推荐）")
    )
    (view,) = views_of([question])
    assert [row.display for row in view.options] == ["npm", "pnpm", "yarn"]
    assert [row.recommended for row in view.options] == [False, True, True]
    assert view.options[1].label == "pnpm (Recommended)"
    assert view.initial == 1


def test_without_a_recommendation_the_first_option_starts_highlighted() -> None:
    (view,) = views_of([AskUserQuestionItem(id="q", question="Pick", options=_options("a", "b"))])
    assert view.initial == 0


def test_plan_review_offers_the_approve_option_first() -> None:
    (view,) = views_of([_plan("Keep planning", "Approve")])
    assert view.plan_review
    assert [row.label for row in view.options] == ["Approve", "Keep planning"]


def test_a_plan_review_in_a_batch_is_shown_as_a_generic_question_in_its_order() -> None:
    other = AskUserQuestionItem(id="other", question="And?")
    view, _ = views_of([_plan("Keep planning", "Approve"), other])
    assert not view.plan_review
    assert [row.label for row in view.options] == ["Keep planning", "Approve"]


def test_views_know_their_place_in_the_batch_and_a_title() -> None:
    questions = [
        AskUserQuestionItem(id="a", question="First?", header="One"),
        AskUserQuestionItem(id="b", question="Second?"),
    ]
    first, second = views_of(questions)
    assert (first.position, first.total, first.title) == (1, 2, "One")
    assert (second.position, second.total, second.title) == (2, 2, "Second?")


def test_multi_select_without_options_is_a_free_text_question() -> None:
    (view,) = views_of([AskUserQuestionItem(id="q", question="Say", multi_select=True)])
    assert not view.multi
    assert view.options == ()


def test_describe_reads_drafts_the_way_the_answer_will() -> None:
    multi = AskUserQuestionItem(
        id="m",
        question="Checks?",
        multi_select=True,
        options=_options("Lint", "Tests (Recommended)"),
    )
    single = AskUserQuestionItem(id="s", question="Go?", options=_options("Yes", "No"))
    free = AskUserQuestionItem(id="f", question="Say")
    m, s, f = views_of([multi, single, free])
    assert describe(m, AnswerDraft(selected=["Tests (Recommended)", "Lint"])) == "Lint, Tests"
    assert describe(m, AnswerDraft(selected=["Lint"], custom=" docs ")) == "Lint + Other: docs"
    assert describe(s, AnswerDraft(selected=["Yes"], custom="later")) == "Other: later"
    assert describe(s, AnswerDraft(skipped=True, selected=["Yes"])) == "skipped"
    assert describe(s, AnswerDraft(custom="   ")) == "skipped"
    assert describe(f, AnswerDraft(custom="hello")) == "hello"
