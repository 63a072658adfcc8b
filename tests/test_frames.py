"""The frames of the host protocol: exact JSON shapes, and what a malformed frame says."""

from __future__ import annotations

from typing import get_args

import pytest
from pydantic import TypeAdapter, ValidationError

from user_questions import frames
from user_questions.frames import (
    MAX_ORIGIN_CLIENT,
    MAX_ORIGIN_CWD,
    Ask,
    AskerFrame,
    AskerReply,
    AskSettled,
    ClientResponse,
    ErrorResult,
    Origin,
    PageFrame,
    Ping,
    PongFrame,
    QuestionReplay,
    QuestionReplayFrame,
    QuestionRequested,
    QuestionRequestedFrame,
    QuestionResolved,
    QuestionResolvedFrame,
    Receipt,
    ReceiptFrame,
)
from user_questions.outcomes import Outcome
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem


def test_question_requested_is_the_seam_payload_plus_the_pages_extras() -> None:
    frame = QuestionRequestedFrame(
        rpc_id="r1",
        payload=QuestionRequested(
            session_id="s", questions=[AskUserQuestionItem(id="q", question="?")]
        ),
        rendered={},
        asked_at="2025-01-02T03:04:05.000Z",
    )
    assert frame.model_dump_json() == (
        '{"rpcId":"r1","payload":{"type":"question/requested","sessionId":"s",'
        '"questions":[{"id":"q","question":"?"}]},"rendered":{},'
        '"askedAt":"2025-01-02T03:04:05.000Z"}'
    )


def test_a_replay_batch_carries_requested_frames_and_the_count_of_the_whole_replay() -> None:
    empty = QuestionReplayFrame(payload=QuestionReplay(pending=0, requests=[]))
    assert empty.model_dump_json() == (
        '{"payload":{"type":"question/replay","pending":0,"requests":[]}}'
    )
    batch = QuestionReplayFrame.model_validate_json(
        '{"payload":{"type":"question/replay","pending":2,"requests":[{"rpcId":"r1",'
        '"payload":{"type":"question/requested","sessionId":"s","questions":[{"id":"q",'
        '"question":"?"}]},"rendered":{},"askedAt":"2025-01-02T03:04:05.000Z"}]}}'
    )
    (request,) = batch.payload.requests
    assert request.payload.questions == [AskUserQuestionItem(id="q", question="?")]
    for pending in (-1, "2", 2.0, True):
        with pytest.raises(ValidationError):
            QuestionReplay.model_validate({"pending": pending, "requests": []})


def test_question_resolved_names_the_request_its_seam_outcome_and_the_exact_one() -> None:
    frame = QuestionResolvedFrame(
        payload=QuestionResolved(
            session_id="s", question_rpc_id="r1", outcome="cancelled", settled=Outcome.TIMED_OUT
        )
    )
    assert frame.model_dump(mode="json") == {
        "payload": {
            "type": "question/resolved",
            "sessionId": "s",
            "questionRpcId": "r1",
            "outcome": "cancelled",
            "settled": "timed-out",
        }
    }


def test_one_receipt_model_serves_the_socket_and_the_http_body() -> None:
    assert Receipt(accepted=True).model_dump_json(exclude={"type"}) == '{"accepted":true}'
    refused = Receipt(accepted=False, reason="not-pending", message="gone")
    assert refused.model_dump_json(exclude={"type"}) == (
        '{"accepted":false,"reason":"not-pending","message":"gone"}'
    )
    assert Receipt.model_validate({"accepted": True}) == Receipt(accepted=True)
    frame = ReceiptFrame(rpc_id="r1", payload=Receipt(accepted=True))
    assert frame.model_dump_json() == (
        '{"rpcId":"r1","payload":{"type":"client-response/receipt","accepted":true}}'
    )
    assert PongFrame().model_dump_json() == '{"payload":{"type":"pong"}}'


