"""The frames a host writes as text (`host/_frame_text.py`) are exactly the text their models
would write, whatever the ids, the questions, the answer, the origin and the ending hold: every
writer against its model, on generated records and on records a store has kept."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.host.conftest import MANY, PICK, PLAN
from user_questions.frames import (
    Approval,
    AskerReply,
    AskPending,
    AskSettled,
    Origin,
    QuestionGroup,
    QuestionGroupFrame,
    QuestionQuorum,
    QuestionQuorumFrame,
    QuestionReplay,
    QuestionReplayFrame,
    QuestionRequested,
    QuestionRequestedFrame,
    QuestionResolved,
    QuestionResolvedFrame,
    Quorum,
    RequestGroup,
    RuleProposal,
    iso,
)
from user_questions.host._frame_text import (
    group_frame,
    grouped_frame,
    pending_reply,
    quorum_frame,
    replay_frame,
    requested_frame,
    resolved_frame,
    settled_reply,
)
from user_questions.host.rules import rule_fields
from user_questions.host.stores import (
    Decision,
    NewQuestion,
    Rule,
    Settlement,
    StoredQuestion,
    pending_record,
    settled_record,
)
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Outcome, Surface, resolved_outcome
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    PlanReviewIntent,
)

pytestmark = pytest.mark.anyio

AWKWARD = 'quote " backslash \\ newline \n tab \t bell \x07 del \x7f é 漢字 🙂 \u2028 </script>'
"""What JSON writers may escape differently: quotes, control characters, non-ASCII text."""

_TEXT = st.one_of(st.text(), st.sampled_from([AWKWARD, "", "\x00\x1f", "\ufeff", "\U0010ffff"]))
_OPTIONAL = st.one_of(st.none(), _TEXT)
_OPTIONS = st.builds(AskUserQuestionOption, label=_TEXT, description=_OPTIONAL)
_OBJECTS = st.dictionaries(
    _TEXT,
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
        lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_TEXT, inner, max_size=2),
        max_leaves=6,
    ),
    max_size=3,
)
"""JSON objects: a form's schema or value, a call's input (the frames carry them as given)."""
QUESTIONS = st.builds(
    AskUserQuestionItem,
    id=_TEXT,
    question=_TEXT,
    detail=_OPTIONAL,
    header=_OPTIONAL,
    options=st.one_of(st.none(), st.lists(_OPTIONS, max_size=3)),
    multi_select=st.one_of(st.none(), st.booleans()),
    intent=st.one_of(st.none(), st.builds(PlanReviewIntent, approve=_TEXT)),
    schema_=st.one_of(st.none(), _OBJECTS),
)
ANSWERS = st.builds(
    AskUserQuestionAnswer,
    answers=st.lists(
        st.builds(
            AskUserQuestionAnswerItem,
            id=_TEXT,
            selected=st.lists(_TEXT, max_size=3),
            custom=_OPTIONAL,
            note=_OPTIONAL,
            value=st.one_of(st.none(), _OBJECTS),
            edited=st.one_of(st.none(), _OBJECTS),
        ),
        max_size=3,
    ),
)
ORIGINS = st.one_of(
    st.none(),
    st.builds(
        Origin,
        client=st.one_of(st.none(), st.text(min_size=1, max_size=20)),
        cwd=st.one_of(st.none(), st.text(min_size=1, max_size=40)),
    ),
)
APPROVALS = st.one_of(
    st.none(),
    st.builds(
        Approval,
        tool=st.text(min_size=1, max_size=20),
        input=_OBJECTS,
        agent=st.one_of(st.none(), st.text(min_size=1, max_size=20)),
        editable=st.one_of(st.none(), st.booleans()),
    ),
)
MOMENTS = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)


@st.composite
def new_questions(draw: st.DrawFn) -> NewQuestion:
    questions = draw(st.lists(QUESTIONS, min_size=1, max_size=3))
    rendered = {question.id: draw(_TEXT) for question in questions if question.detail is not None}
    return NewQuestion(
        draw(_TEXT),
        draw(_TEXT),
        questions,
        draw(MOMENTS),
        origin=draw(ORIGINS),
        rendered=rendered,
        approval=draw(APPROVALS),
    )


@st.composite
def settled_records(draw: st.DrawFn) -> StoredQuestion:
    pending = pending_record(draw(new_questions()))
    ending = draw(st.sampled_from(list(Outcome)))
    answer = draw(ANSWERS) if ending is Outcome.ANSWERED else None
    settlement = Settlement(ending, answer, Surface.WEB, by=draw(_OPTIONAL))
    return settled_record(pending, settlement, pending.asked_at + timedelta(seconds=1), None)


def requested_model(record: StoredQuestion | NewQuestion) -> QuestionRequestedFrame:
    return QuestionRequestedFrame(
        rpc_id=record.rpc_id,
        payload=QuestionRequested(session_id=record.session_id, questions=list(record.questions)),
        rendered=dict(record.rendered),
        asked_at=iso(record.asked_at),
        origin=record.origin,
        approval=record.approval,
        digest=record.digest if isinstance(record, NewQuestion) else record.card,
    )


def resolved_model(record: StoredQuestion) -> QuestionResolvedFrame:
    assert record.outcome is not None
    return QuestionResolvedFrame(
        payload=QuestionResolved(
            session_id=record.session_id,
            question_rpc_id=record.rpc_id,
            outcome=resolved_outcome(record.outcome),
            settled=record.outcome,
        )
    )


def settled_model(record: StoredQuestion) -> AskerReply:
    assert record.outcome is not None
    return AskerReply(
        rpc_id=record.rpc_id, payload=AskSettled(outcome=record.outcome, answer=record.answer)
    )


@settings(max_examples=200, deadline=None)
@given(new_questions())
def test_the_requested_frame_is_the_models_text_however_the_record_was_made(
    asked: NewQuestion,
) -> None:
    expected = requested_model(asked).model_dump_json()
    assert requested_frame(asked) == expected
    assert requested_frame(pending_record(asked)) == expected  # the text the store keeps
    made_outside = StoredQuestion(
        asked.rpc_id,
        asked.session_id,
        tuple(asked.questions),
        asked.asked_at,
        pending_record(asked).state,
        origin=asked.origin,
        rendered=asked.rendered,
        approval=asked.approval,
    )
    assert requested_frame(made_outside) == expected  # no stored text: serialised here


_RULES = st.builds(
    Rule,
    tool=_TEXT,
    decision=st.sampled_from(list(Decision)),
    created_at=MOMENTS,
    command=_OPTIONAL,
    asker=_OPTIONAL,
    cwd=_OPTIONAL,
)


@settings(max_examples=100, deadline=None)
@given(new_questions(), _RULES)
def test_the_requested_frame_offering_a_rule_is_the_models_text(
    asked: NewQuestion, rule: Rule
) -> None:
    offered = requested_model(asked).model_copy(
        update={"remember": RuleProposal.model_validate(rule_fields(rule))}
    )
    assert requested_frame(asked, rule) == offered.model_dump_json()


@settings(max_examples=200, deadline=None)
@given(settled_records())
def test_the_resolved_frame_and_the_settled_reply_are_the_models_text(
    record: StoredQuestion,
) -> None:
    assert resolved_frame(record) == resolved_model(record).model_dump_json()
    assert settled_reply(record) == settled_model(record).model_dump_json()


@settings(max_examples=100, deadline=None)
@given(new_questions(), st.integers(min_value=1, max_value=100_000))
def test_a_card_of_identical_requests_and_its_count_are_the_models_text(
    asked: NewQuestion, count: int
) -> None:
    alone = requested_model(asked)
    group = None if count == 1 else RequestGroup(count=count)
    expected = alone.model_copy(update={"group": group}).model_dump_json()
    assert grouped_frame(requested_frame(asked), count) == expected
    counted = QuestionGroupFrame(payload=QuestionGroup(question_rpc_id=asked.rpc_id, count=count))
    assert group_frame(asked.rpc_id, count) == counted.model_dump_json()


@settings(max_examples=100, deadline=None)
@given(
    new_questions(),
    st.integers(min_value=2, max_value=10),
    st.lists(_TEXT, max_size=10),
    st.integers(min_value=1, max_value=100),
)
def test_a_quorums_card_and_its_count_are_the_models_text(
    asked: NewQuestion, needed: int, approved_by: list[str], count: int
) -> None:
    quorum = Quorum(needed=needed, approved_by=approved_by)
    group = None if count == 1 else RequestGroup(count=count)
    shown = requested_model(asked).model_copy(update={"quorum": quorum, "group": group})
    needing = replace(asked, approvals=needed)
    written = grouped_frame(requested_frame(needing, approved_by=approved_by), count)
    assert written == shown.model_dump_json()
    assert requested_frame(asked, approved_by=approved_by) == requested_frame(asked)  # no quorum
    pushed = QuestionQuorumFrame(
        payload=QuestionQuorum(question_rpc_id=asked.rpc_id, quorum=quorum)
    )
    assert quorum_frame(asked.rpc_id, needed, approved_by) == pushed.model_dump_json()


@given(_TEXT)
def test_the_pending_reply_is_the_models_text(rpc_id: str) -> None:
    assert (
        pending_reply(rpc_id) == AskerReply(rpc_id=rpc_id, payload=AskPending()).model_dump_json()
    )


@settings(max_examples=50, deadline=None)
@given(st.lists(new_questions(), max_size=4), st.integers(min_value=0, max_value=100_000))
def test_a_replay_batch_is_the_models_text(batch: list[NewQuestion], pending: int) -> None:
    expected = QuestionReplayFrame(
        payload=QuestionReplay(pending=pending, requests=[requested_model(one) for one in batch])
    )
    assert replay_frame(pending, [requested_frame(one) for one in batch]) == (
        expected.model_dump_json()
    )


@pytest.mark.parametrize("ending", list(Outcome))
async def test_the_frames_of_a_request_a_store_kept_are_the_models_text(
    tmp_path: Path, ending: Outcome
) -> None:
    answer = AskUserQuestionAnswer.model_validate(
        {"answers": [{"id": PICK.id, "selected": ["a"], "custom": AWKWARD}]}
    )
    settlement = Settlement(
        ending, answer if ending is Outcome.ANSWERED else None, Surface.WEB, by=AWKWARD
    )
    rpc_id = f"r {AWKWARD}"
    plan = PLAN.model_copy(update={"detail": AWKWARD})
    asked = NewQuestion(
        rpc_id,
        f"s {AWKWARD}",
        [PICK, MANY, plan],
        datetime.now(UTC),
        origin=Origin(client=AWKWARD, cwd="/srv"),
        rendered={plan.id: f"<p>{AWKWARD}</p>"},
    )
    async with SQLiteStore(tmp_path / "host.db") as store:
        await store.submit(asked)
        (stored,) = await store.pending()
        record = await store.settle(rpc_id, settlement)
    assert stored.questions_json is not None  # the frame embeds the store's own text
    assert requested_frame(stored) == requested_model(stored).model_dump_json()
    assert record is not None
    assert resolved_frame(record) == resolved_model(record).model_dump_json()
    assert settled_reply(record) == settled_model(record).model_dump_json()
    assert ("answer" in settled_reply(record)) is (ending is Outcome.ANSWERED)
