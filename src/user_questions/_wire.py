"""Reading wire JSON from outside (a file, stdin, a socket) into models, with one-line errors.

Every place that reads the vocabulary from outside the process goes through here, so a wrong type
anywhere is reported the same way: one line that names the field, never a traceback. JSON text is
read by `read_json` (within the bounds of `_json.load_json`: nesting depth, lone surrogates, `NaN`),
so a document too deep or holding a lone surrogate is refused with the same code as any other
malformed one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import ValidationError

from user_questions._json import JSONRefused, load_json
from user_questions._jsonschema import json_type_name
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem, WireModel

__all__ = [
    "describe_validation_error",
    "parse_answer",
    "parse_questions",
    "parse_wire",
    "read_json",
]

Model = TypeVar("Model", bound=WireModel)

_EXPECTED = {
    "string_type": "a string",
    "bool_type": "a boolean",
    "list_type": "an array",
    "model_type": "an object",
    "dict_type": "an object",
    "model_attributes_type": "an object",
    "int_type": "an integer",
    "float_type": "a number",
}
_TAGS = frozenset({"plan-review"})


class _Questions(WireModel):
    questions: list[AskUserQuestionItem]


def _path(loc: Sequence[int | str]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part not in _TAGS:  # a tagged union puts the tag in the location
            path = f"{path}.{part}" if path else part
    return path


def describe_validation_error(error: ValidationError) -> str:
    """The first problem of a validation error, as one line naming the property."""
    first = error.errors(include_url=False)[0]
    path, kind, value = _path(first["loc"]), first["type"], first.get("input")
    where = f'property "{path}"' if path else "the document"
    if kind == "missing":
        return f'missing required property "{path}"'
    if kind in _EXPECTED:
        return f"{where} must be {_EXPECTED[kind]}, got {json_type_name(value)}"
    if kind == "union_tag_invalid":
        context = first.get("ctx", {})
        name = str(context.get("discriminator", "")).strip("'")
        where = f"{path}.{name}" if path else name
        if name == "kind":
            tag = json.dumps(context.get("tag"), ensure_ascii=False)
            return f'property "{where}" names an unknown intent {tag}'
        expected = str(context.get("expected_tags", "")).replace("True", "true")
        return f'property "{where}" must be one of {expected.replace("False", "false")}'
    return f"{where}: {first['msg']}"


def read_json(text: str | bytes, *, what: str, code: str) -> Any:
    """The JSON document in `text`, read within the bounds of `_json.load_json`.

    Raises:
        UserQuestionError: with `code`, the message `invalid <what>: <problem>`.
    """
    try:
        return load_json(text)
    except JSONRefused as refused:
        raise UserQuestionError(f"invalid {what}: {refused}", code) from None


def parse_wire(model: type[Model], data: Any, *, what: str, code: str) -> Model:
    """Validate parsed JSON (or JSON text, read by `read_json`) as `model`.

    Raises:
        UserQuestionError: with `code`, the message `invalid <what>: <problem>`.
    """
    if isinstance(data, str | bytes):
        data = read_json(data, what=what, code=code)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problem = describe_validation_error(error)
        raise UserQuestionError(f"invalid {what}: {problem}", code) from None


def parse_questions(data: Any) -> list[AskUserQuestionItem]:
    """Read a request document `{"questions": [...]}` (`BAD_REQUEST` when malformed)."""
    return parse_wire(_Questions, data, what="request", code=ErrorCode.BAD_REQUEST).questions


def parse_answer(data: Any) -> AskUserQuestionAnswer:
    """Read an answer document `{"answers": [...]}` (`BAD_ANSWER` when malformed)."""
    return parse_wire(AskUserQuestionAnswer, data, what="answer", code=ErrorCode.BAD_ANSWER)
