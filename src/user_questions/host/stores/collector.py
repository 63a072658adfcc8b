"""`collector_paused()`: Python's cyclic garbage collector paused while a host reads many records.

Standard library only. A host reads every pending request when it starts (and again when a shared
store reconnects): each is a score of new objects (its questions' models, their lists and strings)
that the collector scans again and again while the list grows, although none of them can be garbage.
At 100,000 pending requests that was more than half of a host's start (`benchmarks/`). Reference
counting still frees whatever is dropped meanwhile, and the collector runs again afterwards, unless
it was off to begin with.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["collector_paused"]


class _Collector:
    """Pauses the collector while any thread reads records (a store's worker thread, a thread
    of anyio's pool and the event loop may all be), and resumes it when the last is done."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._readers = 0
        self._resume = False

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        with self._lock:
            if self._readers == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._readers += 1
        try:
            yield
        finally:
            with self._lock:
                self._readers -= 1
                if self._readers == 0 and self._resume:
                    gc.enable()


collector_paused = _Collector().paused
"""A context manager: the collector is paused inside it (see the module docstring)."""
