"""`uq hook install` and `uq hook uninstall`: uq's hooks in Claude Code's or Codex's own settings.

Each CLI reads its hooks from a JSON file it documents:

- Claude Code: `~/.claude/settings.json` (user; `$CLAUDE_CONFIG_DIR` moves it),
  `<project>/.claude/settings.json` (project, shared) and `<project>/.claude/settings.local.json`
  (local, yours), as `{"hooks": {"<Event>": [{"matcher", "hooks": [{"type": "command",
  "command", "timeout", "statusMessage"}]}]}}`. uq adds `PreToolUse` for `AskUserQuestion` and
  `ExitPlanMode`, `PermissionRequest` for every tool, and `PostToolUse` for every tool (which
  gives the model a note the person wrote beside an allowed call, once it has run; it asks
  nothing, so it has a short timeout and no status message).
- Codex: `~/.codex/hooks.json` (user; `$CODEX_HOME` moves it) and `<project>/.codex/hooks.json`
  (project), in the same shape; uq adds `PermissionRequest`. Codex runs a new hook only once
  it is trusted in its `/hooks` view.

The file is merged, not replaced: uq's own handlers (a command running `uq hook <client>`) are
replaced, everything else is kept as it was, in its order. Installing twice changes nothing;
before a change the file is copied to `<file>.bak`. The hook's timeout is `--timeout` seconds,
and the hook is told to withdraw its question `WITHDRAW_MARGIN` seconds before it, so the CLI
never has to kill it.

The hook's command carries the host's URL with an asker's token, which can ask but never answer:
anything the agent can read (these files included) must never let it answer its own permission
prompt. Install makes that token itself (`_asker_url`): in the host's store beside the host, as
`uq token add NAME --role asker` does, or through the host with an admin's URL (`POST
/api/tokens`); an asker's URL is written as it is; a person's is refused, and so is a URL whose
token's role cannot be checked. The token is kept while it still opens the host, so installing
again changes nothing. The shared project scope holds no token: its hook reads `$UQ_URL`.

Exit statuses: 0 done (or nothing to do), 1 a settings file that cannot be read or merged, or a
store or host that cannot be reached (nothing is written), 2 bad input (a person's URL, a bad
name, ...).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from cyclopts import Parameter

from user_questions._hooks.allowed_notes import POST_TOOL_USE
from user_questions._hooks.events import ASK_TOOL, PERMISSION_REQUEST, PLAN_TOOL, PRE_TOOL_USE
from user_questions._host_link.tls import client_context
from user_questions._reading.json_reader import load_json
from user_questions.cli._beside import with_store
from user_questions.cli._host_client import CA_HELP, DEFAULT_URL, HostAddress, HostClient
from user_questions.cli._store_option import OldDb, chosen_store
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.tokens import add_token, check_name, hash_token, revoke_token
from user_questions.host.stores import Role, Store, TokenChange
from user_questions.providers.remote import parse_host_url

__all__ = ["DEFAULT_TIMEOUT", "MIN_TIMEOUT", "WITHDRAW_MARGIN", "install", "uninstall"]

DEFAULT_TIMEOUT = 1800
"""Seconds the CLI lets the hook wait for a person: half an hour."""
WITHDRAW_MARGIN = 10
"""Seconds before the CLI's hook timeout at which the hook withdraws its question and leaves."""
MIN_TIMEOUT = 30
STATUS = "Asking in the user-questions inbox"
"""What the CLI shows while the hook waits."""
NOTE_TIMEOUT = 30
"""Seconds Claude Code gives the `PostToolUse` hook, which only reads a kept note."""

_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]+")
_UNREACHABLE = frozenset({ErrorCode.HOST_UNREACHABLE, ErrorCode.STORE_UNAVAILABLE})

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


