"""ACP form elicitation as plain JSON: one flat form per batch, an explicit "Other", and back.

The select entries follow the SDK's `EnumOption` (acp/schema.py, generated from the ACP schema
v1.19.0): `const`, `title`, and an optional `description` of its own."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from tests.bridges.conftest import answered
from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    ErrorCode,
    PlanReviewIntent,
    UserQuestionError,
)
from user_questions.bridges.acp import answer_from_elicitation, questions_to_elicitation

PKG = AskUserQuestionItem(
    id="pkg",
    question="Which package manager?",
    header="Tooling",
    options=[
        AskUserQuestionOption(label="pnpm (Recommended)", description="Fast, strict installs."),
        AskUserQuestionOption(label="npm"),
    ],
)
FEATURES = AskUserQuestionItem(
    id="features",
    question="Which features?",
    options=[AskUserQuestionOption(label="lint"), AskUserQuestionOption(label="test")],
    multi_select=True,
)
NAME = AskUserQuestionItem(id="name", question="Project name?", detail="Used in *package.json*.")


def fill(questions: list[AskUserQuestionItem], answer: AskUserQuestionAnswer) -> dict[str, Any]:
    """What an ACP client sends when its user gives `answer` in the form."""
    params = questions_to_elicitation(questions)
    properties = params["requestedSchema"]["properties"]
    content: dict[str, Any] = {}
    for question, item in zip(questions, answer.answers, strict=True):
        if not question.options:
            if item.custom is not None:
                content[question.id] = item.custom
            continue
        choices = properties[question.id].get("oneOf") or properties[question.id]["items"]["anyOf"]
        other = choices[-1]["const"]
        picked = list(item.selected) + ([other] if item.custom is not None else [])
        if question.multi_select:
            content[question.id] = picked
        elif picked:
            content[question.id] = picked[0]
        if item.custom is not None:
            content[f"{question.id}.other"] = item.custom
    return {"action": "accept", "content": content}


def test_a_batch_becomes_one_flat_form_with_an_other_entry_and_nothing_required() -> None:
    params = questions_to_elicitation([PKG, FEATURES, NAME])
    assert params["mode"] == "form"
    schema = params["requestedSchema"]
    assert schema["type"] == "object"
    assert "required" not in schema
    assert list(schema["properties"]) == ["pkg", "pkg.other", "features", "features.other", "name"]
    assert schema["properties"]["pkg"] == {
        "type": "string",
        "title": "Which package manager?",
        "oneOf": [
            {
                "const": "pnpm (Recommended)",
                "title": "pnpm (Recommended)",
                "description": "Fast, strict installs.",
            },
            {"const": "npm", "title": "npm"},
            {"const": "__other__", "title": "Other"},
        ],
    }
    assert schema["properties"]["features"]["type"] == "array"
    assert schema["properties"]["features"]["items"]["anyOf"][-1] == {
        "const": "__other__",
        "title": "Other",
    }
    assert schema["properties"]["pkg.other"]["type"] == "string"
    assert schema["properties"]["name"] == {"type": "string", "title": "Project name?"}


def test_headers_questions_and_details_go_into_the_message() -> None:
    params = questions_to_elicitation([PKG, NAME])
    assert params["message"] == (
        "1. Tooling: Which package manager?\n\n2. Project name?\n\nUsed in *package.json*."
    )
    assert questions_to_elicitation([NAME])["message"] == "Project name?\n\nUsed in *package.json*."


def test_a_plan_review_carries_its_plan_in_the_message() -> None:
    plan = AskUserQuestionItem(
        id="plan-review",
        question="Approve this plan?",
        detail="1. Edit\n2. Test",
        options=[
            AskUserQuestionOption(label="Approve"),
            AskUserQuestionOption(label="Keep planning"),
        ],
        intent=PlanReviewIntent(approve="Approve"),
    )
    assert "1. Edit\n2. Test" in questions_to_elicitation([plan])["message"]


@given(answered())
def test_every_valid_answer_survives_the_form_round_trip(
    case: tuple[list[AskUserQuestionItem], AskUserQuestionAnswer],
) -> None:
    batch, answer = case
    assert answer_from_elicitation(batch, fill(batch, answer)) == answer


def test_other_chosen_without_text_skips_the_question() -> None:
    response = {"action": "accept", "content": {"pkg": "__other__", "pkg.other": "  "}}
    answer = answer_from_elicitation([PKG], response)
    assert answer.model_dump(mode="json") == {"answers": [{"id": "pkg", "selected": []}]}


def test_other_text_replaces_a_single_choice_and_joins_multiple_ones() -> None:
    response = {
        "action": "accept",
        "content": {
            "pkg": "npm",
            "pkg.other": "yarn",
            "features": ["test"],
            "features.other": "ci",
        },
    }
    answer = answer_from_elicitation([PKG, FEATURES], response)
    assert answer.model_dump(mode="json") == {
        "answers": [
            {"id": "pkg", "selected": [], "custom": "yarn"},
            {"id": "features", "selected": ["test"], "custom": "ci"},
        ]
    }


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declining_or_cancelling_the_form_is_a_dismissal(action: str) -> None:
    with pytest.raises(UserQuestionError) as caught:
        answer_from_elicitation([PKG], {"action": action})
    assert caught.value.code == ErrorCode.ASK_CANCELLED


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (
            {"action": "maybe"},
            'provider answer has the elicitation action "maybe"; expected accept',
        ),
        ({}, "provider answer has the elicitation action missing"),
        ({"action": "accept", "content": ["npm"]}, "content that is not an object"),
        (
            {"action": "accept", "content": {"pkg": "yarn"}},
            'provider answer for question pkg: "yarn" is not one of its options',
        ),
        (
            {"action": "accept", "content": {"pkg": 3}},
            'property "pkg" must be an option label, got integer',
        ),
        (
            {"action": "accept", "content": {"features": "lint"}},
            'property "features" must be an array of option labels, got string',
        ),
        (
            {"action": "accept", "content": {"pkg.other": True}},
            'property "pkg.other" must be a string, got boolean',
        ),
    ],
)
def test_a_malformed_result_is_a_bad_answer_naming_the_field(
    response: dict[str, Any], message: str
) -> None:
    with pytest.raises(UserQuestionError) as caught:
        answer_from_elicitation([PKG, FEATURES], response)
    assert caught.value.code == ErrorCode.BAD_ANSWER
    assert message in str(caught.value)


def test_a_label_sent_twice_counts_once_and_labels_come_in_option_order() -> None:
    response = {"action": "accept", "content": {"features": ["test", "lint", "test"]}}
    answer = answer_from_elicitation([FEATURES], response)
    assert answer.answers[0].selected == ["lint", "test"]


def test_an_id_that_looks_like_a_companion_field_gets_a_distinct_name() -> None:
    clash = AskUserQuestionItem(id="pkg.other", question="Anything else?")
    names = list(questions_to_elicitation([PKG, clash])["requestedSchema"]["properties"])
    assert names == ["pkg", "pkg.other~2", "pkg.other"]
    response = {"action": "accept", "content": {"pkg.other~2": "bun", "pkg.other": "no"}}
    answer = answer_from_elicitation([PKG, clash], response)
    assert [item.custom for item in answer.answers] == ["bun", "no"]


def test_a_batch_the_service_would_refuse_is_refused_here_too() -> None:
    with pytest.raises(UserQuestionError) as caught:
        questions_to_elicitation([])
    assert caught.value.code == ErrorCode.EMPTY_QUESTIONS
    with pytest.raises(UserQuestionError) as caught:
        questions_to_elicitation([NAME, NAME])
    assert caught.value.code == ErrorCode.BAD_QUESTION
