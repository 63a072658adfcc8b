"""Presentation logic every surface shares."""

from __future__ import annotations

import pytest

from user_questions import AskUserQuestionItem, AskUserQuestionOption, PlanReviewIntent
from user_questions.presentation import (
    AnswerDraft,
    answer_from_drafts,
    parse_recommended_label,
    plan_review_of,
)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("pnpm (Recommended)", ("pnpm", True)),
        ("pnpm (recommended)", ("pnpm", True)),
        ("pnpm (RECOMMENDED)  ", ("pnpm", True)),
        ("pnpm(Recommended)", ("pnpm", True)),
        ("pnpm ( Recommended )", ("pnpm", True)),
        ("使用 pnpm (推荐)", ("使用 pnpm", True)),
        ("使用 pnpm（推荐）", ("使用 pnpm", True)),
        ("pnpm 사용 (추천)", ("pnpm 사용", True)),
        ("pnpm 사용（추천）", ("pnpm 사용", True)),
        ("pnpm 사용(권장)", ("pnpm 사용", True)),
        ("pnpm 사용 （ 권장 ） ", ("pnpm 사용", True)),
        ("pnpm を使う (推奨)", ("pnpm を使う", True)),
        ("pnpm を使う（推奨）", ("pnpm を使う", True)),
        ("(추천) pnpm", ("(추천) pnpm", False)),
        ("(권장)", ("(권장)", False)),
        ("pnpm (추천함)", ("pnpm (추천함)", False)),
        ("(Recommended) first", ("(Recommended) first", False)),
        ("pnpm", ("pnpm", False)),
        ("(Recommended)", ("(Recommended)", False)),
        ("Recommended", ("Recommended", False)),
        ("pnpm (Recommended) yes", ("pnpm (Recommended) yes", False)),
    ],
)
def test_parse_recommended_label(label: str, expected: tuple[str, bool]) -> None:
    assert parse_recommended_label(label) == expected


def plan(**changes: object) -> AskUserQuestionItem:
    fields: dict[str, object] = {
        "id": "plan-review",
        "question": "Approve?",
        "detail": "the plan",
        "options": [AskUserQuestionOption(label="Approve"), AskUserQuestionOption(label="No")],
        "intent": PlanReviewIntent(approve="Approve"),
    }
    fields.update(changes)
    return AskUserQuestionItem.model_validate(fields)


def test_plan_review_view_of_a_proper_plan_question() -> None:
    assert plan_review_of([plan()]) == {
        "id": "plan-review",
        "question": "Approve?",
        "plan": "the plan",
        "approve": "Approve",
        "decline": "No",
    }


def test_plan_review_view_without_a_decline_option() -> None:
    view = plan_review_of([plan(options=[AskUserQuestionOption(label="Approve")])])
    assert view == {
        "id": "plan-review",
        "question": "Approve?",
        "plan": "the plan",
        "approve": "Approve",
    }


@pytest.mark.parametrize(
    "questions",
    [
        [plan(), plan(id="other")],
        [plan(intent=None)],
        [plan(detail=None)],
        [plan(multi_select=True)],
        [
            plan(
                options=[
                    AskUserQuestionOption(label="Approve"),
                    AskUserQuestionOption(label="No"),
                    AskUserQuestionOption(label="Later"),
                ]
            )
        ],
        [plan(intent=PlanReviewIntent(approve="Yes"))],
        [],
    ],
)
def test_anything_else_is_the_generic_flow(questions: list[AskUserQuestionItem]) -> None:
    assert plan_review_of(questions) is None


def question(id: str, *labels: str, multi: bool = False) -> AskUserQuestionItem:
    return AskUserQuestionItem(
        id=id,
        question="?",
        options=[AskUserQuestionOption(label=label) for label in labels] or None,
        multi_select=multi or None,
    )


def test_drafts_become_a_batch_in_question_order() -> None:
    questions = [question("a", "x", "y", "z", multi=True), question("b", "p", "q"), question("c")]
    answer = answer_from_drafts(
        questions,
        {
            "c": AnswerDraft(custom="  typed  "),
            "a": AnswerDraft(selected=["z", "x", "z"], custom="also"),
            "b": AnswerDraft(selected=["q"], custom="instead"),
        },
    )
    assert answer.model_dump(mode="json") == {
        "answers": [
            {"id": "a", "selected": ["x", "z"], "custom": "also"},
            {"id": "b", "selected": [], "custom": "instead"},
            {"id": "c", "selected": [], "custom": "typed"},
        ]
    }


def test_skipped_and_missing_drafts_are_empty_items() -> None:
    answer = answer_from_drafts(
        [question("a", "x"), question("b")], {"a": AnswerDraft(selected=["x"], skipped=True)}
    )
    assert answer.model_dump(mode="json") == {
        "answers": [{"id": "a", "selected": []}, {"id": "b", "selected": []}]
    }


def test_blank_custom_text_is_dropped() -> None:
    answer = answer_from_drafts(
        [question("a", "x")], {"a": AnswerDraft(selected=["x"], custom=" ")}
    )
    assert answer.model_dump(mode="json") == {"answers": [{"id": "a", "selected": ["x"]}]}


def test_a_label_that_is_not_an_option_is_kept_for_the_service_to_report() -> None:
    answer = answer_from_drafts([question("a", "x")], {"a": AnswerDraft(selected=["ghost", "x"])})
    assert answer.answers[0].selected == ["x", "ghost"]
