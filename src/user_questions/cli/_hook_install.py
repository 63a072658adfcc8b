"""`uq hook install` and `uq hook uninstall`: uq's hooks in Claude Code's or Codex's own settings.

Standard library only. Each CLI reads its hooks from a JSON file it documents:

- Claude Code: `~/.claude/settings.json` (user; `$CLAUDE_CONFIG_DIR` moves it),
  `<project>/.claude/settings.json` (project, shared) and `<project>/.claude/settings.local.json`
  (local, yours), as `{"hooks": {"<Event>": [{"matcher", "hooks": [{"type": "command",
  "command", "timeout", "statusMessage"}]}]}}`. uq adds `PreToolUse` for `AskUserQuestion` and
  `ExitPlanMode`, and `PermissionRequest` for every tool.
- Codex: `~/.codex/hooks.json` (user; `$CODEX_HOME` moves it) and `<project>/.codex/hooks.json`
  (project), in the same shape; uq adds `PermissionRequest`. Codex runs a new hook only once
  it is trusted in its `/hooks` view.

The file is merged, not replaced: uq's own handlers (a command running `uq hook <client>`) are
replaced, everything else is kept as it was, in its order. Installing twice changes nothing;
before a change the file is copied to `<file>.bak`. The hook's timeout is `--timeout` seconds,
and the hook is told to withdraw its question `WITHDRAW_MARGIN` seconds before it, so the CLI
never has to kill it. Exit statuses: 0 done (or nothing to do), 1 a settings file that cannot be
read or merged (nothing is written), 2 bad input.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from user_questions._hook_events import ASK_TOOL, PERMISSION_REQUEST, PLAN_TOOL, PRE_TOOL_USE
from user_questions._json import load_json

__all__ = ["DEFAULT_TIMEOUT", "MIN_TIMEOUT", "WITHDRAW_MARGIN", "install", "uninstall"]

DEFAULT_TIMEOUT = 1800
"""Seconds the CLI lets the hook wait for a person: half an hour."""
WITHDRAW_MARGIN = 10
"""Seconds before the CLI's hook timeout at which the hook withdraws its question and leaves."""
MIN_TIMEOUT = 30
STATUS = "Asking in the user-questions inbox"
"""What the CLI shows while the hook waits."""

Scope = Literal["user", "project", "local"]
ClientName = Literal["claude", "codex"]
Settings = dict[str, Any]


class _Refused(Exception):
    """The settings cannot be changed; the message says why and what to do."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class _Target:
    """Where and what one CLI reads: its settings files and the groups uq adds to them."""

    name: str
    files: dict[Scope, Callable[[Path], Path]]
    groups: Callable[[dict[str, Any]], dict[str, dict[str, Any]]]


def _claude_home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")


def _codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


_TARGETS: dict[ClientName, _Target] = {
    "claude": _Target(
        "Claude Code",
        {
            "user": lambda project: _claude_home() / "settings.json",
            "project": lambda project: project / ".claude" / "settings.json",
            "local": lambda project: project / ".claude" / "settings.local.json",
        },
        lambda handler: {
            PRE_TOOL_USE: {"matcher": f"{ASK_TOOL}|{PLAN_TOOL}", "hooks": [handler]},
            PERMISSION_REQUEST: {"matcher": "*", "hooks": [handler]},
        },
    ),
    "codex": _Target(
        "Codex",
        {
            "user": lambda project: _codex_home() / "hooks.json",
            "project": lambda project: project / ".codex" / "hooks.json",
        },
        lambda handler: {PERMISSION_REQUEST: {"hooks": [handler]}},
    ),
}


def install(
    client: ClientName,
    /,
    *,
    scope: Scope = "user",
    timeout: int = DEFAULT_TIMEOUT,
    url: str | None = None,
    project: Path | None = None,
) -> None:
    """Add uq's hooks to Claude Code's or Codex's settings, keeping everything else.

    Parameters
    ----------
    client
        claude or codex.
    scope
        user (every project), project (this project, shared with everyone who clones it) or
        local (this project, for you; Claude Code only).
    timeout
        Seconds the CLI lets the hook wait for an answer; the hook withdraws its question 10 s
        before, and the CLI then asks in its own terminal.
    url
        The host the hook asks through, written into the hook's command. Default: none, the hook
        reads $UQ_URL from the CLI's environment. A URL with a token is refused for the shared
        project scope.
    project
        The project folder, for the project and local scopes. Default: the current folder.
    """
    _main("install", lambda: _install(client, scope, timeout, url, project))


def uninstall(client: ClientName, /, *, scope: Scope = "user", project: Path | None = None) -> None:
    """Remove uq's hooks from Claude Code's or Codex's settings, keeping everything else.

    Parameters
    ----------
    client
        claude or codex.
    scope
        user, project or local, as given to `uq hook install`.
    project
        The project folder, for the project and local scopes. Default: the current folder.
    """
    _main("uninstall", lambda: _uninstall(client, scope, project))


def _main(command: str, work: Callable[[], str]) -> None:
    try:
        print(f"uq hook {command}: {work()}")
    except _Refused as refused:
        print(f"uq hook {command}: {refused}", file=sys.stderr)
        raise SystemExit(refused.status) from None


def _install(
    client: ClientName, scope: Scope, timeout: int, url: str | None, project: Path | None
) -> str:
    target = _TARGETS[client]
    path = _settings_path(target, scope, project)
    if timeout < MIN_TIMEOUT:
        raise _Refused(f"--timeout must be at least {MIN_TIMEOUT} seconds, got {timeout}", 2)
    if url is not None and "token=" in url and scope == "project":
        raise _Refused(
            f"{path} is shared with everyone who clones the project, so it must not hold the "
            "host's token: use --scope local or user, or let the hook read $UQ_URL",
            2,
        )
    handler = {
        "type": "command",
        "command": _command(client, scope, timeout - WITHDRAW_MARGIN, url),
        "timeout": timeout,
        "statusMessage": STATUS,
    }
    settings = _read(path, target)
    hooks = _hooks_of(settings, path)
    for event, group in target.groups(handler).items():
        hooks[event] = [*_without_ours(_groups_of(hooks, event, path), client), group]
    settings["hooks"] = hooks
    if not _write(path, settings, secret=url is not None and "token=" in url):
        return f"uq's hooks are already in {path}; nothing changed"
    trust = " Open /hooks in Codex and trust the new hook." if client == "codex" else ""
    return f"added uq's hooks to {path}.{trust}"


def _uninstall(client: ClientName, scope: Scope, project: Path | None) -> str:
    target = _TARGETS[client]
    path = _settings_path(target, scope, project)
    if not path.exists():
        return f"{path} does not exist; nothing changed"
    settings = _read(path, target)
    hooks = _hooks_of(settings, path)
    had_hooks = bool(hooks)
    for event in list(hooks):
        groups = _groups_of(hooks, event, path)
        kept = _without_ours(groups, client)
        if kept != groups:
            hooks[event] = kept
            if not kept:
                del hooks[event]
    if had_hooks and not hooks:  # emptied by uq's leaving: as it was before uq came
        del settings["hooks"]
    if not _write(path, settings, secret=False):
        return f"no uq hooks in {path}; nothing changed"
    return f"removed uq's hooks from {path}"


def _settings_path(target: _Target, scope: Scope, project: Path | None) -> Path:
    if scope not in target.files:
        choices = " or ".join(target.files)
        raise _Refused(f"{target.name} has no {scope} settings; use --scope {choices}", 2)
    return target.files[scope](project or Path.cwd())


def _command(client: ClientName, scope: Scope, wait: int, url: str | None) -> str:
    """The hook's command line: uq by its full path, except in shared project settings."""
    uq = "uq" if scope == "project" else _uq_path()
    words = [uq, "hook", client, "--timeout", str(wait)]
    if url is not None:
        words += ["--url", url]
    return shlex.join(words)


