"""An agent CLI's permission prompt (a `PermissionRequest` hook event, or Codex's `PreToolUse`) in
plain data: the call it asks about, its approval card, and the hook's output for a decision.

Standard library only, so that `uq hook`'s quick path (`cli._hook_rule`, a call a rule decides)
builds exactly the card and the output the bridges do (`bridges.claude_code`, `bridges.codex`,
which build theirs from this module) without loading pydantic. Claude Code's permission
suggestions ride along: "Allow and don't ask again" gives them back as `updatedPermissions`;
Codex has none (a hook that sends them fails closed). A call a person changed goes back to
Claude Code's `PermissionRequest` and Codex's `PreToolUse` as `updatedInput`; Codex's
`PermissionRequest` reserves that field, so its calls are not editable there. A note beside a
denial is in the reason the model reads; beside an allow it is Codex `PreToolUse`'s
`additionalContext` (the model reads it), elsewhere the output's `systemMessage`, shown to the
person in the agent's terminal in the terminal's language (`UQ_LANG`, `LC_ALL`, `LC_MESSAGES`,
`LANG`; `bridges.claude_code` also gives Claude Code's model the note through its `PostToolUse`
hook). What the model reads stays English.

An output may be empty (`{}`): nothing to say, printed as nothing, and the CLI goes on as it would
without the hook; Codex's `PreToolUse` refuses an `allow` that changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from user_questions._hooks.approval_card import (
    ApprovalDecision,
    allowed_note,
    card_fields,
    denial_message,
)
from user_questions._hooks.events import (
    ASK_TOOL,
    PERMISSION_REQUEST,
    PLAN_TOOL,
    PRE_TOOL_USE,
)
from user_questions._hooks.record import Record
from user_questions._languages import gettext
from user_questions.errors import ErrorCode, UserQuestionError

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any, Final

    from user_questions._hooks.events import Client

__all__ = [
    "AGENT_NAMES",
    "PermissionCall",
    "as_update_dict",
    "describe_permission_updates",
    "permission_call",
    "permission_decision",
    "pre_tool_use_output",
]

AGENT_NAMES: dict[Client, str] = {"claude": "Claude", "codex": "Codex"}
"""Who asks, on each client's approval card."""
_WHERE: dict[str, str] = {
    "session": "for the rest of this session",
    "localSettings": "in this project, for you (.claude/settings.local.json)",
    "projectSettings": "in this project, for everyone (.claude/settings.json)",
    "userSettings": "in every project (~/.claude/settings.json)",
    "cliArg": "for this run",
}


class PermissionCall(Record):
    """The tool call a permission prompt asks about."""

    __slots__ = ("client", "tool", "arguments", "updates", "event")  # noqa: RUF023 (the fields, in order)

    client: Final[Client]
    tool: Final[str]
    arguments: Final[dict[str, Any]]
    updates: Final[list[dict[str, Any]]]
    """Claude Code's permission suggestions (permission updates, as they came)."""
    event: Final[str]
    """The hook event that asks: `PermissionRequest`, or Codex's `PreToolUse`."""

    def __init__(
        self,
        client: Client,
        tool: str,
        arguments: dict[str, Any],
        updates: list[dict[str, Any]] | None = None,
        event: str = PERMISSION_REQUEST,
    ) -> None:
        self.client = client
        self.tool = tool
        self.arguments = arguments
        self.updates = [] if updates is None else updates
        self.event = event

    def card(self) -> dict[str, Any]:
        """The approval card, as a question's JSON object."""
        always = describe_permission_updates(self.updates)
        return card_fields(self.tool, self.arguments, agent=AGENT_NAMES[self.client], always=always)

    @property
    def editable(self) -> bool:
        """Whether the CLI takes a changed call (`updatedInput`): Claude Code does, and Codex at
        `PreToolUse` (its `PermissionRequest` reserves the field)."""
        return self.client == "claude" or self.event == PRE_TOOL_USE

    def allow(self, decision: ApprovalDecision) -> dict[str, Any]:
        """The decision an allow sends back: with the call as the person changed it, or with
        the suggestions when the person chose not to be asked again.

        Raises:
            UserQuestionError: `BAD_ANSWER` for a changed call the CLI cannot take (no decision:
                the CLI asks in its own terminal).
        """
        if decision.edited is not None:
            if not self.editable:
                raise UserQuestionError(
                    f"{AGENT_NAMES[self.client]} cannot take a changed {self.tool} call",
                    ErrorCode.BAD_ANSWER,
                )
            return {"behavior": "allow", "updatedInput": decision.edited}
        if decision.always and self.updates:
            return {"behavior": "allow", "updatedPermissions": self.updates}
        return {"behavior": "allow"}

    def output(self, decision: ApprovalDecision) -> dict[str, Any]:
        """The hook's output for `decision`: an allow (its note, if any, where the event has a
        field for it; a `systemMessage` in the person's language), or a denial with the reason
        and the note for the model (in English)."""
        if self.event == PRE_TOOL_USE:
            return self._pre_tool_use(decision)
        if not decision.allowed:
            return self.refusal(denial_message(decision, self.tool))
        output = permission_decision(self.allow(decision))
        note = allowed_note(decision, self.tool, translate=gettext)
        if note is not None:
            output["systemMessage"] = note
        return output

    def refusal(self, message: str) -> dict[str, Any]:
        """The hook's output denying the call with `message` for the model."""
        if self.event == PRE_TOOL_USE:
            return pre_tool_use_output(
                {"permissionDecision": "deny", "permissionDecisionReason": message}
            )
        return permission_decision({"behavior": "deny", "message": message})

    def _pre_tool_use(self, decision: ApprovalDecision) -> dict[str, Any]:
        """Codex's `PreToolUse` output: a changed call as `allow` with `updatedInput` (the only
        `allow` Codex takes), an unchanged allow as nothing, and a note as `additionalContext`."""
        if not decision.allowed:
            return self.refusal(denial_message(decision, self.tool))
        fields: dict[str, Any] = {}
        if decision.edited is not None:
            fields = {"permissionDecision": "allow", "updatedInput": decision.edited}
        note = allowed_note(decision, self.tool)
        if note is not None:
            fields["additionalContext"] = note
        return pre_tool_use_output(fields) if fields else {}


