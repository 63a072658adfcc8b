"""The host's metrics, in Prometheus' text format: what `GET /metrics` answers.

prometheus-client is imported when the host is first scraped (a host that nobody scrapes never loads
it, and starts that much sooner). Every hub has its own `HostMetrics` (`Hub.metrics`) with a
registry of its own, so several hosts in one process never share a counter. The hub reports to it
what it commits, its WebSockets what is connected, the notifiers their queues (`watch_notifiers`),
the app its store (`watch_store`). The values are plain numbers kept on the event loop and turned
into metric families only when scraped, so counting costs next to nothing:

    uq_requests_pending                              requests pending, as this host knows them
    uq_oldest_pending_seconds                        how long the oldest of them has waited
    uq_requests_asked_total                          requests this host stored as new
    uq_requests_settled_total{outcome,surface}       requests this host settled
    uq_request_settle_seconds{outcome}               time from asked to settled (histogram)
    uq_connections{kind="page"|"asker"}              open WebSockets
    uq_notifier_queued{notifier}                     events waiting in a notifier's queue
    uq_notifier_delivered_total{notifier}            events delivered
    uq_notifier_failed_total{notifier}               events given up on after their tries
    uq_notifier_dropped_total{notifier}              events dropped unsent (queue full, stop)
    uq_store_errors_total                            store operations that failed
    uq_store_reconnects_total                        times the store got its database back
    uq_build_info{version}                           1

`outcome` and `surface` are the names of `user_questions.outcomes` (`answered`, `dismissed`,
`withdrawn`, `timed-out`; `web`, `terminal`, `editor`, `link`, `api`, `asker`, `host`, `rule`). On
several nodes sharing PostgreSQL, each node counts the requests it wrote (sum them), and each
reports every pending request (take the maximum). docs/deploy.md says what to alert on.
"""

from __future__ import annotations

import bisect
import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from user_questions._lifecycle.disposer import Disposer
from user_questions._version import __version__
from user_questions.host.stores import StoredQuestion, StoreStats

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import Metric

__all__ = [
    "CONTENT_TYPE",
    "CONNECTION_KINDS",
    "SETTLE_BUCKETS",
    "HostMetrics",
    "QueueStats",
]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The content type of `GET /metrics`: Prometheus' text format, version 0.0.4, which every
Prometheus (and every scraper that speaks its format) reads."""
CONNECTION_KINDS = ("page", "asker")
"""The `kind` of `uq_connections`: a page's `/ws`, an asker's `/ws/ask`."""
SETTLE_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600)
"""The upper bounds, in seconds, of the `uq_request_settle_seconds` buckets: a person answers
in seconds, minutes or hours; an asker's timeout may take a day."""


class QueueStats(Protocol):
    """What a notifier tells of its queue (`host.notify.Notifier` has all of it)."""

    target: str
    delivered: int
    failed: int
    dropped: int

    @property
    def queued(self) -> int: ...


class _Durations:
    """One outcome's histogram: counts per bucket, their sum."""

    def __init__(self) -> None:
        self.buckets = [0] * (len(SETTLE_BUCKETS) + 1)  # the last one is +Inf
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.buckets[bisect.bisect_left(SETTLE_BUCKETS, seconds)] += 1
        self.total += seconds

    def cumulative(self) -> list[tuple[str, float]]:
        bounds = [*(f"{float(bound)}" for bound in SETTLE_BUCKETS), "+Inf"]
        running, found = 0, []
        for bound, count in zip(bounds, self.buckets, strict=True):
            running += count
            found.append((bound, float(running)))
        return found


