"""How the prompt shares the terminal's rows, and how a long context is paged."""

from __future__ import annotations

import pytest

from user_questions.providers._terminal_pane import CONTEXT_MIN_ROWS, ContextPane, split_rows


@pytest.mark.parametrize(
    ("rows", "context", "listing", "tail", "expected"),
    [
        (30, 10, 8, 2, (10, 8)),  # everything fits
        (30, 60, 8, 2, (20, 8)),  # a long plan takes what the list leaves
        (30, 60, 50, 2, (9, 19)),  # both long: the plan keeps a third of the room
        (30, 5, 50, 2, (5, 23)),  # a short context stays whole beside a long list
        (14, 60, 50, 2, (CONTEXT_MIN_ROWS, 6)),  # at least CONTEXT_MIN_ROWS
        (6, 60, 50, 2, (2, 2)),  # a tiny terminal: at most half to the context
    ],
)
def test_the_rows_are_shared_between_the_context_and_the_list(
    rows: int, context: int, listing: int, tail: int, expected: tuple[int, int]
) -> None:
    assert split_rows(rows, context, listing, tail) == expected
    assert sum(split_rows(rows, context, listing, tail)) <= rows - tail


def test_a_context_that_fits_shows_whole_without_a_status_line() -> None:
    pane = ContextPane(top=3)
    assert pane.window(5, 5) == (range(5), None)
    assert pane.top == 0


def test_a_long_context_pages_forward_and_back_and_stays_inside_its_lines() -> None:
    pane = ContextPane()
    assert pane.window(30, 11) == (range(10), "lines 1-10 of 30 · pgup pgdn scroll")
    pane.scroll(1)
    assert pane.window(30, 11) == (range(10, 20), "lines 11-20 of 30 · pgup pgdn scroll")
    pane.scroll(5)
    assert pane.window(30, 11) == (range(20, 30), "lines 21-30 of 30 · pgup pgdn scroll")
    pane.scroll(-1)
    assert pane.window(30, 11)[0] == range(10, 20)
    pane.scroll(-5)
    assert pane.window(30, 11)[0] == range(10)


def test_a_resize_keeps_the_window_inside_the_lines() -> None:
    pane = ContextPane()
    pane.window(30, 6)
    pane.scroll(5)
    assert pane.window(30, 6)[0] == range(25, 30)
    assert pane.window(30, 21)[0] == range(10, 30)  # taller: the last page grows upward
