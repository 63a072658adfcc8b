"""`Listeners`: told in order, each removed by its own disposer, one that raises logged while the
others are still told."""

from __future__ import annotations

import logging

import pytest

from user_questions._lifecycle.listeners import Listeners

logger = logging.getLogger("tests.listeners")


def test_listeners_are_told_in_the_order_they_were_added() -> None:
    heard: list[str] = []
    listeners: Listeners[[str]] = Listeners(logger, "a test listener raised")
    listeners.add(lambda word: heard.append(f"first {word}"))
    listeners.add(lambda word: heard.append(f"second {word}"))
    listeners.tell("hello")
    assert heard == ["first hello", "second hello"]


def test_a_disposer_removes_its_own_registration_only_and_twice_is_harmless() -> None:
    heard: list[int] = []
    listeners: Listeners[[]] = Listeners(logger, "a test listener raised")

    def listener() -> None:
        heard.append(1)

    first, second = listeners.add(listener), listeners.add(listener)  # the same function twice
    first()
    first()
    listeners.tell()
    assert (heard, len(listeners)) == ([1], 1)
    second()
    listeners.tell()
    assert (heard, bool(listeners)) == ([1], False)


def test_one_that_raises_is_logged_and_the_others_are_still_told(
    caplog: pytest.LogCaptureFixture,
) -> None:
    heard: list[str] = []
    listeners: Listeners[[str]] = Listeners(logger, lambda rpc_id: f"one raised on {rpc_id}")

    def broken(rpc_id: str) -> None:
        raise RuntimeError("boom")

    listeners.add(broken)
    listeners.add(heard.append)
    with caplog.at_level(logging.ERROR, logger="tests.listeners"):
        listeners.tell("r1")
    assert heard == ["r1"]
    assert [record.getMessage() for record in caplog.records] == ["one raised on r1"]
    assert caplog.records[0].exc_info is not None


def test_one_added_or_removed_while_they_are_told_counts_from_the_next_call() -> None:
    heard: list[str] = []
    listeners: Listeners[[]] = Listeners(logger, "a test listener raised")

    def adds_another() -> None:
        heard.append("adder")
        listeners.add(lambda: heard.append("added"))

    listeners.add(adds_another)
    listeners.tell()
    assert heard == ["adder"]
    listeners.clear()
    listeners.tell()
    assert heard == ["adder"]
