"""JSON read from outside becomes models, or one line naming the field and a stable code."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
from pydantic import ValidationError

from user_questions import UserQuestionError
from user_questions._reading.wire import frame_refusal, parse_answer, parse_questions
from user_questions.frames import Ask, AskerReply, ClientResponse, QuestionRequestedFrame
from user_questions.types import WireModel


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


BROKEN_QUESTIONS: list[object] = [
    [{"id": "a"}],
    [{"id": "a", "question": "?", "options": [{"label": 2}]}],
    [{"id": "a", "question": "?", "multiSelect": "yes"}],
    [{"id": "a", "question": "?", "intent": {"kind": "vote"}}],
    [{"id": "a", "question": "?", "intent": {"kind": "plan-review"}}],
    [{"id": "a", "question": "?"}, {"id": 3, "question": None}],
]
BROKEN_ANSWERS: list[object] = [
    {"answers": [{"id": "a", "selected": "x"}]},
    {"answers": [{"selected": []}]},
    {"answers": {"id": "a"}},
    {"answer": []},
]


def _refusal(model: type[WireModel], frame: Mapping[str, object]) -> UserQuestionError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(frame)
    return frame_refusal(caught.value, what=str(frame.get("type", "reply")))


def _alone(parse: Callable[[object], object], document: object) -> UserQuestionError:
    with pytest.raises(UserQuestionError) as caught:
        parse(document)
    return caught.value


@pytest.mark.parametrize("questions", BROKEN_QUESTIONS)
def test_questions_in_a_frame_are_refused_as_a_request_document_is(questions: object) -> None:
    ask = {"type": "ask", "rpcId": "r", "sessionId": "s", "questions": questions}
    alone = _alone(parse_questions, {"questions": questions})
    refused = _refusal(Ask, ask)
    assert (refused.code, refused.message) == (alone.code, alone.message)
    requested = {"questions": questions, "sessionId": "s"}
    frame = {"rpcId": "r", "payload": requested, "rendered": {}, "askedAt": "now"}
    refused = _refusal(QuestionRequestedFrame, frame)
    assert (refused.code, refused.message) == (alone.code, alone.message)


@pytest.mark.parametrize("answer", BROKEN_ANSWERS)
def test_an_answer_in_a_frame_is_refused_as_an_answer_document_is(answer: object) -> None:
    alone = _alone(parse_answer, answer)
    assert alone.code == "BAD_ANSWER"
    value = {"sessionId": "s", "answer": answer}
    response = {"type": "client-response", "rpcId": "r", "result": {"ok": True, "value": value}}
    refused = _refusal(ClientResponse, response)
    assert (refused.code, refused.message) == (alone.code, alone.message)
    settled = {"type": "ask/settled", "outcome": "answered", "answer": answer}
    refused = _refusal(AskerReply, {"rpcId": "r", "payload": settled})
    assert (refused.code, refused.message) == (alone.code, alone.message)


def test_a_frames_own_problem_comes_before_one_inside_what_it_carries() -> None:
    ask = {"type": "ask", "rpcId": "r", "sessionId": 5, "questions": BROKEN_QUESTIONS[0]}
    refused = _refusal(Ask, ask)
    assert (refused.code, refused.message) == (
        "BAD_REQUEST",
        'invalid ask: property "sessionId" must be a string, got integer',
    )
    # A question or an answer that is no object at all is the frame's own problem.
    refused = _refusal(Ask, {**ask, "sessionId": "s", "questions": [{"id": "a"}, 7]})
    assert refused.message == 'invalid ask: property "questions[1]" must be an object, got integer'
    value = {"answer": "yes"}
    response = {"type": "client-response", "rpcId": "r", "result": {"ok": True, "value": value}}
    refused = _refusal(ClientResponse, response)
    assert (refused.code, refused.message) == (
        "BAD_REQUEST",
        'invalid client-response: property "result[1].value.answer" must be an object, got string',
    )
