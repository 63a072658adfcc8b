"""A clock the test moves by hand (the hub's `Clock`), and a wait for what the hub tells its
routed listeners: the timers' tests advance time instead of sleeping through it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import anyio
import pytest

from user_questions.host.hub import Hub

WAIT = 10.0
"""How long a test waits for what an advance of the clock must cause, at most (real seconds)."""


class ManualClock:
    """The time stands still until `advance` moves it. It starts an hour ago, so that what a
    store stamps with the real time (a settlement) comes after what the hub timed on it."""

    def __init__(self) -> None:
        self._now = datetime.now(UTC) - timedelta(hours=1)
        self._moved = anyio.Event()

    def now(self) -> datetime:
        return self._now

    async def sleep_until(self, moment: datetime | None, woken: anyio.Event) -> None:
        while not woken.is_set() and (moment is None or self._now < moment):
            await _first_of(woken, self._moved)

    async def advance(self, seconds: float) -> None:
        """Move the time on and let every task it wakes run until all wait again."""
        self._now += timedelta(seconds=seconds)
        moved, self._moved = self._moved, anyio.Event()
        moved.set()
        await anyio.wait_all_tasks_blocked()


async def _first_of(*events: anyio.Event) -> None:
    async with anyio.create_task_group() as waiting:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            waiting.cancel_scope.cancel()

        for event in events:
            waiting.start_soon(wait, event)


class Told:
    """What a hub's listeners were told, in order, with a wait for more."""

    def __init__(self) -> None:
        self.told: list[tuple[str, tuple[str, ...]]] = []
        self._more = anyio.Event()

    def tell(self, rpc_id: str, whom: tuple[str, ...] = ()) -> None:
        self.told.append((rpc_id, whom))
        self._more.set()
        self._more = anyio.Event()

    async def at_least(self, count: int) -> None:
        """Return once `count` were told; fail after `WAIT` seconds."""
        with anyio.move_on_after(WAIT):
            while len(self.told) < count:
                await self._more.wait()
            return
        pytest.fail(f"told {len(self.told)} times, not {count}, in {WAIT} s")


class Heard(Told):
    """What hubs tell their routed listeners: (rpcId, whom)."""

    def __init__(self, *hubs: Hub) -> None:
        super().__init__()
        for hub in hubs:
            hub.on_routed(lambda record, whom: self.tell(record.rpc_id, whom))


class Ended(Told):
    """The requests hubs report they settled: (rpcId, ())."""

    def __init__(self, *hubs: Hub) -> None:
        super().__init__()
        for hub in hubs:
            hub.on_event(lambda record: None if record.pending else self.tell(record.rpc_id))
