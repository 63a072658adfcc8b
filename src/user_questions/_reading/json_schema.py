"""The subset of JSON Schema that tool parameters use, checked without a dependency.

Supports `type` (one or a list), `properties`, `required`, `additionalProperties` (boolean),
`items`, `enum`, `const`, `minItems`/`maxItems` and `minLength`/`maxLength`; other keywords
(`description`, `title`, ...) are ignored. The first problem found, in document order, is reported
as one line that names the property's path, such as `questions[0].id`.

A schema is compiled once into nested checking functions (a tool call sits on the hot path of
every agent turn), and a path is only spelled out when there is a problem to report.

A `null` given for an optional property is dropped before checking, because OpenAI's strict mode
sends one for every optional field the model left out; the arguments are returned without it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sized
from typing import Any

from user_questions._reading.json_reader import path_text

__all__ = ["Check", "SchemaViolation", "compile_schema", "json_type_name"]

JSONSchema = dict[str, Any]
Path = tuple[str | int, ...]
Check = Callable[[Any, Path], Any]
"""Checks a value found at a path and returns it, with optional nulls dropped."""

_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}


class SchemaViolation(ValueError):
    """Raised with a one-line description of the first place the value breaks the schema."""


def json_type_name(value: object) -> str:
    """The JSON name of a parsed value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _where(path: Path) -> str:
    return f'property "{path_text(path)}"' if path else "arguments"


def _show(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def compile_schema(schema: JSONSchema) -> Check:
    """Compile `schema` into a check; call it as `check(value, ())`.

    Raises (from the check):
        SchemaViolation: naming the first offending property and what is wrong with it.
    """
    steps: list[Check] = []
    if "type" in schema:
        steps.append(_type_step(schema["type"]))
    if "const" in schema:
        steps.append(_const_step(schema["const"]))
    if "enum" in schema:
        steps.append(_enum_step(list(schema["enum"])))
    for low, high, unit, kind in (
        ("minLength", "maxLength", "characters", str),
        ("minItems", "maxItems", "items", list),
    ):
        if low in schema or high in schema:
            steps.append(_length_step(schema.get(low), schema.get(high), unit, kind))
    if isinstance(schema.get("items"), dict):
        steps.append(_items_step(compile_schema(schema["items"])))
    if "properties" in schema or "required" in schema or "additionalProperties" in schema:
        steps.append(_object_step(schema))

    def check(value: Any, path: Path) -> Any:
        for step in steps:
            value = step(value, path)
        return value

    return check


def _type_step(expected: str | list[str]) -> Check:
    names = [expected] if isinstance(expected, str) else list(expected)
    python_types = tuple(t for name in names for t in _PYTHON_TYPES.get(name, ()))
    bool_ok = "boolean" in names
    wanted = " or ".join(f"{'an' if n[0] in 'aeiou' else 'a'} {n}" for n in names)

    def step(value: Any, path: Path) -> Any:
        if isinstance(value, python_types) and (bool_ok or not isinstance(value, bool)):
            return value
        raise SchemaViolation(f"{_where(path)} must be {wanted}, got {json_type_name(value)}")

    return step


def _const_step(const: object) -> Check:
    def step(value: Any, path: Path) -> Any:
        if value != const:
            raise SchemaViolation(f"{_where(path)} must be {_show(const)}")
        return value

    return step


def _enum_step(choices: list[object]) -> Check:
    listed = ", ".join(_show(choice) for choice in choices)

    def step(value: Any, path: Path) -> Any:
        if value not in choices:
            raise SchemaViolation(f"{_where(path)} must be one of {listed}")
        return value

    return step


def _length_step(low: int | None, high: int | None, unit: str, kind: type) -> Check:
    def step(value: Any, path: Path) -> Any:
        if not isinstance(value, kind) or not isinstance(value, Sized):
            return value
        size = len(value)
        if low is not None and size < low:
            raise SchemaViolation(f"{_where(path)} must have at least {low} {unit}, got {size}")
        if high is not None and size > high:
            raise SchemaViolation(f"{_where(path)} must have at most {high} {unit}, got {size}")
        return value

    return step


def _items_step(item_check: Check) -> Check:
    def step(value: Any, path: Path) -> Any:
        if not isinstance(value, list | tuple):
            return value
        return [item_check(item, (*path, index)) for index, item in enumerate(value)]

    return step


def _object_step(schema: JSONSchema) -> Check:
    properties = {key: compile_schema(sub) for key, sub in schema.get("properties", {}).items()}
    required = tuple(schema.get("required", ()))
    closed = schema.get("additionalProperties", True) is False

    def step(value: Any, path: Path) -> Any:
        if not isinstance(value, dict):
            return value
        checked: dict[str, Any] = {}
        for key, item in value.items():
            check = properties.get(key)
            if check is None:
                if closed:
                    raise SchemaViolation(f'unexpected property "{path_text((*path, key))}"')
                checked[key] = item
            elif item is not None or key in required:
                checked[key] = check(item, (*path, key))
        for key in required:
            if key not in checked:
                raise SchemaViolation(f'missing required property "{path_text((*path, key))}"')
        return checked

    return step
