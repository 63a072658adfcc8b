"""Web Push keeps each person's subscriptions between pushes: a change this host makes is seen at
once, one another host makes within `FRESH_SECONDS`, and nobody subscribed means nothing queued."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from user_questions.host.notify.push_subscribers import FRESH_SECONDS, PushSubscribers
from user_questions.host.stores import PushSubscription
from user_questions.host.stores.sqlite import SQLiteStore

pytestmark = pytest.mark.anyio


def subscription(number: int, person: str) -> PushSubscription:
    return PushSubscription(
        id=f"s{number}",
        person=person,
        endpoint=f"https://push.example.com/{number}",
        p256dh="key",
        auth="auth",
        secret_hash="hash",
        device="test",
        created_at=datetime.now(UTC),
    )


async def test_changes_here_are_seen_at_once_and_another_hosts_once_stale(
    tmp_path: Path,
) -> None:
    now = [0.0]
    async with SQLiteStore(tmp_path / "host.db") as here:
        subscribers = PushSubscribers(here, clock=lambda: now[0])
        assert await subscribers.everyone() == {}
        assert subscribers.nobody()
        await here.add_push_subscription(subscription(1, "ann"))
        await subscribers.changed("ann")  # this host's change
        assert [each.id for each in (await subscribers.everyone())["ann"]] == ["s1"]
        assert not subscribers.nobody()
        await here.add_push_subscription(subscription(2, "bob"))  # as another host would: untold
        assert "bob" not in await subscribers.everyone()  # kept, not read again
        now[0] += FRESH_SECONDS + 1
        assert [each.id for each in (await subscribers.everyone())["bob"]] == ["s2"]
        await here.remove_push_subscription("s1", "ann")
        await subscribers.changed("ann")
        assert set(await subscribers.everyone()) == {"bob"}
