"""The requests: who asked what under which id, and the hub's cache of them over the store.

The store is the source of truth; the cache keeps the pending requests (their questions as JSON
text, `QuestionsText`; their `question/requested` frames are written when sent, which keeps a host
with 10,000 pending small: docs/performance.md, issue 42) and remembers the last settled ones, so
that a re-attachment or a late frame racing a settlement is answered without a store read and never
revives the request. `Requests.apply` is the one place that updates it, and says what changed
(`Applied`) for the hub to announce."""

from __future__ import annotations

import enum
import hashlib
import logging
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from user_questions._checks import quoted
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval, Origin
from user_questions.host.hub._groups import Groups
from user_questions.host.hub._timetable import routing_moment
from user_questions.host.stores import StoredQuestion
from user_questions.types import AskUserQuestionItem

__all__ = [
    "SETTLED_MEMORY",
    "Applied",
    "Asking",
    "Change",
    "Entry",
    "Requests",
    "Watcher",
    "stored_ids",
    "taken",
]

logger = logging.getLogger("user_questions.host")

SETTLED_MEMORY = 1024
"""Recently settled requests remembered, so that a re-attachment or a late frame racing a
settlement is answered without a store read and never revives the request."""
_OWN_IDS = 8
"""The ids tried for an asker's rpcId (another token may have asked with it, and with the
next); beyond them the rpcId is refused as taken."""

Watcher = Callable[[StoredQuestion], None]
"""Called once, on the event loop, with the settled record of the request it watches."""


@dataclass(frozen=True, slots=True)
class Asking:
    """An ask as its asker sent it (an approval's card is still the asker's)."""

    rpc_id: str
    session_id: str
    questions: tuple[AskUserQuestionItem, ...]
    asked_by: str | None
    origin: Origin | None
    audience: tuple[str, ...]
    approval: Approval | None

    def asked_as(self, known: StoredQuestion) -> bool:
        """Whether `known` is the request this asker knows by this rpcId."""
        return known.asked_by == self.asked_by and known.own_rpc_id == self.rpc_id


def stored_ids(rpc_id: str, asked_by: str | None) -> Iterator[str]:
    """Where the request the asker of `asked_by` knows by `rpc_id` is kept: under `rpc_id`
    unless another token asked with it first, then under ids made from both, the same on
    every host (a prefix of the rpcId, `~`, a hash)."""
    yield rpc_id
    for attempt in range(1, _OWN_IDS):
        digest = hashlib.sha256(f"{asked_by}\x00{rpc_id}\x00{attempt}".encode()).hexdigest()
        yield f"{rpc_id[:64]}~{digest[:24]}"


def taken(rpc_id: str) -> UserQuestionError:
    """The refusal of an rpcId every id it could be kept under is taken for (`stored_ids`)."""
    return UserQuestionError(
        f"rpcId {quoted(rpc_id)} cannot be used; use a new rpcId", ErrorCode.BAD_REQUEST
    )


@dataclass(eq=False, slots=True)
class Entry:
    """A pending request in the cache."""

    record: StoredQuestion
    watchers: tuple[Watcher, ...] = ()
    """Most have one (the asker's): a tuple, smaller than a list."""
    shown: bool = False
    """Whether its first-shown time is recorded (or being recorded)."""
    approved_by: tuple[str, ...] = ()
    """Of a request that needs several approvals: who approved its call so far."""

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        """Call `watcher` when the request settles; returns a function that stops it."""
        self.watchers += (watcher,)
        return _Unwatch(self, watcher)

    def unwatch(self, watcher: Watcher) -> None:
        """Stop calling `watcher` (what `watch`'s function does)."""
        if watcher in self.watchers:
            watchers = list(self.watchers)
            watchers.remove(watcher)
            self.watchers = tuple(watchers)

    def tell_watchers(self, settled: StoredQuestion) -> None:
        for watcher in self.watchers:
            try:
                watcher(settled)
            except Exception:
                logger.exception("a watcher of question %s raised", settled.rpc_id)


class _Unwatch:
    """`Entry.watch`'s function that stops a watcher: every pending request's asker holds one,
    and this is a quarter of a closure's or a `functools.partial`'s size (about 50 bytes
    against 200)."""

    __slots__ = ("_entry", "_watcher")

    def __init__(self, entry: Entry, watcher: Watcher) -> None:
        self._entry = entry
        self._watcher = watcher

    def __call__(self) -> None:
        self._entry.unwatch(self._watcher)


