"""Codex hooks: its approval prompts (shell, exec, network, patch, MCP) through any provider.

Pure mapping. Codex runs a `PermissionRequest` command hook, with one event as JSON on stdin, before
it shows an approval prompt, and a `PreToolUse` hook before every call its matcher names; it reads
the hook's JSON output on stdout (`uq hook codex` does the running, `cli._hook`). Shapes: the JSON
Schemas Codex ships (`permission-request.command.input` and `.output`, `pre-tool-use.command.input`
and `.output`, in `codex-rs/hooks/schema/generated/` of openai/codex); docs/clients/codex.md lists
every field used and where it comes from.

Every event is asked on the approval card (`user_questions.approvals`): `Bash` carries the
command (`tool_input.command`, with the model's justification as `description`; a network
approval names the command that needs the network, or `network-access <domain>`), `apply_patch`
the patch, an `mcp__<server>__<tool>` tool its arguments. Allow -> `decision.behavior: "allow"`;
Deny, a reason typed, or a dismissal -> `"deny"` with a `message` for the model. Codex reserves
`updatedInput`, `updatedPermissions` and `interrupt` (a hook that sends them fails closed), so
there is no "don't ask again" and a dismissal does not stop the turn.

At `PreToolUse` the same card is editable: "Edit and allow" -> `permissionDecision: "allow"` with
the whole changed call as `updatedInput`; an unchanged Allow prints nothing (Codex refuses an
`allow` without `updatedInput`, and goes on as it would); a denial or a dismissal ->
`permissionDecision: "deny"` with its `permissionDecisionReason`; a note beside an allow ->
`additionalContext`, which the model reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from user_questions._hooks.events import answers
from user_questions._hooks.permission_call import AGENT_NAMES, permission_call
from user_questions.bridges.hook import HookAsk, approval_ask

__all__ = ["AGENT", "DISMISSED", "hook_ask"]

AGENT = AGENT_NAMES["codex"]
"""Who asks, on the approval card."""
DISMISSED = "The user dismissed this approval without deciding; do not run it."


def hook_ask(event: Mapping[str, Any]) -> HookAsk | None:
    """What to ask about a Codex hook event; `None` for an event the hook leaves to Codex."""
    call = permission_call("codex", event) if answers("codex", event) else None
    if call is None:
        return None
    return approval_ask(call, dismissed=call.refusal(DISMISSED))