class HostMetrics:
    """The numbers of one host, and the registry `GET /metrics` renders them from."""

    def __init__(self) -> None:
        self.asked = 0
        self.settled: Counter[tuple[str, str]] = Counter()
        self.connections: Counter[str] = Counter(dict.fromkeys(CONNECTION_KINDS, 0))
        self._durations: dict[str, _Durations] = {}
        self._pending: Callable[[], int] = lambda: 0
        self._oldest: Callable[[], datetime | None] = lambda: None
        self._store = StoreStats()
        self._notifiers: list[QueueStats] = []
        self._registry: CollectorRegistry | None = None

    def __repr__(self) -> str:
        return f"<HostMetrics asked={self.asked} settled={sum(self.settled.values())}>"

    def committed(self, record: StoredQuestion) -> None:
        """Count a request this host stored as new, or settled (a hub event listener)."""
        outcome = record.outcome
        if outcome is None:
            self.stored_new()
            return
        self.settled[(str(outcome), str(record.settled_via or "unknown"))] += 1
        if record.settled_at is not None:
            seconds = max(0.0, (record.settled_at - record.asked_at).total_seconds())
            self._durations.setdefault(str(outcome), _Durations()).observe(seconds)

    def stored_new(self) -> None:
        """Count a request this host stored as new: `committed` does for a pending one; a rule
        that settled one as it was stored tells it here, and `committed` its settlement."""
        self.asked += 1

    @contextlib.contextmanager
    def connected(self, kind: str) -> Iterator[None]:
        """Count an open WebSocket of `kind` for as long as the block runs."""
        uncount = self.connection(kind)
        try:
            yield
        finally:
            uncount()

    def connection(self, kind: str) -> Disposer:
        """Count an open WebSocket of `kind` until the returned function is called (once)."""
        self.connections[kind] += 1
        open_ = [kind]

        def uncount() -> None:
            if open_:
                open_.clear()
                self.connections[kind] -= 1

        return uncount

    def watch_pending(
        self, count: Callable[[], int], oldest: Callable[[], datetime | None]
    ) -> None:
        """Read, at each scrape, how many requests are pending and when the oldest was asked."""
        self._pending, self._oldest = count, oldest

    def watch_store(self, stats: StoreStats) -> None:
        """Report the errors and reconnections of the store these `stats` belong to."""
        self._store = stats

    def watch_notifiers(self, notifiers: Sequence[QueueStats]) -> Disposer:
        """Report these notifiers' queues until the returned function is called."""
        self._notifiers.extend(notifiers)

        def stop() -> None:
            for notifier in notifiers:
                if notifier in self._notifiers:
                    self._notifiers.remove(notifier)

        return stop

    @property
    def registry(self) -> CollectorRegistry:
        """The registry `GET /metrics` renders these metrics from, made at the first scrape."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry

            registry = CollectorRegistry(auto_describe=True)
            registry.register(self)
            self._registry = registry
        return self._registry

    def exposition(self) -> bytes:
        """Every metric, in Prometheus' text format (`CONTENT_TYPE`)."""
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    def collect(self) -> Iterable[Metric]:
        """The metric families (the registry calls this at each scrape)."""
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

        yield _gauge("uq_requests_pending", "Requests pending.", [([], self._pending())])
        oldest = self._oldest()
        waited = 0.0 if oldest is None else (datetime.now(UTC) - oldest).total_seconds()
        yield _gauge(
            "uq_oldest_pending_seconds",
            "Seconds the oldest pending request has waited (0 when none waits).",
            [([], max(0.0, waited))],
        )
        yield _counter("uq_requests_asked", "Requests this host stored as new.", [([], self.asked)])
        settled = CounterMetricFamily(
            "uq_requests_settled",
            "Requests this host settled, by outcome and the surface they were settled through.",
            labels=["outcome", "surface"],
        )
        for (outcome, surface), count in sorted(self.settled.items()):
            settled.add_metric([outcome, surface], count)
        yield settled
        durations = HistogramMetricFamily(
            "uq_request_settle_seconds",
            "Seconds from asked to settled, by outcome.",
            labels=["outcome"],
        )
        for outcome, observed in sorted(self._durations.items()):
            durations.add_metric([outcome], observed.cumulative(), observed.total)
        yield durations
        yield _gauge(
            "uq_connections",
            "Open WebSockets: pages (/ws) and askers (/ws/ask).",
            [([kind], count) for kind, count in sorted(self.connections.items())],
            ["kind"],
        )
        yield from self._notifier_families()
        yield _counter(
            "uq_store_errors",
            "Store operations that failed: the database could not be reached or refused them.",
            [([], self._store.errors)],
        )
        yield _counter(
            "uq_store_reconnects",
            "Times the store got its database back after losing it.",
            [([], self._store.reconnects)],
        )
        yield _gauge(
            "uq_build_info", "The version of user-questions.", [([__version__], 1)], ["version"]
        )

    def _notifier_families(self) -> Iterator[Metric]:
        names = _unique([notifier.target for notifier in self._notifiers])
        pairs = list(zip(names, self._notifiers, strict=True))
        yield _gauge(
            "uq_notifier_queued",
            "Events waiting in a notifier's queue (or being delivered).",
            [([name], notifier.queued) for name, notifier in pairs],
            ["notifier"],
        )
        for field, text in (
            ("delivered", "Events a notifier delivered."),
            ("failed", "Events a notifier gave up on after its tries."),
            (
                "dropped",
                "Events a notifier dropped unsent: its queue was full, or the host stopped.",
            ),
        ):
            yield _counter(
                f"uq_notifier_{field}",
                text,
                [([name], getattr(notifier, field)) for name, notifier in pairs],
                ["notifier"],
            )


Samples = Iterable[tuple[list[str], float]]


def _gauge(name: str, text: str, samples: Samples, labels: Sequence[str] = ()) -> Metric:
    from prometheus_client.core import GaugeMetricFamily

    family = GaugeMetricFamily(name, text, labels=labels)
    for values, value in samples:
        family.add_metric(values, value)
    return family


def _counter(name: str, text: str, samples: Samples, labels: Sequence[str] = ()) -> Metric:
    from prometheus_client.core import CounterMetricFamily

    family = CounterMetricFamily(name, text, labels=labels)
    for values, value in samples:
        family.add_metric(values, value)
    return family


def _unique(names: list[str]) -> list[str]:
    """`names`, the second and later of a repeated name numbered (`... #2`)."""
    seen: Counter[str] = Counter()
    unique = []
    for name in names:
        seen[name] += 1
        unique.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return unique