def _note_giver(handler: dict[str, Any]) -> dict[str, Any]:
    """The `PostToolUse` handler: the same command, which asks nothing there."""
    return {"type": "command", "command": handler["command"], "timeout": NOTE_TIMEOUT}


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
            POST_TOOL_USE: {"matcher": "*", "hooks": [_note_giver(handler)]},
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
    store: Annotated[str | None, Parameter(name="--store")] = None,
    db: OldDb = None,
    name: str | None = None,
    ca: Annotated[str | None, Parameter(help=CA_HELP)] = None,
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
        The host the hook asks through [default: http://127.0.0.1:8765/]. Without a token, an
        asker's token is made in the host's store (--store); with an admin's token, one is made
        through the host; an asker's token is written as it is; a person's is refused. The
        project scope writes no URL with a token: its hook reads $UQ_URL.
    store
        With a URL without a token: the host's store, where the hook's asker token is made
        (a SQLite file or a store URL). Default: $UQ_STORE, else the default store.
    name
        The name of the asker token made for the hook [default: claude-hook or codex-hook;
        with --scope local, the project folder's name after it].
    ca
        A PEM file of the certificate authority that signed an https host's certificate: trusted
        while installing, and written into the hook's command (by its full path) so that the hook
        trusts it too.
    project
        The project folder, for the project and local scopes. Default: the current folder.
    """
    _main(
        "install",
        lambda: _install(
            client,
            scope,
            timeout,
            _Host(url, chosen_store("hook install", store, db), name, ca),
            project,
        ),
    )


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


@dataclass(frozen=True, slots=True)
class _Host:
    """The host the hook asks through, as `uq hook install` was told of it."""

    url: str | None
    store: str | None
    name: str | None
    ca: str | None


def _install(
    client: ClientName, scope: Scope, timeout: int, host: _Host, project: Path | None
) -> str:
    target = _TARGETS[client]
    path = _settings_path(target, scope, project)
    if timeout < MIN_TIMEOUT:
        raise _Refused(f"--timeout must be at least {MIN_TIMEOUT} seconds, got {timeout}", 2)
    ca = _ca_path(host.ca)
    if scope == "project" and host.url is not None and "token=" in host.url:
        raise _Refused(
            f"{path} is shared with everyone who clones the project, so it must not hold the "
            "host's token: use --scope local or user, or let the hook read $UQ_URL",
            2,
        )
    settings = _read(path, target)
    hooks = _hooks_of(settings, path)
    url = host.url
    if scope != "project":
        name = host.name or _token_name(client, scope, project or Path.cwd())
        url = _asker_url(host, name, hooks, client, ca)
    handler = {
        "type": "command",
        "command": _command(client, scope, timeout - WITHDRAW_MARGIN, url, ca),
        "timeout": timeout,
        "statusMessage": STATUS,
    }
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


def _command(client: ClientName, scope: Scope, wait: int, url: str | None, ca: str | None) -> str:
    """The hook's command line: uq by its full path, except in shared project settings."""
    uq = "uq" if scope == "project" else _uq_path()
    words = [uq, "hook", client, "--timeout", str(wait)]
    if url is not None:
        words += ["--url", url]
    if ca is not None:
        words += ["--ca", ca]
    return shlex.join(words)


def _ca_path(ca: str | None) -> str | None:
    """`--ca` as the hook will be given it: the full path of a PEM file an https client can
    load (checked now, so that a wrong path is said at install, not at the first prompt)."""
    if ca is None:
        return None
    try:
        client_context(ca)
    except UserQuestionError as error:
        raise _Refused(error.message, 2) from None
    return str(Path(ca).resolve())


def _token_name(client: ClientName, scope: Scope, project: Path) -> str:
    """The default name of the hook's asker token: `claude-hook`, or for one project's local
    settings `claude-hook-<folder>`, so that installs in several places keep their own."""
    name = f"{client}-hook"
    if scope == "local":
        folder = _NAME_CHARACTERS.sub("-", project.resolve().name).strip("-._")
        name = f"{name}-{folder}"[:64].rstrip("-._") if folder else name
    return name


def _installed_token(hooks: dict[str, Any], client: ClientName, base: str) -> str | None:
    """The token in the `--url` of uq's hook for `client` already in the settings, when that
    URL names the host at `base`; `None` when there is none (or the settings are not as uq
    wrote them: the merge says so)."""
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                if not _is_ours(handler, client):
                    continue
                words = shlex.split(str(handler["command"]))
                if "--url" not in words[:-1]:
                    return None
                try:
                    found, _, token = parse_host_url(words[words.index("--url") + 1])
                except UserQuestionError:
                    return None
                return token if token and found == base else None
    return None


def _asker_url(
    host: _Host, name: str, hooks: dict[str, Any], client: ClientName, ca: str | None
) -> str:
    """The URL with an asker's token for the hook's command: the one installed already in
    `hooks` if it still opens the host as an asker, the given one if it is an asker's, else a
    new asker token called `name`, made in the store (a URL without a token) or through the
    host (an admin's URL). Anything else is refused: the hook must never hold a token that can
    answer."""
    try:
        check_name(name)
        base, _, token = parse_host_url(host.url or DEFAULT_URL)
        kept = _installed_token(hooks, client, base)
        if token:
            made = anyio.run(_through_host, HostAddress(base, token, ca), name, kept)
        else:
            made = with_store(
                "hook install", host.store, lambda store: _in_store(store, name, kept)
            )
    except UserQuestionError as error:
        raise _Refused(error.message, 1 if error.code in _UNREACHABLE else 2) from None
    return f"{base}?token={made}"


async def _in_store(store: Store, name: str, kept: str | None) -> str:
    """`kept` if it is an active asker token of `store`, else a new asker token `name`."""
    tokens = [token for token in await store.tokens() if token.active]
    if kept is not None and any(
        token.token_hash == hash_token(kept) and token.role is Role.ASKER for token in tokens
    ):
        return kept
    taken = next((token for token in tokens if token.name == name), None)
    if taken is not None:
        _check_replaceable(name, str(taken.role))
        await revoke_token(store, name)
    made = await add_token(store, name, TokenChange(role=Role.ASKER))
    _made(name, taken is not None)
    return made


async def _through_host(address: HostAddress, name: str, kept: str | None) -> str:
    """The given token if the host says it is an asker's; else, with an admin's, `kept` if it
    is still an asker's, or a new asker token `name` made through the host."""
    async with HostClient(address) as host:
        given = await host.me()
        if given.role == Role.ASKER:
            return address.token
        if given.role != Role.ADMIN:
            raise UserQuestionError(
                f"this token can answer (it is {given.name}'s, a {given.role}'s), so it is never "
                "written where an agent could read it: give an asker's URL (the `export "
                "UQ_URL=...` line `uq serve` prints), or an admin's to make one",
                ErrorCode.FORBIDDEN,
            )
        if kept is not None and await _opens_as_asker(HostAddress(address.base, kept, address.ca)):
            return kept
        tokens = [token for token in await host.tokens() if token.revoked_at is None]
        taken = next((token for token in tokens if token.name == name), None)
        if taken is not None:
            _check_replaceable(name, taken.role)
            await host.revoke_token(name)
        made = await host.add_token(name, Role.ASKER)
    assert made.token is not None, "the host shows a token it made"
    _made(name, taken is not None)
    return made.token


async def _opens_as_asker(address: HostAddress) -> bool:
    try:
        async with HostClient(address) as host:
            return (await host.me()).role == Role.ASKER
    except UserQuestionError as error:
        if error.code == ErrorCode.UNAUTHORIZED:  # revoked meanwhile: make another
            return False
        raise


def _check_replaceable(name: str, role: str) -> None:
    """Refuse to replace a token called `name` that is not an asker's: it is someone's."""
    if role != Role.ASKER:
        raise UserQuestionError(
            f"a {role}'s token is called {name}; choose another name for the hook's with --name",
            ErrorCode.TOKEN_EXISTS,
        )


def _made(name: str, replaced: bool) -> None:
    again = f"; the earlier {name} is revoked" if replaced else ""
    print(
        f"uq hook install: made the asker token {name} for the hook (it can ask, never "
        f"answer){again}",
        file=sys.stderr,
    )


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
