"""`uq schema`: the JSON Schema documents published under `schema/`, printed or written.

The wire schema shows what a peer may send: optional fields are simply not required (never `null`),
and titles that only repeat field names are left out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, models_json_schema
from pydantic_core import core_schema

from user_questions import tool_ask_user, tool_exit_plan_mode
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
    PlanReviewIntent,
)

__all__ = ["schema", "schema_documents", "write_schema_documents"]

Document = Literal["all", "wire", "ask_user_question", "exit_plan_mode"]

WIRE_MODELS = (
    AskUserQuestionOption,
    PlanReviewIntent,
    AskUserQuestionItem,
    AskUserQuestionAnswerItem,
    AskUserQuestionAnswer,
)


class _WireSchema(GenerateJsonSchema):
    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        result = super().default_schema(schema)
        if result.get("default", ...) is None:
            del result["default"]
        return result

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _wire_schema() -> dict[str, Any]:
    _, top = models_json_schema(
        [(model, "validation") for model in WIRE_MODELS],
        by_alias=True,
        title="user-questions wire vocabulary",
        schema_generator=_WireSchema,
    )
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **top}


def schema_documents() -> dict[str, dict[str, Any]]:
    """File name to document: the wire vocabulary and each tool's parameters."""
    return {
        "wire.json": _wire_schema(),
        f"{tool_ask_user.TOOL_NAME}.json": tool_ask_user.PARAMETERS,
        f"{tool_exit_plan_mode.TOOL_NAME}.json": tool_exit_plan_mode.PARAMETERS,
    }


def render(document: dict[str, Any]) -> str:
    """A document as committed: indented, keys in generation order, a final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write_schema_documents(directory: Path) -> list[Path]:
    """Write every document into `directory`; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, document in schema_documents().items():
        path = directory / name
        path.write_text(render(document), encoding="utf-8")
        written.append(path)
    return written


def schema(document: Document = "all", *, write: Path | None = None) -> None:
    """Print the JSON Schema of the wire vocabulary and of the model-facing tools.

    Parameters
    ----------
    document
        Which document to print: all of them (one JSON object keyed by name), or one.
    write
        Write every document into this directory (as under `schema/`) instead of printing.
    """
    if write is not None:
        for path in write_schema_documents(write):
            print(path)
        return
    documents = {name.removesuffix(".json"): doc for name, doc in schema_documents().items()}
    chosen = documents if document == "all" else documents[document]
    json.dump(chosen, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
