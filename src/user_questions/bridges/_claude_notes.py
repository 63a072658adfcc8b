"""The notes a person gave beside calls allowed through the Claude Agent SDK's `can_use_tool`,
given to the model once each call has run.

`PermissionResultAllow` has no field the model reads, so `bridges.claude.can_use_tool(...,
notes=notes)` keeps an allowed call's note here, and the SDK's `PostToolUse` hook callback
(`notes.hooks()`, passed as `ClaudeAgentOptions(hooks=...)`) gives it to the model as
`additionalContext` for that very call (the same tool and input that ran), once. In memory: one
`AllowedNotes` for one client's options.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from user_questions._hooks.allowed_notes import NotedCall, call_key, post_tool_use_context

__all__ = ["AllowedNotes"]


class AllowedNotes:
    """Notes kept for calls allowed with one, until their `PostToolUse`."""

    def __init__(self) -> None:
        self._kept: dict[str, str] = {}

    def keep(self, tool_name: str, input: dict[str, Any], note: str) -> None:
        """Keep `note` for the call of `tool_name` with `input` (the input that runs)."""
        self._kept[call_key(NotedCall(None, tool_name, input))] = note

    async def post_tool_use(
        self, input_data: Mapping[str, Any], tool_use_id: str | None, context: Any
    ) -> dict[str, Any]:
        """The SDK's `PostToolUse` hook callback: the note kept for the call that ran, as
        `additionalContext`; `{}` (nothing to add) for a call with none."""
        tool, input = input_data.get("tool_name"), input_data.get("tool_input")
        if not isinstance(tool, str) or not isinstance(input, dict):
            return {}
        note = self._kept.pop(call_key(NotedCall(None, tool, input)), None)
        return {} if note is None else post_tool_use_context(note)

    def hooks(self) -> dict[str, list[Any]]:
        """`ClaudeAgentOptions(hooks=...)`: this `PostToolUse` callback for every tool (needs
        `claude_agent_sdk`)."""
        sdk = importlib.import_module("claude_agent_sdk")
        return {"PostToolUse": [sdk.HookMatcher(matcher=None, hooks=[self.post_tool_use])]}
