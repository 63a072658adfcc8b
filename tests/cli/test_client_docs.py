"""The client pages in docs/clients/ show what uq really writes, in files the clients can read."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from user_questions.cli import app

DOCS = Path(__file__).resolve().parents[2] / "docs" / "clients"
_BLOCK = re.compile(r"(?:<!-- (\S+): ([^>]*?) -->\n)?```(json|toml)\n(.*?)```", re.S)
BLOCKS = [
    (page.name, marker, argument, language, text)
    for page in sorted(DOCS.glob("*.md"))
    for marker, argument, language, text in _BLOCK.findall(page.read_text(encoding="utf-8"))
]


def test_every_client_has_a_page() -> None:
    assert {page.stem for page in DOCS.glob("*.md")} >= {
        "claude-code",
        "codex",
        "cursor",
        "claude-desktop",
    }


@pytest.mark.parametrize(("page", "marker", "argument", "language", "text"), BLOCKS)
def test_every_configuration_shown_parses(
    page: str, marker: str, argument: str, language: str, text: str
) -> None:
    if language == "toml":
        assert tomllib.loads(text)
    else:
        assert isinstance(json.loads(text), dict)
    if "mcpServers" in text or "mcp_servers" in text:
        assert "8765" in text  # the real default port


@pytest.mark.parametrize(
    ("page", "command", "text"),
    [
        (page, argument, text)
        for page, marker, argument, _, text in BLOCKS
        if marker == "written-by"
    ],
)
def test_the_settings_shown_are_what_uq_hook_install_writes(
    page: str, command: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    words = shlex.split(command)
    assert words[:3] == ["uq", "hook", "install"]
    with pytest.raises(SystemExit) as exited:
        app([*words[1:], "--project", str(tmp_path)])
    assert exited.value.code in (0, None)
    (written,) = [path for path in tmp_path.rglob("*.json") if not path.name.endswith(".bak")]
    assert json.loads(written.read_text(encoding="utf-8")) == json.loads(text)
