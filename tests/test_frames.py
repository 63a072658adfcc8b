"""The frames of the host protocol: exact JSON shapes, and what a malformed frame says."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from user_questions.frames import (
    AskerFrame,
    AskerReply,
    AskSettled,
    ClientResponse,
    ErrorResult,
    PageFrame,
    Ping,
    PongFrame,
    QuestionRequested,
    QuestionRequestedFrame,
    QuestionResolved,
    QuestionResolvedFrame,
    Receipt,
    ReceiptFrame,
    ReceiptPayload,
)


def test_question_requested_is_the_spec_payload_plus_the_pages_extras() -> None:
    frame = QuestionRequestedFrame(
        rpc_id="r1",
        payload=QuestionRequested(session_id="s", questions=[{"id": "q", "question": "?"}]),
        rendered={},
        asked_at="2025-01-02T03:04:05.000Z",
    )
    assert frame.model_dump_json() == (
        '{"rpcId":"r1","payload":{"type":"question/requested","sessionId":"s",'
        '"questions":[{"id":"q","question":"?"}]},"rendered":{},'
        '"askedAt":"2025-01-02T03:04:05.000Z"}'
    )


def test_question_resolved_names_the_request_and_its_outcome() -> None:
    frame = QuestionResolvedFrame(
        payload=QuestionResolved(session_id="s", question_rpc_id="r1", outcome="cancelled")
    )
    assert frame.model_dump(mode="json") == {
        "payload": {
            "type": "question/resolved",
            "sessionId": "s",
            "questionRpcId": "r1",
            "outcome": "cancelled",
        }
    }


def test_receipts_leave_out_what_is_not_set() -> None:
    assert Receipt(accepted=True).model_dump_json() == '{"accepted":true}'
    refused = Receipt(accepted=False, reason="not-pending", message="gone")
    assert refused.model_dump_json() == '{"accepted":false,"reason":"not-pending","message":"gone"}'
    frame = ReceiptFrame(rpc_id="r1", payload=ReceiptPayload(accepted=True))
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
    assert answer.result.value.answer == {"answers": []}
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
    settled = AskerReply(rpc_id="r", payload=AskSettled(outcome="withdrawn"))
    assert settled.model_dump_json() == (
        '{"rpcId":"r","payload":{"type":"ask/settled","outcome":"withdrawn"}}'
    )
    assert AskerReply.model_validate_json(settled.model_dump_json()) == settled
