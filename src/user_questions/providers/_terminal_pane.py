"""The question's context (header, question, detail) as a pane above the list: how the terminal's
rows are shared between the two, and which lines of a long context show.

Private to `providers.terminal`; no UI library. The prompt (`_terminal_prompt`) asks `split_rows` on
every redraw, with the rows of its terminal at that moment, so a resize shares the new height again.
Everything fits when it can. Otherwise the list, which scrolls to keep its highlight in sight, takes
what it needs, and the context keeps at least a third of the room (at least `CONTEXT_MIN_ROWS`, at
most half); a context that does not fit in its rows is shown a window at a time, with a status line,
and PageUp/PageDown scroll it.
"""

from __future__ import annotations

from dataclasses import dataclass

from user_questions._languages import gettext as _

__all__ = ["CONTEXT_MIN_ROWS", "ContextPane", "split_rows"]

CONTEXT_MIN_ROWS = 6
"""The fewest rows a long context keeps beside a list that wants the whole terminal."""


def split_rows(rows: int, context: int, listing: int, tail: int) -> tuple[int, int]:
    """The rows of the context pane and of the list, out of a terminal's `rows`.

    `context` and `listing` are the lines each would take in full; `tail` is what stays under
    the list whatever happens (the text field, the key help).
    """
    room = max(rows - tail, 0)
    share = min(max(CONTEXT_MIN_ROWS, room // 3), room // 2)
    if context + listing <= room or context <= share:
        shown = min(context, room)
    else:
        shown = max(share, room - listing)
    return shown, max(min(listing, room - shown), 0)


@dataclass(slots=True)
class ContextPane:
    """Which lines of the context show when there are more than the pane's rows."""

    top: int = 0
    """The first line shown."""
    page: int = 1
    """How many lines the last window showed: what PageUp and PageDown move by."""

    def window(self, count: int, rows: int) -> tuple[range, str | None]:
        """The lines to show out of `count` in `rows` rows, and the status line under them
        (`None` when everything shows). `top` is kept inside the lines."""
        if count <= rows:
            self.top, self.page = 0, max(count, 1)
            return range(count), None
        self.page = max(rows - 1, 1)
        self.top = max(min(self.top, count - self.page), 0)
        shown = range(self.top, self.top + self.page)
        status = _("lines {first}-{last} of {count} · pgup pgdn scroll").format(
            first=shown.start + 1, last=shown.stop, count=count
        )
        return shown, status if rows > 1 else None

    def scroll(self, pages: int) -> None:
        """Move the window by `pages` pages (negative: up); the next `window` keeps it inside."""
        self.top = max(self.top + pages * self.page, 0)
