"""`uq hook install` and `uq hook uninstall` on settings that already hold hooks and permissions,
and the asker token install makes in the host's store for the hook (through a host: in
tests/e2e/test_self_approval.py).

HOME, XDG_STATE_HOME (the default store), CLAUDE_CONFIG_DIR, CODEX_HOME and the project folder
are temporary: the real ~/.claude, ~/.codex and store are never read or written.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import stat
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from user_questions.cli import app
from user_questions.host.gate.tokens import add_token, hash_token, host_token
from user_questions.host.stores import Role, TokenChange, TokenRecord, default_store_path
from user_questions.host.stores.sqlite import SQLiteStore

SETTINGS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "lint-hook", "timeout": 5}],
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    },
    "model": "opus",
}
CODEX_HOOKS: dict[str, Any] = {
    "hooks": {
        "PermissionRequest": [
            {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "audit.sh"}]}
        ]
    }
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose default store exists, as `uq serve` made it."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_STATE_HOME", str(folder / ".local" / "state"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "UQ_STORE", "UQ_DB", "UQ_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    default_store_path().parent.mkdir(parents=True)

    async def create() -> None:
        async with SQLiteStore(default_store_path()):
            pass

    anyio.run(create)
    return folder


def tokens() -> list[TokenRecord]:
    async def read() -> list[TokenRecord]:
        async with SQLiteStore(default_store_path(), host=False) as store:
            return await store.tokens()

    return anyio.run(read)


def hook_url(command: str) -> str:
    """The URL the hook's command asks through."""
    words = shlex.split(command)
    return words[words.index("--url") + 1]


def asker_of(url: str) -> TokenRecord:
    """The store's active token in `url`, which must be an asker's."""
    token = url.partition("?token=")[2]
    (record,) = [t for t in tokens() if t.active and t.token_hash == hash_token(token)]
    assert record.role is Role.ASKER
    return record


