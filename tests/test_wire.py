"""JSON read from outside becomes models, or one line naming the field and a stable code."""

from __future__ import annotations

import pytest

from user_questions import UserQuestionError
from user_questions._wire import parse_answer, parse_questions


def test_a_request_document_is_read_in_either_spelling() -> None:
    questions = parse_questions(
        '{"questions":[{"id":"a","question":"?","multiSelect":true,"options":[{"label":"x"}]}]}'
    )
    assert questions[0].multi_select is True
    assert parse_questions({"questions": [{"id": "a", "question": "?", "multi_select": True}]})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            '{"questions": "a"}',
            'invalid request: property "questions" must be an array, got string',
        ),
        ("[]", "invalid request: the document must be an object, got array"),
        (
            '{"questions":[{"id":"a"}]}',
            'invalid request: missing required property "questions[0].question"',
        ),
        (
            '{"questions":[{"id":"a","question":"?","options":[{"label":2}]}]}',
            'invalid request: property "questions[0].options[0].label" must be a string, '
            "got integer",
        ),
        (
            '{"questions":[{"id":"a","question":"?","multiSelect":"yes"}]}',
            'invalid request: property "questions[0].multiSelect" must be a boolean, got string',
        ),
        (
            '{"questions":[{"id":"a","question":"?","intent":{"kind":"vote"}}]}',
            'invalid request: property "questions[0].intent.kind" names an unknown intent "vote"',
        ),
        (
            '{"questions":[{"id":"a","question":"?","intent":{"kind":"plan-review"}}]}',
            'invalid request: missing required property "questions[0].intent.approve"',
        ),
        ("{nope", "invalid request: not valid JSON"),
    ],
)
def test_a_malformed_request_is_one_line_with_bad_request(data: str, message: str) -> None:
    with pytest.raises(UserQuestionError) as caught:
        parse_questions(data)
    assert caught.value.code == "BAD_REQUEST"
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_malformed_answer_is_bad_answer() -> None:
    with pytest.raises(UserQuestionError) as caught:
        parse_answer({"answers": [{"id": "a", "selected": "x"}]})
    assert caught.value.code == "BAD_ANSWER"
    assert str(caught.value) == (
        'invalid answer: property "answers[0].selected" must be an array, got string'
    )
