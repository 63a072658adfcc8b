"""The events notifiers deliver: one stable JSON shape, built from the record the hub committed."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tests.host.conftest import PICK
from user_questions.host.notify.events import HostEvent, event_of
from user_questions.host.stores import StoredQuestion
from user_questions.outcomes import RequestState, Surface
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionAnswerItem

ASKED = datetime(2025, 3, 4, 5, 6, 7, 891_234, tzinfo=UTC)
SETTLED = datetime(2025, 3, 4, 5, 8, 0, tzinfo=UTC)


def record(state: RequestState, **fields: object) -> StoredQuestion:
    return StoredQuestion(
        rpc_id="r1",
        session_id="agent-1",
        questions=(PICK,),
        asked_at=ASKED,
        state=state,
        **fields,  # type: ignore[arg-type]
    )


def test_a_pending_event_says_who_asked_what_and_when() -> None:
    event = event_of(record(RequestState.PENDING, asked_by="alice"))
    assert json.loads(event.model_dump_json()) == {
        "type": "question/pending",
        "id": "r1:pending",
        "rpcId": "r1",
        "sessionId": "agent-1",
        "askedBy": "alice",
        "questions": [PICK.model_dump(mode="json")],
        "askedAt": "2025-03-04T05:06:07.891Z",
        "at": "2025-03-04T05:06:07.891Z",
    }


def test_an_answered_event_carries_the_answer_the_surface_and_the_person() -> None:
    answer = AskUserQuestionAnswer(answers=[AskUserQuestionAnswerItem(id="pick", selected=["b"])])
    event = event_of(
        record(
            RequestState.ANSWERED,
            answer=answer,
            settled_at=SETTLED,
            settled_via=Surface.TERMINAL,
            settled_by="bob",
        )
    )
    assert json.loads(event.model_dump_json()) == {
        "type": "question/settled",
        "id": "r1:settled",
        "rpcId": "r1",
        "sessionId": "agent-1",
        "questions": [PICK.model_dump(mode="json")],
        "askedAt": "2025-03-04T05:06:07.891Z",
        "at": "2025-03-04T05:08:00.000Z",
        "outcome": "answered",
        "answer": {"answers": [{"id": "pick", "selected": ["b"]}]},
        "via": "terminal",
        "by": "bob",
    }


def test_every_way_of_ending_is_an_outcome_and_unknown_fields_stay_absent() -> None:
    for state in (RequestState.DISMISSED, RequestState.WITHDRAWN, RequestState.TIMED_OUT):
        data = json.loads(event_of(record(state, settled_at=SETTLED)).model_dump_json())
        assert data["outcome"] == state.value
        assert "answer" not in data
        assert "by" not in data
        assert "via" not in data


def test_a_receiver_can_read_an_event_back_and_ignores_fields_it_does_not_know() -> None:
    data = json.loads(event_of(record(RequestState.PENDING)).model_dump_json())
    data["addedByALaterVersion"] = True
    assert HostEvent.model_validate(data) == event_of(record(RequestState.PENDING))