def permission_call(client: Client, event: Mapping[str, Any]) -> PermissionCall | None:
    """The call `event` asks permission for; `None` when it is not a permission prompt (a
    `PermissionRequest`, or for Codex also a `PreToolUse`).

    Raises:
        UserQuestionError: `BAD_REQUEST` for a Claude Code prompt whose `tool_input` is not an
            object.
    """
    tool = event.get("tool_name")
    name = event.get("hook_event_name")
    if not isinstance(tool, str) or not tool:
        return None
    input = event.get("tool_input")
    if client == "codex" and name in (PERMISSION_REQUEST, PRE_TOOL_USE):
        arguments = input if isinstance(input, dict) else {"input": input}
        return PermissionCall(client, tool, arguments, event=str(name))
    if name != PERMISSION_REQUEST:
        return None
    if tool in (ASK_TOOL, PLAN_TOOL):
        return None
    if not isinstance(input, dict):
        raise UserQuestionError(
            f"invalid {PERMISSION_REQUEST} event: tool_input is not an object",
            ErrorCode.BAD_REQUEST,
        )
    return PermissionCall(client, tool, input, _suggestions(event.get("permission_suggestions")))


def permission_decision(decision: dict[str, Any]) -> dict[str, Any]:
    """A `PermissionRequest` hook's output: `{"hookSpecificOutput": {"hookEventName":
    "PermissionRequest", "decision": decision}}`, the same for Claude Code and Codex."""
    return {"hookSpecificOutput": {"hookEventName": PERMISSION_REQUEST, "decision": decision}}


def pre_tool_use_output(fields: dict[str, Any]) -> dict[str, Any]:
    """A `PreToolUse` hook's output: `{"hookSpecificOutput": {"hookEventName": "PreToolUse",
    **fields}}`."""
    return {"hookSpecificOutput": {"hookEventName": PRE_TOOL_USE, **fields}}


def describe_permission_updates(updates: Sequence[Any]) -> str | None:
    """What allowing with `updates` (Claude's `PermissionUpdate`s, as dicts or as the Python
    SDK's objects) will remember, in words, for the "don't ask again" option; `None` when
    there are none."""
    said = [_describe_update(as_update_dict(update)) for update in updates]
    return " ".join(said) or None


def as_update_dict(update: Any) -> dict[str, Any]:
    """A permission update as its JSON object (the Python SDK's have `to_dict`)."""
    if isinstance(update, Mapping):
        return dict(update)
    to_dict = getattr(update, "to_dict", None)
    return dict(to_dict()) if callable(to_dict) else {}


def _suggestions(value: object) -> list[dict[str, Any]]:
    """The event's `permission_suggestions` that are permission updates (objects with a type);
    they go back to Claude Code as they came."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict) and isinstance(item.get("type"), str)]


def _describe_update(update: Mapping[str, Any]) -> str:
    where = _WHERE.get(str(update.get("destination")), "from now on")
    kind = update.get("type")
    if kind == "addRules" and update.get("behavior") == "allow":
        rules = ", ".join(_rule_text(rule) for rule in update.get("rules") or ())
        return f"Also allow {rules} without asking, {where}."
    if kind == "setMode":
        return f"Switch to the {update.get('mode')} permission mode, {where}."
    if kind == "addDirectories":
        folders = ", ".join(str(folder) for folder in update.get("directories") or ())
        return f"Give access to {folders}, {where}."
    return f"Change the permission rules ({kind}), {where}."


def _rule_text(rule: Any) -> str:
    if not isinstance(rule, Mapping):
        return str(rule)
    tool = str(rule.get("toolName", ""))
    content = rule.get("ruleContent")
    return f"{tool}({content})" if content else tool