def _uq_path() -> str:
    beside = Path(sys.executable).with_name("uq")
    return str(beside) if beside.exists() else shutil.which("uq") or "uq"


def _is_ours(handler: object, client: ClientName) -> bool:
    """Whether a hook handler runs `uq hook <client>` (uq by any path)."""
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return False
    try:
        words = shlex.split(str(handler.get("command", "")))
    except ValueError:
        return False
    return len(words) >= 3 and Path(words[0]).name == "uq" and words[1:3] == ["hook", client]


def _without_ours(groups: list[Any], client: ClientName) -> list[Any]:
    """`groups` without uq's handlers; a group left empty by that is dropped, others are kept
    exactly as they were."""
    kept = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list) or not any(_is_ours(h, client) for h in handlers):
            kept.append(group)
            continue
        others = [handler for handler in handlers if not _is_ours(handler, client)]
        if others:
            kept.append({**group, "hooks": others})
    return kept


def _read(path: Path, target: _Target) -> Settings:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
        settings = load_json(text) if text.strip() else {}
    except (OSError, ValueError) as error:
        raise _Refused(f"cannot read {path}: {error}; nothing was changed", 1) from None
    if not isinstance(settings, dict):
        raise _Refused(f"{path} is not a JSON object as {target.name} expects; fix it first", 1)
    return settings


def _hooks_of(settings: Settings, path: Path) -> dict[str, Any]:
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise _Refused(f'"hooks" in {path} is not an object; fix it first', 1)
    return hooks


def _groups_of(hooks: dict[str, Any], event: str, path: Path) -> list[Any]:
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise _Refused(f'"hooks.{event}" in {path} is not a list; fix it first', 1)
    return groups


def _write(path: Path, settings: Settings, *, secret: bool) -> bool:
    """Write `settings` to `path` if they differ from what is there, in the file's own
    indentation and mode (only yours when it holds a `secret`), atomically, keeping a `.bak`
    copy of the old file; whether it was written."""
    old = path.read_text(encoding="utf-8") if path.exists() else None
    new = json.dumps(settings, indent=_indent_of(old), ensure_ascii=False) + "\n"
    if old is not None and json.loads(old or "{}") == settings:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if old is not None else 0o644
    if secret:
        mode &= 0o700  # the host's token: for your eyes only
    if old is not None:
        shutil.copy2(path, path.with_name(path.name + ".bak"))
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    ) as handle:
        handle.write(new)
    os.chmod(handle.name, mode)
    os.replace(handle.name, path)
    return True


def _indent_of(text: str | None) -> int:
    for line in (text or "").splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and len(stripped) < len(line):
            return len(line) - len(stripped)
    return 2
