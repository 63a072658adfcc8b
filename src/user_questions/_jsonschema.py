"""The subset of JSON Schema that tool parameters use, checked without a dependency.

Level 0. Supports `type` (one or a list), `properties`, `required`, `additionalProperties`
(boolean), `items`, `enum`, `const`, `minItems`/`maxItems` and `minLength`/`maxLength`; other
keywords (`description`, `title`, ...) are ignored. The first problem found, in document order,
is reported as one line that names the property's path, such as `questions[0].id`.

A `null` given for an optional property is dropped before checking, because OpenAI's strict mode
sends one for every optional field the model left out; the arguments are returned without it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["SchemaViolation", "check_arguments", "json_type_name"]

JSONSchema = dict[str, Any]


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


def _is_type(value: object, expected: str) -> bool:
    actual = json_type_name(value)
    return actual == expected or (expected == "number" and actual == "integer")


def _where(path: str) -> str:
    return f'property "{path}"' if path else "arguments"


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def check_arguments(value: object, schema: JSONSchema) -> Any:
    """Check `value` against `schema`; return it with optional `null` properties dropped.

    Raises:
        SchemaViolation: naming the first offending property and what is wrong with it.
    """
    return _check(value, schema, "")


def _check(value: Any, schema: JSONSchema, path: str) -> Any:
    expected = schema.get("type")
    if expected is not None:
        types = [expected] if isinstance(expected, str) else list(expected)
        if not any(_is_type(value, t) for t in types):
            wanted = " or ".join(f"{'an' if t[0] in 'aeiou' else 'a'} {t}" for t in types)
            raise SchemaViolation(f"{_where(path)} must be {wanted}, got {json_type_name(value)}")
    if "const" in schema and value != schema["const"]:
        raise SchemaViolation(f"{_where(path)} must be {_show(schema['const'])}")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(_show(choice) for choice in schema["enum"])
        raise SchemaViolation(f"{_where(path)} must be one of {choices}")
    if isinstance(value, str):
        _check_length(len(value), schema, path, "minLength", "maxLength", "characters")
    elif isinstance(value, list):
        _check_length(len(value), schema, path, "minItems", "maxItems", "items")
        items = schema.get("items")
        if isinstance(items, dict):
            return [_check(item, items, f"{path}[{index}]") for index, item in enumerate(value)]
    elif isinstance(value, dict):
        return _check_object(value, schema, path)
    return value


def _check_object(value: dict[str, Any], schema: JSONSchema, path: str) -> dict[str, Any]:
    properties: dict[str, JSONSchema] = schema.get("properties", {})
    required = schema.get("required", ())
    checked: dict[str, Any] = {}
    for key, item in value.items():
        if item is None and key not in required and key in properties:
            continue
        if key in properties:
            checked[key] = _check(item, properties[key], _child(path, key))
        elif schema.get("additionalProperties", True) is False:
            raise SchemaViolation(f'unexpected property "{_child(path, key)}"')
        else:
            checked[key] = item
    for key in required:
        if key not in checked:
            raise SchemaViolation(f'missing required property "{_child(path, key)}"')
    return checked


def _check_length(
    size: int, schema: JSONSchema, path: str, low_key: str, high_key: str, unit: str
) -> None:
    low, high = schema.get(low_key), schema.get(high_key)
    if low is not None and size < low:
        raise SchemaViolation(f"{_where(path)} must have at least {low} {unit}, got {size}")
    if high is not None and size > high:
        raise SchemaViolation(f"{_where(path)} must have at most {high} {unit}, got {size}")


def _show(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)