def test_a_client_response_is_an_answer_or_a_dismissal() -> None:
    pages = TypeAdapter(PageFrame)
    answer = pages.validate_json(
        '{"type":"client-response","rpcId":"r1","result":{"ok":true,'
        '"value":{"sessionId":"s","answer":{"answers":[]}}}}'
    )
    assert isinstance(answer, ClientResponse)
    assert not isinstance(answer.result, ErrorResult)
    assert answer.result.value.answer == AskUserQuestionAnswer(answers=[])
    dismissal = pages.validate_json(
        '{"type":"client-response","rpcId":"r1","result":{"ok":false,'
        '"error":{"code":"cancelled","message":"dismissed in the browser"}}}'
    )
    assert isinstance(dismissal, ClientResponse)
    assert isinstance(dismissal.result, ErrorResult)
    assert isinstance(pages.validate_json('{"type":"ping"}'), Ping)


def test_malformed_frames_are_refused() -> None:
    for text in (
        '{"type":"client-response","rpcId":7,"result":{"ok":false,"error":{"code":"x"}}}',
        '{"type":"client-response","rpcId":"r","result":{"ok":true}}',
        '{"type":"hello"}',
    ):
        with pytest.raises(ValidationError):
            TypeAdapter(PageFrame).validate_json(text)


def test_the_asker_protocol_round_trips() -> None:
    askers = TypeAdapter(AskerFrame)
    ask = askers.validate_json('{"type":"ask","rpcId":"r","sessionId":"s","questions":[]}')
    assert ask.model_dump_json() == '{"type":"ask","rpcId":"r","sessionId":"s","questions":[]}'
    withdraw = askers.validate_json('{"type":"withdraw","rpcId":"r"}')
    assert withdraw.model_dump(mode="json") == {"type": "withdraw", "rpcId": "r"}
    settled = AskerReply(rpc_id="r", payload=AskSettled(outcome=Outcome.DISMISSED))
    assert settled.model_dump_json() == (
        '{"rpcId":"r","payload":{"type":"ask/settled","outcome":"dismissed"}}'
    )
    assert AskerReply.model_validate_json(settled.model_dump_json()) == settled


def test_an_ask_may_say_where_it_comes_from_within_bounds() -> None:
    askers = TypeAdapter(AskerFrame)
    ask = askers.validate_json(
        '{"type":"ask","rpcId":"r","sessionId":"s","questions":[],'
        '"origin":{"client":"claude-code","cwd":"/home/ada/src/app"}}'
    )
    assert isinstance(ask, Ask)
    assert ask.origin == Origin(client="claude-code", cwd="/home/ada/src/app")
    assert Origin(cwd="/srv").model_dump_json() == '{"cwd":"/srv"}'
    for origin in (
        {"client": "x" * (MAX_ORIGIN_CLIENT + 1)},
        {"cwd": "/" * (MAX_ORIGIN_CWD + 1)},
        {"client": ""},
        {"client": 7},
    ):
        with pytest.raises(ValidationError):
            Origin.model_validate(origin)


def test_an_answer_may_leave_out_the_session() -> None:
    response = ClientResponse.model_validate(
        {"rpcId": "r1", "result": {"ok": True, "value": {"answer": {"answers": []}}}}
    )
    assert not isinstance(response.result, ErrorResult)
    assert response.result.value.session_id is None


def test_questions_and_answers_are_carried_typed_under_their_own_names() -> None:
    """`_reading.wire.frame_refusal` tells a problem inside a frame's `questions` or `answer` as
    reading them alone would: in every frame those names carry the vocabulary, and nothing else
    does."""
    carried = {
        "questions": list[AskUserQuestionItem],
        "answer": AskUserQuestionAnswer,
    }
    vocabulary = {AskUserQuestionItem, AskUserQuestionAnswer}
    checked = 0
    for name in frames.__all__:
        model = getattr(frames, name)
        if not (isinstance(model, type) and issubclass(model, frames.Frame)):
            continue
        for field_name, field in model.model_fields.items():
            annotation = field.annotation
            if field_name in carried:
                assert annotation in (carried[field_name], carried[field_name] | None), name
                checked += 1
            else:
                assert not vocabulary & set(get_args(annotation) or [annotation]), (
                    name,
                    field_name,
                )
    assert checked == 4  # an ask's and a requested frame's questions, two answers
