"""AbortController and AbortSignal mirror the web platform, timeouts and `any` included."""

from __future__ import annotations

import gc
import time

import anyio
import pytest

from user_questions import AbortController, AbortError, AbortSignal


def test_a_new_signal_is_not_aborted() -> None:
    signal = AbortController().signal
    assert not signal.aborted
    assert signal.reason is None
    signal.throw_if_aborted()


def test_abort_sets_the_reason_and_tells_listeners_once() -> None:
    controller = AbortController()
    calls: list[object] = []
    controller.signal.add_listener(lambda: calls.append(controller.signal.reason))
    controller.abort("stop")
    controller.abort("again")
    assert controller.signal.aborted
    assert controller.signal.reason == "stop"
    assert calls == ["stop"]


def test_abort_without_a_reason_gives_an_abort_error() -> None:
    controller = AbortController()
    controller.abort()
    assert isinstance(controller.signal.reason, AbortError)
    with pytest.raises(AbortError):
        controller.signal.throw_if_aborted()


def test_throw_if_aborted_raises_an_exception_reason_as_it_is() -> None:
    controller = AbortController()
    reason = RuntimeError("shutdown")
    controller.abort(reason)
    with pytest.raises(RuntimeError) as caught:
        controller.signal.throw_if_aborted()
    assert caught.value is reason


def test_a_removed_listener_is_not_called_and_removal_is_idempotent() -> None:
    controller = AbortController()
    calls: list[str] = []
    remove = controller.signal.add_listener(lambda: calls.append("x"))
    remove()
    remove()
    controller.abort()
    assert calls == []


def test_a_listener_added_after_the_abort_runs_at_once() -> None:
    controller = AbortController()
    controller.abort()
    calls: list[str] = []
    controller.signal.add_listener(lambda: calls.append("late"))
    assert calls == ["late"]


def test_a_raising_listener_does_not_keep_others_from_hearing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    controller = AbortController()
    calls: list[str] = []

    def broken() -> None:
        raise RuntimeError("listener bug")

    controller.signal.add_listener(broken)
    controller.signal.add_listener(lambda: calls.append("second"))
    controller.abort()
    assert calls == ["second"]
    assert "an abort listener raised" in caplog.text


def test_timeout_signal_reads_as_aborted_after_its_deadline_without_a_loop() -> None:
    signal = AbortSignal.timeout(0.01)
    assert not signal.aborted
    time.sleep(0.02)
    assert signal.aborted
    assert isinstance(signal.reason, TimeoutError)


def test_reading_a_timed_out_signal_runs_no_listener_and_throwing_runs_them() -> None:
    signal = AbortSignal.timeout(0.01)
    calls: list[object] = []
    signal.add_listener(lambda: calls.append(signal.reason))
    time.sleep(0.02)
    assert signal.aborted
    reason = signal.reason
    assert isinstance(reason, TimeoutError)
    assert "aborted" in repr(signal)
    assert calls == []  # no timer ran (no loop), and reading is not one
    with pytest.raises(TimeoutError) as caught:
        signal.throw_if_aborted()
    assert caught.value is reason
    assert calls == [reason]


def test_a_listener_added_after_the_deadline_runs_at_once_with_the_earlier_ones() -> None:
    signal = AbortSignal.timeout(0)
    calls: list[str] = []
    signal.add_listener(lambda: calls.append("first"))
    time.sleep(0.001)
    signal.add_listener(lambda: calls.append("late"))
    assert calls == ["first", "late"]


def test_a_combined_signal_keeps_the_timeout_it_read_as_when_a_source_aborts_later() -> None:
    controller = AbortController()
    combined = AbortSignal.any([controller.signal, AbortSignal.timeout(0.01)])
    time.sleep(0.02)
    reason = combined.reason
    assert isinstance(reason, TimeoutError)
    controller.abort("too late")
    assert combined.reason is reason


def test_timeout_rejects_a_negative_or_nan_delay() -> None:
    with pytest.raises(ValueError, match="timeout must be"):
        AbortSignal.timeout(-1)
    with pytest.raises(ValueError, match="timeout must be"):
        AbortSignal.timeout(float("nan"))


@pytest.mark.anyio
async def test_wait_returns_when_the_signal_aborts() -> None:
    controller = AbortController()

    async def abort_soon() -> None:
        await anyio.sleep(0.01)
        controller.abort()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(abort_soon)
            await controller.signal.wait()
    assert controller.signal.aborted


@pytest.mark.anyio
async def test_timeout_signal_created_in_a_loop_tells_its_listeners_on_time() -> None:
    signal = AbortSignal.timeout(0.02)
    fired = anyio.Event()
    signal.add_listener(fired.set)
    with anyio.fail_after(5):
        await fired.wait()
    assert isinstance(signal.reason, TimeoutError)


@pytest.mark.anyio
async def test_wait_wakes_at_the_deadline_of_a_timeout_made_outside_a_loop() -> None:
    signal = await anyio.to_thread.run_sync(lambda: AbortSignal.timeout(0.02))
    with anyio.fail_after(5):
        await signal.wait()
    assert isinstance(signal.reason, TimeoutError)


def test_any_aborts_with_the_reason_of_the_first_source() -> None:
    first, second = AbortController(), AbortController()
    combined = AbortSignal.any([first.signal, second.signal])
    assert not combined.aborted
    second.abort("second reason")
    first.abort("first reason")
    assert combined.aborted
    assert combined.reason == "second reason"


def test_any_of_an_aborted_signal_is_aborted_at_once() -> None:
    done = AbortController()
    done.abort("already")
    assert AbortSignal.any([AbortController().signal, done.signal]).reason == "already"


def test_any_carries_the_earliest_deadline_and_times_out() -> None:
    combined = AbortSignal.any([AbortController().signal, AbortSignal.timeout(0.01)])
    assert combined.deadline is not None
    time.sleep(0.02)
    assert combined.aborted
    assert isinstance(combined.reason, TimeoutError)


def test_any_leaves_no_listener_on_its_sources_once_it_is_gone() -> None:
    source = AbortController()
    for _ in range(100):
        AbortSignal.any([source.signal])
    gc.collect()
    assert len(source.signal._listeners) == 0
