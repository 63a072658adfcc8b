"""`uq schema` and the committed JSON Schema files under schema/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from user_questions import __version__
from user_questions.cli._schema import render, schema_documents

ROOT = Path(__file__).resolve().parents[2]


def uq(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "user_questions.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_committed_schema_files_are_up_to_date() -> None:
    stale = [
        name
        for name, document in schema_documents().items()
        if (ROOT / "schema" / name).read_text(encoding="utf-8") != render(document)
    ]
    assert stale == [], f"regenerate with: uq schema --write schema  (stale: {stale})"


def test_wire_schema_shows_optional_fields_as_absent_not_null() -> None:
    wire = schema_documents()["wire.json"]
    item = wire["$defs"]["AskUserQuestionItem"]
    assert item["required"] == ["id", "question"]
    assert item["properties"]["multiSelect"] == {
        "description": "Whether more than one option may be selected; absent means single-select.",
        "type": "boolean",
    }
    assert "null" not in json.dumps(wire)
    assert wire["$defs"]["PlanReviewIntent"]["required"] == ["kind", "approve"]


def test_uq_schema_prints_every_document() -> None:
    result = uq("schema")
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert set(printed) == {"wire", "ask_user_question", "exit_plan_mode"}
    assert printed["ask_user_question"]["required"] == ["questions"]


def test_uq_schema_prints_one_document() -> None:
    result = uq("schema", "ask_user_question")
    assert json.loads(result.stdout) == schema_documents()["ask_user_question.json"]


def test_uq_schema_rejects_an_unknown_document_with_status_2() -> None:
    result = uq("schema", "nope")
    assert result.returncode == 2
    assert "nope" in result.stderr


def test_uq_version() -> None:
    result = uq("--version")
    assert result.stdout.strip() == __version__
