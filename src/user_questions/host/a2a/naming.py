"""What the A2A room names, in one place and without the SDK: the paths its routes are reached at
and the prefix of the sessions its tasks are filed under."""

from __future__ import annotations

__all__ = ["A2A_PATH", "CARD_PATH", "CONTEXT_PREFIX"]

A2A_PATH = "/a2a"
"""The JSON-RPC endpoint, relative to the host's base URL."""
CARD_PATH = "/.well-known/agent-card.json"
"""Where A2A clients look for the public card."""
CONTEXT_PREFIX = "a2a:"
"""The prefix of the session of a request asked over A2A: the inbox shows `a2a:<contextId>`."""
