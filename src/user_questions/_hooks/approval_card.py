"""The approval card's text and its reading, in plain data: what `approvals` builds its models
from, and what `uq hook`'s quick path (`cli._hook_rule`) sends without loading pydantic.

Standard library only. The card shows what will run as the person needs to judge it: a shell
command in a code block (saying so when it asks to run outside the sandbox), a file edit as a
unified diff, a patch (Codex's `apply_patch`) as the patch, a file write as its content, a URL as
text (never a live link), an MCP tool's arguments as JSON. `approvals` is the public face of all
of this.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping, Sequence

from user_questions._hooks.record import Record
from user_questions._languages import N_

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any, Final, TypedDict, Unpack

    class CardOptions(TypedDict, total=False):
        """How a card is asked, besides its call (`approvals.approval_question` says what each
        is); for mypy only, as `typing` is not imported at run time."""

        id: str
        agent: str | None
        always: str | None
        reason: str | None


__all__ = [
    "ALLOW",
    "ALLOW_ALWAYS",
    "APPROVAL_ID",
    "DENY",
    "MAX_SHOWN_CHARACTERS",
    "SHELL_TOOLS",
    "ApprovalDecision",
    "allowed_note",
    "card_fields",
    "decision_of",
    "host_card_fields",
    "denial_message",
    "fenced",
]

APPROVAL_ID = "approval"
"""The id of an approval card's one question, unless the caller names it."""
ALLOW = "Allow"
ALLOW_ALWAYS = "Allow and don't ask again"
DENY = "Deny"
MAX_SHOWN_CHARACTERS = 20_000
"""How much of a call's content a card shows; the rest is cut, saying how much was left out."""
_SUMMARY_CHARACTERS = 120
"""How much of the command, path or URL the question's one line repeats."""
SHELL_TOOLS = frozenset({"bash", "shell", "exec", "local_shell", "exec_command", "container.exec"})
"""The tools whose `command` is a shell command (compared without case): shown as one on the
card, matched as one by the host's rules."""
_AGENTS = {"claude-code": "Claude", "claude": "Claude", "codex": "Codex"}
"""How a host names the agents it knows, from an approval's `agent` (`uq hook`'s clients)."""
_REMEMBERED = "Allow, and the agent remembers this choice."
_PATCH_TOOLS = frozenset({"apply_patch"})
_PATCHED_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (?P<path>.+)$", re.MULTILINE)
_MCP_TOOL = re.compile(r"^mcp__(?P<server>.+?)__(?P<tool>.+)$")


class ApprovalDecision(Record):
    """What a person decided about a tool call."""

    __slots__ = ("allowed", "always", "feedback", "note", "edited")  # noqa: RUF023 (the fields, in order)

    allowed: Final[bool]
    always: Final[bool]
    """Allowed, and the person asked not to be asked again for calls like it."""
    feedback: Final[str | None]
    """What the person typed instead of choosing: the reason for a denial, for the agent."""
    note: Final[str | None]
    """The remark the person added beside the decision (an answer's `note`), for the agent."""
    edited: Final[dict[str, Any] | None]
    """Allowed with changes: the call's whole new input, which the agent runs instead."""

    def __init__(
        self,
        allowed: bool,
        always: bool = False,
        feedback: str | None = None,
        note: str | None = None,
        edited: dict[str, Any] | None = None,
    ) -> None:
        self.allowed = allowed
        self.always = always
        self.feedback = feedback
        self.note = note
        self.edited = edited


def card_fields(
    tool_name: str, arguments: Mapping[str, Any], **asked: Unpack[CardOptions]
) -> dict[str, Any]:
    """The fields of the card asking a person to approve one call of `tool_name` with
    `arguments`, as a question's JSON object."""
    agent, always, reason = asked.get("agent"), asked.get("always"), asked.get("reason")
    summary = _summary(tool_name, arguments)
    question = f"Allow {agent or 'the agent'} to run {_display_name(tool_name)}"
    question += f": {summary}?" if summary else "?"
    options = [{"label": ALLOW, "description": "Run this call once."}]
    if always is not None:
        options.append({"label": ALLOW_ALWAYS, "description": always})
    deny = "Do not run it. Type a reason instead to tell the agent why."
    options.append({"label": DENY, "description": deny})
    detail = _detail(tool_name, arguments)
    if reason:
        detail = f"{reason}\n\n{detail}"
    return {
        "id": asked.get("id", APPROVAL_ID),
        "header": _display_name(tool_name)[:32],
        "question": question,
        "detail": detail,
        "options": options,
    }


