"""The events a host reports to notifiers: a question became pending, a question settled.

`event_of(record)` turns a request the hub has just committed (`Hub.on_event`) into a `HostEvent`;
its JSON is what a webhook receives as the body of its POST and a notify command reads on stdin. The
shape is a stable contract (docs/notify.md): camelCase, optional fields absent rather than `null`,
unknown keys to be ignored by receivers so that later versions can add fields.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import PrivateAttr, StrictStr

from user_questions.frames import JSONObject, Origin, iso
from user_questions.host.stores import StoredQuestion
from user_questions.outcomes import Outcome, Surface
from user_questions.types import WireModel

__all__ = [
    "EVENT_PENDING",
    "EVENT_SETTLED",
    "EVENT_WAITING",
    "EventType",
    "HostEvent",
    "digest_of",
    "event_of",
]

EVENT_PENDING = "question/pending"
EVENT_SETTLED = "question/settled"
EVENT_WAITING = "questions/waiting"
EventType = Literal["question/pending", "question/settled", "questions/waiting"]


class HostEvent(WireModel):
    """A change to one request, as notifiers deliver it."""

    type: EventType
    """`question/pending` once a new request is stored; `question/settled` once it ends;
    `questions/waiting` (only to notifiers a person reads: `telling.py`) for the requests that
    arrived at once beyond the first few told one by one, about the latest of them."""
    id: StrictStr
    """`<rpcId>:pending` or `<rpcId>:settled`: the same on every retry and unique per event, so a
    receiver can drop a delivery it has already handled."""
    rpc_id: StrictStr
    """The request's id, as on the page and in `/api/pending`."""
    session_id: StrictStr
    """Which agent asked: the agent's id, or the asker's named session."""
    asked_by: StrictStr | None = None
    """The person whose token the asker presented (`owner` for the host's start-up token); absent
    for an asker in the host's own process."""
    origin: Origin | None = None
    """Where the asker said the request comes from (the asking program, its folder)."""
    questions: list[JSONObject]
    """The request's `AskUserQuestionItem`s, as wire JSON."""
    asked_at: StrictStr
    """When the request was first stored, ISO 8601 UTC."""
    at: StrictStr
    """When this event happened (asked or settled), ISO 8601 UTC."""
    outcome: Outcome | None = None
    """Settled only: `answered`; `dismissed` (a person dismissed it); `timed-out` (its asker's
    own timeout ran out); `withdrawn` (its asker gave up otherwise: an abort, a cancellation)."""
    answer: JSONObject | None = None
    """Settled and answered only: the `AskUserQuestionAnswer`, as wire JSON."""
    via: Surface | None = None
    """Settled only: the surface that settled it: `web` (a page), `terminal` (`uq answer`),
    `editor`, `link`, `api` (another HTTP client), `asker` (withdrawn by its asker), `host` (an
    in-process asker)."""
    by: StrictStr | None = None
    """Settled only, when a token was involved: the person who answered or dismissed it (the
    name of their token, `owner` for the host's start-up token)."""
    channel: StrictStr | None = None
    """Settled through an answer link only: the notification channel that carried the link
    (`ntfy`, `mailto`, `slack`, ...: the scheme of its `--notify` URL)."""
    waiting: int | None = None
    """`questions/waiting` only: how many requests it stands for."""

    _record: StoredQuestion | None = PrivateAttr(default=None)

    @property
    def record(self) -> StoredQuestion | None:
        """The request as the hub committed it, for notifiers that need more than the event
        says (whether it is an approval); never part of the JSON."""
        return self._record

    def __eq__(self, other: object) -> bool:
        """Events are equal when they say the same: the record kept beside one is not compared
        (a receiver reading an event back has only what it says)."""
        if not isinstance(other, HostEvent):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__


def digest_of(latest: StoredQuestion, waiting: int) -> HostEvent:
    """The `questions/waiting` event of `waiting` requests that arrived at once, `latest` the
    last of them."""
    event = event_of(latest).model_copy(
        update={"type": EVENT_WAITING, "id": f"{latest.rpc_id}:waiting", "waiting": waiting}
    )
    event._record = latest
    return event


def event_of(record: StoredQuestion) -> HostEvent:
    """The event for a request just committed: pending, or settled."""
    asked_at = iso(record.asked_at)
    request = {
        "rpc_id": record.rpc_id,
        "session_id": record.session_id,
        "asked_by": record.asked_by,
        "origin": record.origin,
        "questions": [question.model_dump(mode="json") for question in record.questions],
        "asked_at": asked_at,
    }
    if record.pending:
        event = HostEvent(type=EVENT_PENDING, id=f"{record.rpc_id}:pending", at=asked_at, **request)
    else:
        event = HostEvent(
            type=EVENT_SETTLED,
            id=f"{record.rpc_id}:settled",
            at=iso(record.settled_at or datetime.now(UTC)),
            outcome=record.outcome,
            answer=None if record.answer is None else record.answer.model_dump(mode="json"),
            via=record.settled_via,
            by=record.settled_by,
            channel=record.channel,
            **request,
        )
    event._record = record
    return event
