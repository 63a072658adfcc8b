"""What the hub tells the code beside it: the listeners of its events and of its routing."""

from __future__ import annotations

from collections.abc import Callable

from user_questions.host.stores import StoredQuestion

__all__ = ["EventListener", "RoutedListener", "TallyListener"]

RoutedListener = Callable[[StoredQuestion, tuple[str, ...]], None]
"""Told, on the event loop, that this host has just routed a pending request to people again:
the target an escalation step added, or its whole audience for a reminder (empty: everyone).
Of the hosts sharing a store only the one whose step or reminder won tells."""
EventListener = Callable[[StoredQuestion], None]
"""Told, on the event loop, of a request this host has just committed as new (pending) or as
settled; it must not block (a notifier only enqueues)."""
TallyListener = Callable[[StoredQuestion, tuple[str, ...]], None]
"""Told, on the event loop, that who approved a pending request that needs several approvals
changed (an approval counted on this host, or on another sharing the store): the request and
who approved its call so far, oldest first. Every host sharing the store tells."""
