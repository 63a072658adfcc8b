"""The frames a host sends most, written as text: the JSON their models would write.

Every request a host handles sends a page its `question/requested` frame (alone, or in a
`question/replay` batch) and its `question/resolved` frame, and an asker its `ask/pending` and
`ask/settled` replies. Building each through its model (validating what the host itself made, then
serialising it) cost a large share of a host's start with 10,000 pending and a few percent of its
CPU per answered request (`benchmarks/`); here each is written around the JSON it carries, which
the store keeps (a request's questions) or the model writes once (an answer, an origin). Each
writes a model of `frames`, which stays the definition: tests/host/test_frame_text.py checks that
each writes exactly the text its model would, with quotes, control characters, non-ASCII text and
every ending.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from user_questions.frames import iso
from user_questions.host.rules import rule_fields
from user_questions.host.stores import QUESTIONS, NewQuestion, Rule, StoredQuestion
from user_questions.outcomes import resolved_outcome

__all__ = [
    "group_frame",
    "grouped_frame",
    "pending_reply",
    "quorum_frame",
    "replay_frame",
    "requested_frame",
    "resolved_frame",
    "settled_reply",
]

_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""Compact JSON as pydantic writes it; one encoder (`json.dumps` with options makes one a call)."""


def _json_text(value: object) -> str:
    """`value` as compact JSON, non-ASCII text as it is."""
    return _JSON.encode(value)


def requested_frame(
    record: StoredQuestion | NewQuestion,
    remember: Rule | None = None,
    *,
    own: bool = False,
    approved_by: Sequence[str] = (),
) -> str:
    """The `question/requested` frame of a pending request (a `QuestionRequestedFrame`),
    written around the questions' JSON as the store holds it, offering the rule `remember`
    when the host can make one from it; `own`: under the rpcId its asker knows it by (what
    an asker lists). A request that needs several approvals carries its `quorum`, with the
    people who approved it so far (`approved_by`)."""
    rpc_id = (record.asker_rpc_id or record.rpc_id) if own else record.rpc_id
    questions = record.questions_json
    if questions is None:  # a record made outside a store
        questions = QUESTIONS.dump_json(list(record.questions)).decode()
    origin = "" if record.origin is None else f',"origin":{record.origin.model_dump_json()}'
    offer = "" if remember is None else f',"remember":{_json_text(rule_fields(remember))}'
    approval = record.approval
    call = "" if approval is None else f',"approval":{approval.model_dump_json()}'
    digest = record.digest if isinstance(record, NewQuestion) else record.card
    quorum = "" if record.approvals < 2 else f',"quorum":{_quorum(record.approvals, approved_by)}'
    return (
        f'{{"rpcId":{_json_text(rpc_id)},"payload":{{"type":"question/requested",'
        f'"sessionId":{_json_text(record.session_id)},"questions":{questions}}},'
        f'"rendered":{_json_text(dict(record.rendered))},"askedAt":"{iso(record.asked_at)}"'
        f'{origin}{offer}{call},"digest":"{digest}"{quorum}}}'
    )


def _quorum(needed: int, approved_by: Sequence[str]) -> str:
    """A `Quorum`'s JSON."""
    return f'{{"needed":{needed},"approvedBy":{_json_text(list(approved_by))}}}'


def quorum_frame(rpc_id: str, needed: int, approved_by: Sequence[str]) -> str:
    """The `question/quorum` frame (a `QuestionQuorumFrame`): the card of request `rpc_id`
    needs `needed` approvals and has `approved_by`'s."""
    return (
        f'{{"payload":{{"type":"question/quorum","questionRpcId":{_json_text(rpc_id)},'
        f'"quorum":{_quorum(needed, approved_by)}}}}}'
    )


def grouped_frame(requested: str, count: int) -> str:
    """The `question/requested` frame `requested` (as `requested_frame` wrote it) of a card
    that stands for `count` identical requests: with its `group` when `count` is 2 or more."""
    if count < 2:
        return requested
    return f'{requested[:-1]},"group":{{"count":{count}}}}}'


def group_frame(rpc_id: str, count: int) -> str:
    """The `question/group` frame (a `QuestionGroupFrame`): the card of request `rpc_id` now
    stands for `count` requests."""
    return (
        f'{{"payload":{{"type":"question/group","questionRpcId":{_json_text(rpc_id)},'
        f'"count":{count}}}}}'
    )


def replay_frame(pending: int, requests: Sequence[str]) -> str:
    """A `question/replay` batch (a `QuestionReplayFrame`) of a replay of `pending` requests,
    carrying `requests` (their `question/requested` frames, as written here) joined as they are."""
    return (
        f'{{"payload":{{"type":"question/replay","pending":{pending},'
        f'"requests":[{",".join(requests)}]}}}}'
    )


def resolved_frame(record: StoredQuestion) -> str:
    """The `question/resolved` frame of the settled `record` (a `QuestionResolvedFrame`)."""
    outcome = record.outcome
    assert outcome is not None
    return (
        f'{{"payload":{{"type":"question/resolved","sessionId":{_json_text(record.session_id)},'
        f'"questionRpcId":{_json_text(record.rpc_id)},"outcome":"{resolved_outcome(outcome)}",'
        f'"settled":"{outcome}"}}}}'
    )


def pending_reply(rpc_id: str) -> str:
    """The asker's `ask/pending` reply for request `rpc_id` (an `AskerReply`)."""
    return f'{{"rpcId":{_json_text(rpc_id)},"payload":{{"type":"ask/pending"}}}}'


def settled_reply(record: StoredQuestion) -> str:
    """The asker's `ask/settled` reply for the settled `record` (an `AskerReply`), with the
    answer when it was answered, under the rpcId its asker knows it by."""
    outcome = record.outcome
    assert outcome is not None
    answer = "" if record.answer is None else f',"answer":{record.answer.model_dump_json()}'
    return (
        f'{{"rpcId":{_json_text(record.own_rpc_id)},"payload":{{"type":"ask/settled",'
        f'"outcome":"{outcome}"{answer}}}}}'
    )