class Change(enum.Enum):
    """What applying a record changed in the cache."""

    NEW = "new"
    """A request pending that was not: the hub times it and sends its frame to the pages."""
    WIDENED = "widened"
    """A pending request routed further (an escalation step, a reminder)."""
    SETTLED = "settled"
    """A request pending until now has settled."""


@dataclass(frozen=True, slots=True)
class Applied:
    change: Change
    entry: Entry
    before: StoredQuestion | None = None
    """`WIDENED`: the record before, whose audience has the request already."""
    leader: Entry | None = None
    """The request whose card shows the request's group after the change (`_groups`): the
    request itself when it is alone; `None` when a settlement emptied its group."""
    count: int = 1
    """How many requests the group holds after the change."""
    was_leader: bool = True
    """`SETTLED`: the request was its group's card."""


class Requests:
    """The pending requests of one host, oldest first, and the recently settled ones;
    `grouped` says whether a token asks as an agent, whose identical requests are grouped."""

    def __init__(self, grouped: Callable[[str], bool]) -> None:
        self._pending: dict[str, Entry] = {}
        self._settled: OrderedDict[str, StoredQuestion] = OrderedDict()
        self._held: Counter[str | None] = Counter()
        """How many pending requests each asker token holds."""
        self._groups = Groups(grouped)

    def __len__(self) -> int:
        return len(self._pending)

    def ids(self) -> list[str]:
        """The rpcIds of the pending requests, oldest first."""
        return [entry.record.rpc_id for entry in self]

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._pending.values())

    def held_by(self, asker: str) -> int:
        """How many pending requests the token called `asker` asked."""
        return self._held[asker]

    def pending(self, rpc_id: str) -> Entry | None:
        return self._pending.get(rpc_id)

    def leads(self, entry: Entry) -> bool:
        """Whether `entry` is its group's card (or alone)."""
        return self._groups.leader(entry.record.rpc_id) == entry.record.rpc_id

    def count(self, entry: Entry) -> int:
        """How many requests the card of `entry` stands for."""
        return self._groups.count(entry.record.rpc_id)

    def group(self, entry: Entry) -> list[Entry]:
        """Every pending request of the group of `entry`, oldest first (`entry` alone)."""
        members = self._groups.members(entry.record.rpc_id)
        return [self._pending[rpc_id] for rpc_id in members]

    def settled(self, rpc_id: str) -> StoredQuestion | None:
        return self._settled.get(rpc_id)

    def known(self, rpc_id: str) -> StoredQuestion | None:
        """The request as this host last heard of it, pending or recently settled."""
        entry = self._pending.get(rpc_id)
        return entry.record if entry is not None else self._settled.get(rpc_id)

    def oldest_asked(self) -> datetime | None:
        return min((entry.record.asked_at for entry in self._pending.values()), default=None)

    def unshown(self, entries: Iterable[Entry]) -> list[str]:
        """The rpcIds of `entries` whose first-shown time is not recorded yet, marked as being
        recorded now."""
        fresh = [entry for entry in entries if not entry.shown]
        for entry in fresh:
            entry.shown = True
        return [entry.record.rpc_id for entry in fresh]

    def apply(self, record: StoredQuestion) -> Applied | None:
        """Bring the cache up to `record`; what changed, `None` for nothing. Settled is final:
        a stale pending record never revives a request, and a record read back replaces a
        pending one only when its routing is further on."""
        rpc_id = record.rpc_id
        if rpc_id in self._settled:
            return None
        if record.pending:
            known = self._pending.get(rpc_id)
            if known is None:
                entry = Entry(record, shown=record.shown_at is not None)
                self._pending[rpc_id] = entry
                self._held[record.asked_by] += 1
                leader, count = self._groups.join(record)
                return Applied(Change.NEW, entry, leader=self._pending[leader], count=count)
            if routing_moment(record) <= routing_moment(known.record):
                return None
            before, known.record = known.record, record
            leader, count = self._groups.leader(rpc_id), self._groups.count(rpc_id)
            return Applied(Change.WIDENED, known, before, self._pending[leader], count)
        self._settled[rpc_id] = record
        if len(self._settled) > SETTLED_MEMORY:
            self._settled.popitem(last=False)
        settled = self._pending.pop(rpc_id, None)
        if settled is None:
            return None
        self._held[record.asked_by] -= 1
        if not self._held[record.asked_by]:
            del self._held[record.asked_by]
        left = self._groups.leave(rpc_id)
        card = None if left.leader is None else self._pending[left.leader]
        return Applied(Change.SETTLED, settled, None, card, left.count, left.was_leader)
