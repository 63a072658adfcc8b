"""Identical pending requests of one asker, shown to people as one card with a count.

A runaway agent that asks the same thing in a loop must not fill a person's inbox: requests of
the same asker token, session, card (questions and approval: `StoredQuestion.card`) and route
(audience, escalation steps, reminders) pending at once form a group. Its oldest request is the
card the pages show, with the group's count; the others are shown through it, and one answer
settles them all (`Hub.respond`). Only an asker token's requests are grouped (`Groups`'
`grouped`): a person's, an admin's or an in-process ask is each a card of its own.

A group is this host's view of its cache: hosts sharing a store group what each has pending,
which is the same set once every host has followed the store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from user_questions.host.stores import StoredQuestion

__all__ = ["Groups", "Left", "OnePerCard"]

_GroupKey = tuple[object, ...]


def _key(record: StoredQuestion) -> _GroupKey:
    """What identical requests share: who asked, in which session, which card, routed how
    (one flat tuple: each pending request of an agent holds one)."""
    return (
        record.asked_by,
        record.session_id,
        record.card,
        record.audience,
        record.escalate,
        record.remind,
    )


@dataclass(frozen=True, slots=True)
class Left:
    """A request left its group (it settled): who shows the group now, and how many are left."""

    was_leader: bool
    """It was the group's card."""
    leader: str | None
    """The request the group's card is now; `None` when the group is empty."""
    count: int


class Groups:
    """The groups of a host's pending requests, each in the order its requests were asked."""

    def __init__(self, grouped: Callable[[str], bool]) -> None:
        self._grouped = grouped
        """Whether the token of this name asks as an agent (its identical requests grouped)."""
        self._members: dict[_GroupKey, str | dict[str, None]] = {}
        """Each group's requests in order; a group of one (most are) as its request's id alone,
        not a dict: with 10,000 pending, 1 MB less (issue 42)."""
        self._key_of: dict[str, _GroupKey] = {}

    def join(self, record: StoredQuestion) -> tuple[str, int]:
        """Add the pending `record`; the request its group's card is, and the group's count."""
        if record.asked_by is None or not self._grouped(record.asked_by):
            return record.rpc_id, 1
        key, rpc_id = _key(record), record.rpc_id
        self._key_of[rpc_id] = key
        held = self._members.get(key)
        if held is None or held == rpc_id:
            self._members[key] = rpc_id
            return rpc_id, 1
        if isinstance(held, str):
            held = self._members[key] = {held: None}
        held[rpc_id] = None
        return next(iter(held)), len(held)

    def leave(self, rpc_id: str) -> Left:
        """Remove request `rpc_id` (settled)."""
        key = self._key_of.pop(rpc_id, None)
        if key is None:
            return Left(True, None, 0)
        held = self._members[key]
        if isinstance(held, str):
            del self._members[key]
            return Left(True, None, 0)
        was_leader = next(iter(held)) == rpc_id
        del held[rpc_id]
        if not held:
            del self._members[key]
            return Left(was_leader, None, 0)
        return Left(was_leader, next(iter(held)), len(held))

    def leader(self, rpc_id: str) -> str:
        """The request whose card shows request `rpc_id` (itself when it is not grouped)."""
        key = self._key_of.get(rpc_id)
        if key is None:
            return rpc_id
        held = self._members[key]
        return held if isinstance(held, str) else next(iter(held))

    def members(self, rpc_id: str) -> list[str]:
        """Every request of the group of request `rpc_id`, oldest first (`[rpc_id]` alone)."""
        key = self._key_of.get(rpc_id)
        return [rpc_id] if key is None else _ids(self._members[key])

    def count(self, rpc_id: str) -> int:
        """How many requests the group of request `rpc_id` holds."""
        key = self._key_of.get(rpc_id)
        if key is None:
            return 1
        held = self._members[key]
        return 1 if isinstance(held, str) else len(held)


def _ids(held: str | dict[str, None]) -> list[str]:
    """A group's requests, oldest first, as `Groups` holds them."""
    return [held] if isinstance(held, str) else list(held)


class OnePerCard:
    """Which of a hub's events someone reading one message per card wants (a person's
    notifier, a chat): a request's, unless it is one more of the identical requests another's
    card stands for (`apart`: `Hub.shown_apart`), and then not its settlement either."""

    def __init__(self, apart: Callable[[str], bool]) -> None:
        self._apart = apart
        self._quiet: set[str] = set()
        """Requests passed over while pending: their settlement is passed over too."""

    def wanted(self, record: StoredQuestion) -> bool:
        """Whether to tell of `record` (pending or settled, as the hub reports it)."""
        if not record.pending:
            if record.rpc_id not in self._quiet:
                return True
            self._quiet.discard(record.rpc_id)
            return False
        if self._apart(record.rpc_id):
            return True
        self._quiet.add(record.rpc_id)
        return False

    def pass_over(self, record: StoredQuestion) -> None:
        """Tell of neither the pending `record` nor its settlement (a digest stands for it)."""
        self._quiet.add(record.rpc_id)

    def passed_over(self, rpc_id: str) -> bool:
        """Whether request `rpc_id` is passed over and has not settled yet."""
        return rpc_id in self._quiet
