"""What every notifier shares: a bounded queue that never waits, order per question, bounded
concurrency, and a flush when the host stops."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from tests.host.conftest import PICK, dismissal
from tests.host.notify.helpers import notifying_hub
from user_questions.host.notify import notifier as notify_module
from user_questions.host.notify.events import HostEvent
from user_questions.host.notify.notifier import Notifier
from user_questions.outcomes import Surface

pytestmark = pytest.mark.anyio


class GatedNotifier(Notifier):
    """Delivers an event only when the test opens its gate; records the order and how many ran
    at once."""

    target = "gated test notifier"

    def __init__(self, *, concurrency: int = 2, capacity: int = 100) -> None:
        super().__init__(concurrency=concurrency, capacity=capacity)
        self.gates: dict[str, anyio.Event] = {}
        self.started: list[str] = []
        self.finished: list[str] = []
        self.running = 0
        self.most_at_once = 0
        self._progress = anyio.Event()

    def gate(self, event_id: str) -> anyio.Event:
        return self.gates.setdefault(event_id, anyio.Event())

    async def deliver(self, event: HostEvent) -> bool:
        self.started.append(event.id)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        self._progress.set()
        try:
            await self.gate(event.id).wait()
        finally:
            self.running -= 1
        self.finished.append(event.id)
        return True

    async def until_started(self, count: int) -> None:
        with anyio.fail_after(5):
            while len(self.started) < count:
                self._progress = anyio.Event()
                await self._progress.wait()


def event(rpc_id: str, kind: str = "pending") -> HostEvent:
    return HostEvent.model_validate(
        {
            "type": f"question/{kind}",
            "id": f"{rpc_id}:{kind}",
            "rpcId": rpc_id,
            "sessionId": "s",
            "questions": [PICK.model_dump(mode="json")],
            "askedAt": "2025-01-01T00:00:00.000Z",
            "at": "2025-01-01T00:00:00.000Z",
        }
    )


async def test_notify_never_waits_and_a_full_queue_drops_and_counts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "user_questions.host.notify")
    notifier = GatedNotifier(concurrency=1, capacity=2)
    async with notifier:
        for rpc_id in ("a", "b", "c", "d"):
            notifier.notify(event(rpc_id))  # synchronous: nothing here can wait
        await notifier.until_started(1)
        assert notifier.dropped == 2
        for gate in ("a:pending", "b:pending"):
            notifier.gate(gate).set()
        with anyio.fail_after(5):
            await notifier.drained()
    assert notifier.finished == ["a:pending", "b:pending"]
    assert [record.getMessage() for record in caplog.records] == [
        "gated test notifier: 2 events are waiting already; dropped question/pending of "
        "question c (1 dropped so far)",
        "gated test notifier: 2 events are waiting already; dropped question/pending of "
        "question d (2 dropped so far)",
    ]


async def test_events_of_one_question_go_in_order_and_others_go_meanwhile() -> None:
    notifier = GatedNotifier(concurrency=2)
    async with notifier:
        notifier.notify(event("a"))
        notifier.notify(event("a", "settled"))
        notifier.notify(event("b"))
        notifier.notify(event("b", "settled"))
        notifier.notify(event("c"))
        await notifier.until_started(2)
        assert notifier.started == ["a:pending", "b:pending"]  # a's settled waits for a's pending
        notifier.gate("b:pending").set()
        await notifier.until_started(3)
        assert notifier.started[2] == "b:settled"
        for gate in ("a:pending", "a:settled", "b:settled", "c:pending"):
            notifier.gate(gate).set()
        with anyio.fail_after(5):
            await notifier.drained()
    assert notifier.most_at_once == 2
    assert notifier.finished.index("a:pending") < notifier.finished.index("a:settled")
    assert notifier.finished.index("b:pending") < notifier.finished.index("b:settled")
    assert (notifier.delivered, notifier.failed, notifier.dropped) == (5, 0, 0)


async def test_queued_events_still_go_out_when_the_host_stops(tmp_path: Path) -> None:
    notifier = GatedNotifier()
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [PICK])
        await hub.respond(dismissal("r1"), via=Surface.API)
        await notifier.until_started(1)
        notifier.gate("r1:pending").set()
        notifier.gate("r1:settled").set()
        # The host stops now, with the settled event still queued: it is flushed.
    assert notifier.finished == ["r1:pending", "r1:settled"]


async def test_events_that_cannot_go_out_before_the_stop_are_dropped_with_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(notify_module, "FLUSH_SECONDS", 0.2)
    caplog.set_level(logging.WARNING, "user_questions.host.notify")
    notifier = GatedNotifier()
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [PICK])
        await hub.respond(dismissal("r1"), via=Surface.API)
        await notifier.until_started(1)
    assert notifier.dropped == 2
    assert caplog.records[-1].getMessage() == (
        "gated test notifier: the host stopped with 2 events not delivered; dropped them"
    )


async def test_a_notifier_that_raises_loses_that_event_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(GatedNotifier):
        async def deliver(self, event: HostEvent) -> bool:
            if event.type == "question/pending":
                raise RuntimeError("a bug in a notifier")
            return await super().deliver(event)

    notifier = Broken()
    notifier.gate("r1:settled").set()
    async with notifying_hub(tmp_path, notifier) as hub:
        await hub.submit("r1", "s", [PICK])
        await hub.respond(dismissal("r1"), via=Surface.API)
        with anyio.fail_after(5):
            await notifier.drained()
    assert (notifier.delivered, notifier.failed) == (1, 1)
    assert "gated test notifier: delivering r1:pending failed" in caplog.text


def test_a_notifier_needs_room_and_workers() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        GatedNotifier(capacity=0)