def uq(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        app(["hook", *args])
    except SystemExit as exited:
        code = int(exited.code or 0)
    else:
        code = 0
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(path: Path, value: Any, indent: int = 4) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(value, indent=indent) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def uq_handlers(settings: Any) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for event, groups in settings.get("hooks", {}).items():
        for group in groups:
            for handler in group["hooks"]:
                if " hook " in handler["command"]:
                    found.setdefault(event, []).append({**handler, "matcher": group.get("matcher")})
    return found


def test_installing_for_claude_adds_the_three_hooks_and_keeps_everything_else(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".claude" / "settings.json"
    original = write(path, SETTINGS)
    code, out, _ = uq(capsys, "install", "claude")
    assert code == 0
    assert out == f"uq hook install: added uq's hooks to {path}.\n"
    settings = read(path)
    ours = uq_handlers(settings)
    assert [h["matcher"] for h in ours["PreToolUse"]] == ["AskUserQuestion|ExitPlanMode"]
    assert [h["matcher"] for h in ours["PermissionRequest"]] == ["*"]
    (note_giver,) = ours["PostToolUse"]  # gives the model a note beside an allowed call
    assert (note_giver["matcher"], note_giver["timeout"]) == ("*", 30)
    assert "statusMessage" not in note_giver  # it asks nothing
    handler = ours["PermissionRequest"][0]
    assert note_giver["command"] == handler["command"]
    assert handler["timeout"] == 1800
    assert handler["statusMessage"] == "Asking in the user-questions inbox"
    words = shlex.split(handler["command"])
    assert Path(words[0]).name == "uq"
    assert Path(words[0]).is_absolute()
    assert words[1:6] == ["hook", "claude", "--timeout", "1790", "--url"]
    assert words[6].startswith("http://127.0.0.1:8765/?token=")
    assert asker_of(words[6]).name == "claude-hook"  # made in the store, for this hook only
    assert settings["permissions"] == SETTINGS["permissions"]
    assert settings["model"] == "opus"
    assert settings["hooks"]["PreToolUse"][0] == SETTINGS["hooks"]["PreToolUse"][0]
    assert settings["hooks"]["Stop"] == SETTINGS["hooks"]["Stop"]
    assert path.read_text(encoding="utf-8").startswith('{\n    "permissions"')  # its indent
    assert (home / ".claude" / "settings.json.bak").read_text(encoding="utf-8") == original


def test_installing_again_changes_nothing(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / ".claude" / "settings.json"
    write(path, SETTINGS)
    uq(capsys, "install", "claude", "--timeout", "600")
    first, backup = path.read_bytes(), (home / ".claude" / "settings.json.bak").read_bytes()
    code, out, _ = uq(capsys, "install", "claude", "--timeout", "600")
    assert code == 0
    assert out == f"uq hook install: uq's hooks are already in {path}; nothing changed\n"
    assert path.read_bytes() == first
    assert (home / ".claude" / "settings.json.bak").read_bytes() == backup


def test_installing_with_a_new_timeout_replaces_uqs_hooks_instead_of_adding_more(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".claude" / "settings.json"
    write(path, SETTINGS)
    uq(capsys, "install", "claude")
    uq(capsys, "install", "claude", "--timeout", "900")
    ours = uq_handlers(read(path))
    assert [h["timeout"] for h in ours["PreToolUse"] + ours["PermissionRequest"]] == [900, 900]
    assert all("--timeout 890 --url" in h["command"] for h in ours["PermissionRequest"])
    assert [t.name for t in tokens()] == ["claude-hook"]  # the token kept, not made again


def test_uninstalling_leaves_the_settings_as_they_were(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".claude" / "settings.json"
    write(path, SETTINGS)
    uq(capsys, "install", "claude")
    code, out, _ = uq(capsys, "uninstall", "claude")
    assert code == 0
    assert out == f"uq hook uninstall: removed uq's hooks from {path}\n"
    assert read(path) == SETTINGS
    code, out, _ = uq(capsys, "uninstall", "claude")
    assert out == f"uq hook uninstall: no uq hooks in {path}; nothing changed\n"


def test_a_fresh_settings_file_holds_only_uqs_hooks_and_goes_away_clean(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".claude" / "settings.json"
    uq(capsys, "install", "claude")
    assert set(read(path)) == {"hooks"}
    assert not (home / ".claude" / "settings.json.bak").exists()
    uq(capsys, "uninstall", "claude")
    assert read(path) == {}


def test_claude_config_dir_moves_the_user_settings(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    uq(capsys, "install", "claude")
    assert uq_handlers(read(tmp_path / "claude-config" / "settings.json"))
    assert not (home / ".claude").exists()


def test_the_project_scope_is_shared_so_it_runs_uq_from_the_path_and_holds_no_token(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "shop"
    code, _, _ = uq(capsys, "install", "claude", "--scope", "project", "--project", str(project))
    assert code == 0
    handler = uq_handlers(read(project / ".claude" / "settings.json"))["PermissionRequest"][0]
    assert handler["command"] == "uq hook claude --timeout 1790"
    code, _, err = uq(
        capsys,
        *("install", "claude", "--scope", "project", "--project", str(project)),
        *("--url", "http://127.0.0.1:8765/?token=secret"),
    )
    assert code == 2
    assert "must not hold the host's token" in err
    assert "secret" not in (project / ".claude" / "settings.json").read_text(encoding="utf-8")


def test_the_local_scope_names_the_host_with_a_token_of_its_own_readable_only_by_you(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    uq(capsys, "install", "claude")
    code, _, _ = uq(capsys, "install", "claude", "--scope", "local", "--url", "http://h:9/")
    assert code == 0
    path = tmp_path / ".claude" / "settings.local.json"
    url = hook_url(uq_handlers(read(path))["PreToolUse"][0]["command"])
    assert url.startswith("http://h:9/?token=")
    assert asker_of(url).name == f"claude-hook-{tmp_path.name}"  # the user scope's kept its own
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_settings_that_get_the_token_are_made_readable_only_by_you(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".claude" / "settings.json"
    write(path, SETTINGS)
    path.chmod(0o644)
    uq(capsys, "install", "claude")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_install_writes_an_asker_token_and_never_one_that_can_answer(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def people() -> list[str]:
        async with SQLiteStore(default_store_path(), host=False) as store:
            return [
                await host_token(store),
                await add_token(store, "ada", TokenChange(role=Role.PERSON)),
            ]

    answering = anyio.run(people)
    before = {path: path.stat().st_mtime_ns for path in tmp_path.rglob("*") if path.is_file()}
    for args in (("claude",), ("codex",), ("claude", "--scope", "local")):
        code, _, err = uq(capsys, "install", *args)
        assert code == 0, err
    store = default_store_path().parent
    written = [
        path
        for path in tmp_path.rglob("*")
        if path.is_file()
        and before.get(path) != path.stat().st_mtime_ns
        and path.parent != store  # the store: each token's hash, no token
    ]
    assert {path.name for path in written} == {"settings.json", "hooks.json", "settings.local.json"}
    texts = [path.read_text(encoding="utf-8") for path in written]
    assert not any(token in text for token in answering for text in texts)
    for text in texts:
        for handler in [h for handlers in uq_handlers(json.loads(text)).values() for h in handlers]:
            asker_of(hook_url(handler["command"]))


def test_a_token_of_the_name_is_replaced_only_if_it_is_an_askers(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".claude" / "settings.json"
    uq(capsys, "install", "claude")
    first = asker_of(hook_url(uq_handlers(read(path))["PermissionRequest"][0]["command"]))
    uq(capsys, "uninstall", "claude")
    code, _, err = uq(capsys, "install", "claude")  # the earlier token is in no settings now
    assert code == 0
    assert err == (
        "uq hook install: made the asker token claude-hook for the hook (it can ask, never "
        "answer); the earlier claude-hook is revoked\n"
    )
    second = asker_of(hook_url(uq_handlers(read(path))["PermissionRequest"][0]["command"]))
    assert second.token_hash != first.token_hash
    assert [t.token_hash for t in tokens() if t.active] == [second.token_hash]

    async def person() -> None:
        async with SQLiteStore(default_store_path(), host=False) as store:
            await add_token(store, "ada", TokenChange(role=Role.PERSON))

    anyio.run(person)
    code, out, err = uq(capsys, "install", "codex", "--name", "ada")
    assert (code, out) == (2, "")
    assert "a person's token is called ada; choose another name" in err
    assert not (home / ".codex").exists()
    assert {t.name for t in tokens() if t.active} == {"claude-hook", "ada"}


def test_without_a_store_nothing_is_written(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = uq(capsys, "install", "claude", "--store", str(tmp_path / "none.db"))
    assert (code, out) == (2, "")
    assert err.startswith(f"uq hook install: there is no store at {tmp_path / 'none.db'}")
    assert not (home / ".claude").exists()


def test_the_installed_command_runs_as_a_hook(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    uq(capsys, "install", "claude", "--url", url)
    command = uq_handlers(read(home / ".claude" / "settings.json"))["PermissionRequest"][0]
    event = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {}}
    environ = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    ran = subprocess.run(
        ["bash", "-c", command["command"]],  # as Claude Code runs a command hook
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )
    assert (ran.returncode, ran.stdout) == (0, "")
    assert f"the host at {url} did not answer" in ran.stderr


def test_installing_for_codex_merges_its_hooks_json(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".codex" / "hooks.json"
    original = write(path, CODEX_HOOKS, indent=2)
    code, out, _ = uq(capsys, "install", "codex")
    assert code == 0
    assert out == (
        f"uq hook install: added uq's hooks to {path}. Open /hooks in Codex and trust the new "
        "hook.\n"
    )
    settings = read(path)
    assert set(settings) == {"hooks"}  # Codex refuses any other top-level key
    groups = settings["hooks"]["PermissionRequest"]
    assert groups[0] == CODEX_HOOKS["hooks"]["PermissionRequest"][0]
    assert "matcher" not in groups[1]  # every tool
    assert groups[1]["hooks"][0]["timeout"] == 1800
    assert shlex.split(groups[1]["hooks"][0]["command"])[1:3] == ["hook", "codex"]
    assert (home / ".codex" / "hooks.json.bak").read_text(encoding="utf-8") == original
    uq(capsys, "uninstall", "codex")
    assert read(path) == CODEX_HOOKS


def test_codex_home_moves_the_user_hooks(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    uq(capsys, "install", "codex")
    assert uq_handlers(read(tmp_path / "codex-home" / "hooks.json"))


def test_claude_and_codex_hooks_in_one_place_are_told_apart(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / ".claude" / "settings.json"
    codex_style = {"type": "command", "command": "/opt/bin/uq hook codex --timeout 50"}
    write(path, {"hooks": {"PermissionRequest": [{"hooks": [codex_style]}]}})
    uq(capsys, "install", "claude", "--scope", "project")
    uq(capsys, "uninstall", "claude", "--scope", "project")
    assert read(path) == {"hooks": {"PermissionRequest": [{"hooks": [codex_style]}]}}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("install", "codex", "--scope", "local"), "Codex has no local settings"),
        (("install", "claude", "--timeout", "10"), "--timeout must be at least 30 seconds"),
    ],
)
def test_bad_input_is_refused_with_status_2_touching_nothing(
    home: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    code, out, err = uq(capsys, *args)
    assert (code, out) == (2, "")
    assert message in err
    assert not (home / ".claude").exists()
    assert not (home / ".codex").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "cannot read"),
        ("[]", "is not a JSON object"),
        ('{"hooks": []}', '"hooks" in'),
        ('{"hooks": {"PreToolUse": {}}}', '"hooks.PreToolUse" in'),
    ],
)
def test_settings_that_cannot_be_merged_are_left_untouched(
    home: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    code, out, err = uq(capsys, "install", "claude")
    assert (code, out) == (1, "")
    assert message in err
    assert path.read_text(encoding="utf-8") == text
    assert not (home / ".claude" / "settings.json.bak").exists()