def host_card_fields(
    tool_name: str,
    arguments: Mapping[str, Any],
    asked: Mapping[str, Any],
    *,
    agent: str | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    """The card a host shows for one call of `tool_name` with `arguments`, whatever card the
    asker sent (`asked`, its question as JSON): written from the call alone (`card_fields`),
    so that what a person reads is what a rule matches. `Allow and don't ask again` is kept
    when the asker offered it, with its words (what the agent's CLI will remember); the
    asker's own question and detail, where they differ from the host's, appear only at the end
    of the detail, as what the agent says. `note` (the host's, on its rules) heads the detail.
    `agent` is the approval's (`claude-code`, `codex`, ...)."""
    always = None
    for option in asked.get("options") or ():
        if isinstance(option, Mapping) and option.get("label") == ALLOW_ALWAYS:
            description = option.get("description")
            always = description if isinstance(description, str) and description else _REMEMBERED
    named = None if agent is None else _AGENTS.get(agent, agent)
    card_id = asked.get("id")
    fields = card_fields(
        tool_name,
        arguments,
        id=card_id if isinstance(card_id, str) else APPROVAL_ID,
        agent=named,
        always=always,
    )
    detail: str = fields["detail"]
    said = []
    question = asked.get("question")
    if isinstance(question, str) and question != fields["question"]:
        said.append(question)
    their_detail = asked.get("detail")
    if isinstance(their_detail, str) and their_detail != detail:
        extra = their_detail.removesuffix(detail).rstrip()
        if extra:
            said.append(extra)
    if note:
        detail = f"No rule may allow this call: `{_inline(note)}`.\n\n{detail}"
    if said:
        detail += "\n\nWhat the agent says (its own words, not the host's):\n\n"
        detail += fenced(_cut("\n\n".join(said)), "text")
    fields["detail"] = detail
    return fields


def decision_of(
    selected: Sequence[str] | None,
    custom: str | None,
    note: str | None = None,
    edited: Mapping[str, Any] | None = None,
) -> ApprovalDecision:
    """The decision an answer to the card gives (its chosen labels, or its typed text, and the
    note beside them): only a chosen `Allow` (or `Allow and don't ask again`) allows, `Allow`
    with the changed call when the person edited it; typed text denies with that text as the
    reason; a skip denies. An edit goes only with `Allow` (the host and `_hooks.settlement`
    refuse it elsewhere); it is never carried into another decision."""
    if custom is not None:
        return ApprovalDecision(allowed=False, feedback=custom, note=note)
    if list(selected or ()) == [ALLOW]:
        changed = None if edited is None else dict(edited)
        return ApprovalDecision(allowed=True, note=note, edited=changed)
    if list(selected or ()) == [ALLOW_ALWAYS]:
        return ApprovalDecision(allowed=True, always=True, note=note)
    return ApprovalDecision(allowed=False, note=note)


def denial_message(decision: ApprovalDecision, tool_name: str) -> str:
    """What the agent reads when a person denied its call of `tool_name`: their reason and
    their note, each as they wrote it."""
    said = [text for text in (decision.feedback, decision.note) if text]
    if said:
        return f"The user denied this {tool_name} call and said: " + "\n\n".join(said)
    return f"The user denied this {tool_name} call."


def allowed_note(
    decision: ApprovalDecision, tool_name: str, translate: Callable[[str], str] = str
) -> str | None:
    """What the agent (or, where the agent has no field for it, the person's own screen) reads
    beside an allowed call of `tool_name`: the person's note, and that they changed the call;
    `None` when there is neither. English, as the agent reads it, unless `translate` is given
    (`gettext`, for the person's screen); the note itself is as the person wrote it."""
    said = []
    if decision.edited is not None:
        changed = translate(N_("The user changed this {tool} call before allowing it."))
        said.append(changed.format(tool=tool_name))
    if decision.note:
        noted = translate(N_("The user allowed this {tool} call and noted: {note}"))
        said.append(noted.format(tool=tool_name, note=decision.note))
    return " ".join(said) or None


def fenced(text: str, language: str = "") -> str:
    """`text` as a markdown code block whose fence no backtick run inside it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


# -- what each kind of call looks like ------------------------------------------------------------


def _display_name(tool_name: str) -> str:
    match = _MCP_TOOL.match(tool_name)
    if match is not None:
        return f"{match['tool']} ({match['server']})"
    return tool_name


def _summary(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """The one thing the call acts on, for the question's line: a command, a path, a URL."""
    patch = _patch_of(tool_name, arguments)
    if patch is not None:
        return _one_line(", ".join(_PATCHED_FILE.findall(patch)))
    for key in ("command", "cmd", "file_path", "notebook_path", "path", "url", "query"):
        value = arguments.get(key)
        if isinstance(value, str | list) and value:
            text = _command_text(value) if key in ("command", "cmd") else str(value)
            return _one_line(text)
    return ""


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    if len(line) > _SUMMARY_CHARACTERS:
        line = line[: _SUMMARY_CHARACTERS - 1] + "…"
    return line


def _patch_of(tool_name: str, arguments: Mapping[str, Any]) -> str | None:
    """The patch a patch tool applies (Codex sends it as `command`, or `patch`/`input`)."""
    if tool_name.lower() not in _PATCH_TOOLS:
        return None
    for key in ("command", "patch", "input"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _detail(tool_name: str, arguments: Mapping[str, Any]) -> str:
    name = tool_name.lower()
    patch = _patch_of(tool_name, arguments)
    if patch is not None:
        return f"Apply this patch:\n\n{fenced(_cut(patch), 'diff')}"
    command = arguments.get("command", arguments.get("cmd"))
    if name in SHELL_TOOLS and isinstance(command, str | list):
        return _shell_detail(command, arguments)
    if {"file_path", "old_string", "new_string"} <= arguments.keys():
        return _edit_detail(str(arguments["file_path"]), [arguments])
    if "file_path" in arguments and isinstance(arguments.get("edits"), list):
        return _edit_detail(str(arguments["file_path"]), arguments["edits"])
    if "file_path" in arguments and isinstance(arguments.get("content"), str):
        path = str(arguments["file_path"])
        return f"Write the file `{_inline(path)}`:\n\n{fenced(_cut(arguments['content']))}"
    if isinstance(arguments.get("url"), str):
        rest = {key: value for key, value in arguments.items() if key != "url"}
        shown = f"Fetch {fenced(_cut(arguments['url']))}"
        return f"{shown}\n\n{_json_block(rest)}" if rest else shown
    match = _MCP_TOOL.match(tool_name)
    if match is not None:
        intro = f"The MCP tool `{_inline(match['tool'])}` of server `{_inline(match['server'])}`"
        return f"{intro}, with:\n\n{_json_block(arguments)}"
    return _json_block(arguments)


def _shell_detail(command: str | list[Any], arguments: Mapping[str, Any]) -> str:
    parts = [fenced(_cut(_command_text(command)), "sh")]
    description = arguments.get("description") or arguments.get("justification")
    if isinstance(description, str) and description:
        parts.insert(0, description)
    folder = arguments.get("workdir") or arguments.get("cwd")
    if isinstance(folder, str) and folder:
        parts.append(f"In `{_inline(folder)}`.")
    if arguments.get("dangerouslyDisableSandbox") is True:
        parts.append("**It asks to run outside the sandbox.**")
    return "\n\n".join(parts)


def _edit_detail(path: str, edits: Sequence[Any]) -> str:
    import difflib  # only for edits: it costs `uq hook` milliseconds on every other call

    hunks: list[str] = []
    for edit in edits:
        if not isinstance(edit, Mapping):
            continue
        old, new = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
        hunks.extend(
            difflib.unified_diff(
                old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm="", n=3
            )
        )
        if edit.get("replace_all"):
            hunks.append("# every occurrence is replaced")
    return f"Edit `{_inline(path)}`:\n\n{fenced(_cut(chr(10).join(hunks)), 'diff')}"


def _command_text(command: str | list[Any]) -> str:
    return command if isinstance(command, str) else shlex.join(str(part) for part in command)


def _json_block(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    return fenced(_cut(shown), "json")


def _inline(text: str) -> str:
    """`text` safe inside a one-backtick code span on one line."""
    return " ".join(text.replace("`", "'").split())


def _cut(text: str) -> str:
    if len(text) <= MAX_SHOWN_CHARACTERS:
        return text
    left_out = len(text) - MAX_SHOWN_CHARACTERS
    return f"{text[:MAX_SHOWN_CHARACTERS]}\n… ({left_out} more characters not shown)"
