"""A question's form (`AskUserQuestionItem.schema`) and the one check of the value that answers it.

Standard library only (and `limits`, `text`), so that every Python surface checks a form alike:
the service and the host (`_checks`), the terminal, the chat bots and the bridges. The TypeScript
client carries a port of it (`clients/typescript/src/forms.ts`) with the same messages, and the
web page shows the host's refusal beside the field it names.

A form is the flat object schema MCP elicitation defines for its `requestedSchema`:

- `{"type": "object", "properties": {...}, "required": [...]}`, every property one field
  (`additionalProperties`, when given, is `false`: a value holds its fields only);
- a text: `{"type": "string"}` with `minLength`, `maxLength`, `format` (`email`, `uri`, `date`,
  `date-time`);
- a number: `{"type": "number"}` or `{"type": "integer"}` with `minimum`, `maximum`;
- a yes or no: `{"type": "boolean"}`;
- one choice: `{"type": "string", "enum": [...]}` (titled by a parallel `enumNames`, MCP's
  older spelling) or `{"type": "string", "oneOf": [{"const", "title"}, ...]}`;
- several choices: `{"type": "array", "items": {"type": "string", "enum": [...]}}` or
  `{"type": "array", "items": {"anyOf": [{"const", "title"}, ...]}}`, with `minItems`,
  `maxItems`;
- and on every field `title`, `description` and `default` (what a surface fills in first).

The value that answers a form is a JSON object with a value of the field's type for each field
given; a required field must be given, and no other key may be. Every problem is one line naming
the field: `value.replicas: must be at most 10`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal, TypeAlias, TypeGuard

from user_questions._reading.json_schema import json_type_name as _type_name
from user_questions._reading.text import text_problem
from user_questions.limits import (
    MAX_CUSTOM_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_FORM_FIELDS,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS_PER_QUESTION,
    MAX_QUESTION_ID_LENGTH,
)

__all__ = [
    "FORMATS",
    "Choice",
    "FieldKind",
    "FormField",
    "form_fields",
    "number_text",
    "schema_problem",
    "schema_texts",
    "value_problem",
]

FieldKind: TypeAlias = Literal["string", "number", "integer", "boolean", "choice", "choices"]
"""What a field takes: a text, a number, a whole number, yes or no, one choice, several."""
FORMATS = ("email", "uri", "date", "date-time")
"""The formats a text field may ask for."""
_TOP_KEYS = frozenset(
    {"type", "properties", "required", "title", "description", "$schema", "additionalProperties"}
)
_COMMON_KEYS = frozenset({"type", "title", "description", "default"})
_KEYS: dict[str, frozenset[str]] = {
    "string": _COMMON_KEYS | {"minLength", "maxLength", "format", "enum", "enumNames", "oneOf"},
    "number": _COMMON_KEYS | {"minimum", "maximum"},
    "integer": _COMMON_KEYS | {"minimum", "maximum"},
    "boolean": _COMMON_KEYS,
    "array": _COMMON_KEYS | {"items", "minItems", "maxItems"},
}
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[Tt](?P<time>\d{2}:\d{2}:\d{2})(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})"
)
_SHOWN_CHOICES = 10
"""Choices a refusal lists before it says how many more there are."""


class _Problem(ValueError):
    """A schema that is not a form: the message, and where (a path under `schema`)."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(problem)
        self.where = where


@dataclass(frozen=True, slots=True)
class Choice:
    """One entry of a choice field: the value it sends, and its title (the value when it has
    none)."""

    value: str
    title: str


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of a form, read from its schema."""

    key: str
    """The property's name: the key of its value."""
    kind: FieldKind
    required: bool
    title: str | None = None
    description: str | None = None
    has_default: bool = False
    default: Any = None
    """The value a surface fills in first, when `has_default`."""
    choices: tuple[Choice, ...] = ()
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    format: str | None = None

    @property
    def label(self) -> str:
        """What a surface calls the field: its title, else its key."""
        return self.title or self.key

    def problem(self, value: object) -> str | None:
        """What is wrong with `value` for this field (`must be at most 10`), `None` if nothing."""
        return _field_problem(self, value)

    def hint(self) -> str:
        """What the field takes, in words, for a surface that asks it as text: `A whole number
        from 1 to 10.`"""
        return _hint(self)


def number_text(number: float) -> str:
    """A number as the messages write it, and as JavaScript would: `10`, never `10.0`."""
    if isinstance(number, float) and number.is_integer() and abs(number) < 1e21:
        return str(int(number))
    return repr(number)


def schema_problem(schema: object) -> str | None:
    """What makes `schema` not a form (`schema.properties.replicas.type: must be one of ...`),
    `None` when it is one."""
    try:
        _read_schema(schema)
    except _Problem as problem:
        where = f"schema.{problem.where}" if problem.where else "schema"
        return f"{where}: {problem}"
    return None


def form_fields(schema: Mapping[str, Any]) -> tuple[FormField, ...]:
    """The fields of a form, in order. `schema` is a form (`schema_problem` found nothing).

    Raises:
        ValueError: `schema` is not a form.
    """
    return _read_schema(schema)


def schema_texts(schema: Mapping[str, Any]) -> Iterator[tuple[str, str, int]]:
    """Every text of a form, for the request's limits: its place under `schema`, the text, and
    the most characters it may have."""
    for name, limit in (("title", MAX_LABEL_LENGTH), ("description", MAX_DESCRIPTION_LENGTH)):
        if isinstance(schema.get(name), str):
            yield f"schema.{name}", schema[name], limit
    for key, field in _properties(schema).items():
        place = f"schema.properties.{key}"
        yield place, key, MAX_QUESTION_ID_LENGTH
        if not isinstance(field, Mapping):
            continue
        for name, limit in (("title", MAX_LABEL_LENGTH), ("description", MAX_DESCRIPTION_LENGTH)):
            if isinstance(field.get(name), str):
                yield f"{place}.{name}", field[name], limit
        for where, entries in _choice_lists(field):
            for index, entry in enumerate(entries):
                for name, text in _entry_texts(entry):
                    yield f"{place}.{where}[{index}]{name}", text, MAX_LABEL_LENGTH


def value_problem(schema: Mapping[str, Any], value: object) -> str | None:
    """What is wrong with the value that answers the form `schema`, naming the field
    (`value.replicas: must be at most 10`); `None` when it fits."""
    if not isinstance(value, Mapping):
        return f"value: must be an object, got {_type_name(value)}"
    fields = form_fields(schema)
    for field in fields:
        if field.key not in value:
            if field.required:
                return f"value.{field.key}: is required"
            continue
        problem = field.problem(value[field.key])
        if problem is not None:
            return _at(f"value.{field.key}", problem)
    known = {field.key for field in fields}
    for key in value:
        if key not in known:
            return f"value.{key}: is not a field of this form"
    return None


# -- reading a schema ------------------------------------------------------------------------


def _properties(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _choice_lists(field: Mapping[str, Any]) -> Iterator[tuple[str, Sequence[Any]]]:
    for name in ("enum", "enumNames", "oneOf"):
        if isinstance(field.get(name), list):
            yield name, field[name]
    items = field.get("items")
    if isinstance(items, Mapping):
        for name in ("enum", "anyOf"):
            if isinstance(items.get(name), list):
                yield f"items.{name}", items[name]


def _entry_texts(entry: object) -> Iterator[tuple[str, str]]:
    if isinstance(entry, str):
        yield "", entry
    elif isinstance(entry, Mapping):
        for name in ("const", "title"):
            if isinstance(entry.get(name), str):
                yield f".{name}", entry[name]


def _read_schema(schema: object) -> tuple[FormField, ...]:
    if not isinstance(schema, Mapping):
        raise _Problem("", f"must be an object, got {_type_name(schema)}")
    for key in schema:
        if key not in _TOP_KEYS:
            raise _Problem("", f"{_quoted(key)} is not a keyword a form may use")
    if schema.get("type") != "object":
        raise _Problem("type", 'must be "object"')
    if schema.get("additionalProperties", False) is not False:
        raise _Problem(
            "additionalProperties", "must be false: a form's value holds its fields only"
        )
    if "properties" not in schema:
        raise _Problem("properties", "is missing")
    properties = schema["properties"]
    if not isinstance(properties, Mapping):
        raise _Problem("properties", f"must be an object, got {_type_name(properties)}")
    if not properties:
        raise _Problem("properties", "must hold at least one field")
    if len(properties) > MAX_FORM_FIELDS:
        raise _Problem("properties", f"holds {len(properties)} fields; at most {MAX_FORM_FIELDS}")
    required = schema.get("required", [])
    if not isinstance(required, list):
        raise _Problem("required", f"must be an array, got {_type_name(required)}")
    for index, name in enumerate(required):
        if not isinstance(name, str) or name not in properties:
            raise _Problem(f"required[{index}]", f"{_shown(name)} is not a field of the form")
        if name in required[:index]:
            raise _Problem(f"required[{index}]", f"{_quoted(name)} is named more than once")
    return tuple(_read_field(key, field, key in required) for key, field in properties.items())


def _read_field(key: str, schema: object, required: bool) -> FormField:
    where = f"properties.{key}"
    if not key:
        raise _Problem("properties", "a field's name is empty")
    if not isinstance(schema, Mapping):
        raise _Problem(where, f"must be an object, got {_type_name(schema)}")
    kind = schema.get("type")
    if kind not in _KEYS:
        raise _Problem(f"{where}.type", f"must be one of {_listed(_KEYS)}")
    for name in schema:
        if name not in _KEYS[kind]:
            raise _Problem(where, f"{_quoted(name)} is not a keyword of a {kind} field")
    texts = {name: _text(schema, name, where) for name in ("title", "description")}
    read: dict[str, Any] = {"key": key, "required": required, **texts}
    if kind == "string":
        read.update(_string(schema, where))
    elif kind in ("number", "integer"):
        read.update(kind=kind, **_bounds(schema, where, "minimum", "maximum", number=True))
    elif kind == "boolean":
        read.update(kind="boolean")
    else:
        read.update(_array(schema, where))
    field = FormField(**read)
    if "default" in schema:
        problem = _field_problem(field, schema["default"])
        if problem is not None:
            place, _, said = _at(f"{where}.default", problem).partition(": ")
            raise _Problem(place, said)
        field = FormField(**read, has_default=True, default=schema["default"])
    return field


def _string(schema: Mapping[str, Any], where: str) -> dict[str, Any]:
    choices = _choices(schema, where)
    if choices:
        for name in ("minLength", "maxLength", "format"):
            if name in schema:
                raise _Problem(where, f"{_quoted(name)} does not go with a choice")
        return {"kind": "choice", "choices": choices}
    read: dict[str, Any] = {"kind": "string"}
    bounds = _bounds(schema, where, "minLength", "maxLength", number=False)
    read.update(min_length=bounds["minimum"], max_length=bounds["maximum"])
    if "format" in schema:
        if schema["format"] not in FORMATS:
            raise _Problem(f"{where}.format", f"must be one of {_listed(FORMATS)}")
        read["format"] = schema["format"]
    return read


def _array(schema: Mapping[str, Any], where: str) -> dict[str, Any]:
    if "items" not in schema:
        raise _Problem(f"{where}.items", "is missing")
    items = schema["items"]
    if not isinstance(items, Mapping):
        raise _Problem(f"{where}.items", f"must be an object, got {_type_name(items)}")
    for name in items:
        if name not in ("type", "enum", "anyOf"):
            raise _Problem(f"{where}.items", f"{_quoted(name)} is not a keyword of a choice")
    if "type" in items and items["type"] != "string":
        raise _Problem(f"{where}.items.type", 'must be "string"')
    choices = _choices(items, f"{where}.items", entries="anyOf")
    if not choices:
        raise _Problem(f"{where}.items", 'must offer its choices as "enum" or "anyOf"')
    bounds = _bounds(schema, where, "minItems", "maxItems", number=False)
    return {
        "kind": "choices",
        "choices": choices,
        "min_items": bounds["minimum"],
        "max_items": bounds["maximum"],
    }


def _choices(
    schema: Mapping[str, Any], where: str, *, entries: str = "oneOf"
) -> tuple[Choice, ...]:
    enum, titled = schema.get("enum"), schema.get(entries)
    if enum is not None and titled is not None:
        raise _Problem(where, f'"enum" and {_quoted(entries)} do not go together')
    if enum is None and titled is None:
        if "enumNames" in schema:
            raise _Problem(where, '"enumNames" goes with "enum"')
        return ()
    given = enum if enum is not None else titled
    name = "enum" if enum is not None else entries
    if not isinstance(given, list) or not given:
        raise _Problem(f"{where}.{name}", "must be an array holding at least one choice")
    if len(given) > MAX_OPTIONS_PER_QUESTION:
        raise _Problem(
            f"{where}.{name}", f"holds {len(given)} choices; at most {MAX_OPTIONS_PER_QUESTION}"
        )
    if enum is not None:
        choices = [
            _enum_choice(value, f"{where}.enum[{index}]") for index, value in enumerate(enum)
        ]
        names = schema.get("enumNames")
        if names is not None:
            if not isinstance(names, list) or len(names) != len(enum):
                raise _Problem(f"{where}.enumNames", "must hold one title for each value of enum")
            for index, title in enumerate(names):
                if not isinstance(title, str) or not title:
                    raise _Problem(f"{where}.enumNames[{index}]", "must be a non-empty string")
            choices = [Choice(one.value, title) for one, title in zip(choices, names, strict=True)]
    else:
        choices = [
            _titled_choice(entry, f"{where}.{name}[{index}]") for index, entry in enumerate(given)
        ]
    seen: set[str] = set()
    for index, choice in enumerate(choices):
        if choice.value in seen:
            raise _Problem(f"{where}.{name}[{index}]", f"{_quoted(choice.value)} is offered twice")
        seen.add(choice.value)
    return tuple(choices)


def _enum_choice(value: object, where: str) -> Choice:
    if not isinstance(value, str) or not value:
        raise _Problem(where, f"must be a string, got {_type_name(value)}")
    return Choice(value, value)


def _titled_choice(entry: object, where: str) -> Choice:
    if not isinstance(entry, Mapping):
        raise _Problem(where, f"must be an object, got {_type_name(entry)}")
    for name in entry:
        if name not in ("const", "title"):
            raise _Problem(where, f"{_quoted(name)} is not a keyword of a choice")
    if "const" not in entry:
        raise _Problem(f"{where}.const", "is missing")
    value, title = entry["const"], entry.get("title")
    if not isinstance(value, str) or not value:
        raise _Problem(f"{where}.const", f"must be a string, got {_type_name(value)}")
    if title is not None and (not isinstance(title, str) or not title):
        raise _Problem(f"{where}.title", f"must be a string, got {_type_name(title)}")
    return Choice(value, title or value)


def _bounds(
    schema: Mapping[str, Any], where: str, low: str, high: str, *, number: bool
) -> dict[str, Any]:
    found: dict[str, Any] = {"minimum": None, "maximum": None}
    for name, slot in ((low, "minimum"), (high, "maximum")):
        if name not in schema:
            continue
        bound = schema[name]
        if number and not _is_number(bound):
            raise _Problem(f"{where}.{name}", f"must be a number, got {_type_name(bound)}")
        if not number and (not _is_integer(bound) or bound < 0):
            raise _Problem(f"{where}.{name}", "must be a whole number of at least 0")
        found[slot] = bound
    low_bound, high_bound = found["minimum"], found["maximum"]
    if low_bound is not None and high_bound is not None and low_bound > high_bound:
        raise _Problem(f"{where}.{high}", f"must be at least {low} ({number_text(low_bound)})")
    return found


def _text(schema: Mapping[str, Any], name: str, where: str) -> str | None:
    value = schema.get(name)
    if value is not None and not isinstance(value, str):
        raise _Problem(f"{where}.{name}", f"must be a string, got {_type_name(value)}")
    return value or None


# -- checking a value --------------------------------------------------------------------------


def _field_problem(field: FormField, value: object) -> str | None:
    if field.kind == "string":
        return _string_problem(field, value)
    if field.kind in ("number", "integer"):
        return _number_problem(field, value)
    if field.kind == "boolean":
        return (
            None if isinstance(value, bool) else f"must be true or false, got {_type_name(value)}"
        )
    if field.kind == "choice":
        return _choice_problem(field, value)
    return _choices_problem(field, value)


def _string_problem(field: FormField, value: object) -> str | None:
    if not isinstance(value, str):
        return f"must be a string, got {_type_name(value)}"
    length = len(value)
    if field.min_length is not None and length < field.min_length:
        return f"must be at least {field.min_length} characters long"
    limit = (
        MAX_CUSTOM_LENGTH if field.max_length is None else min(field.max_length, MAX_CUSTOM_LENGTH)
    )
    if length > limit:
        return f"must be at most {limit} characters long"
    problem = text_problem(value)
    if problem is not None:
        return problem
    if field.format is not None and value and not _fits_format(field.format, value):
        return _FORMAT_PROBLEMS[field.format]
    return None


_FORMAT_PROBLEMS = {
    "email": "must be an email address",
    "uri": "must be a URI, such as https://example.com/",
    "date": "must be a date, as 2025-06-03",
    "date-time": "must be a date and time, as 2025-06-03T14:12:00Z",
}


def _fits_format(format: str, text: str) -> bool:
    if format == "email":
        return _EMAIL.fullmatch(text) is not None
    if format == "uri":
        return _URI.fullmatch(text) is not None
    if format == "date":
        return _DATE.fullmatch(text) is not None and _real_date(text)
    found = _DATE_TIME.fullmatch(text)
    if found is None or not _real_date(found["date"]):
        return False
    hours, minutes, seconds = (int(part) for part in found["time"].split(":"))
    return hours < 24 and minutes < 60 and seconds < 61


def _real_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _number_problem(field: FormField, value: object) -> str | None:
    if field.kind == "integer" and not _is_integer(value):
        return f"must be a whole number, got {_type_name(value)}"
    if not _is_number(value):
        return f"must be a number, got {_type_name(value)}"
    if not math.isfinite(value):
        return "must be a finite number"
    if field.minimum is not None and value < field.minimum:
        return f"must be at least {number_text(field.minimum)}"
    if field.maximum is not None and value > field.maximum:
        return f"must be at most {number_text(field.maximum)}"
    return None


def _choice_problem(field: FormField, value: object) -> str | None:
    if not isinstance(value, str):
        return f"must be a string, got {_type_name(value)}"
    if not any(choice.value == value for choice in field.choices):
        return f"{_quoted(value)} is not one of {_offered(field)}"
    return None


def _choices_problem(field: FormField, value: object) -> str | None:
    if not isinstance(value, list):
        return f"must be an array, got {_type_name(value)}"
    offered = {choice.value for choice in field.choices}
    seen: set[str] = set()
    for index, item in enumerate(value):
        if not isinstance(item, str):
            return f"[{index}]: must be a string, got {_type_name(item)}"
        if item not in offered:
            return f"[{index}]: {_quoted(item)} is not one of {_offered(field)}"
        if item in seen:
            return f"[{index}]: {_quoted(item)} is chosen more than once"
        seen.add(item)
    if field.min_items is not None and len(value) < field.min_items:
        return f"must hold at least {field.min_items} {_plural(field.min_items, 'choice')}"
    if field.max_items is not None and len(value) > field.max_items:
        return f"must hold at most {field.max_items} {_plural(field.max_items, 'choice')}"
    return None


def _hint(field: FormField) -> str:
    if field.kind == "boolean":
        return "Yes or no."
    if field.kind in ("choice", "choices"):
        if field.kind == "choice":
            return "One of the choices."
        chosen = _between("Choose", field.min_items, field.max_items, "choice")
        return f"{chosen}." if chosen else "Choose any of the choices."
    if field.kind == "string":
        parts = {"email": "An email address", "uri": "A URI", "date": "A date (2025-06-03)"}
        text = parts.get(field.format or "", "")
        if field.format == "date-time":
            text = "A date and time (2025-06-03T14:12:00Z)"
        length = _between("", field.min_length, field.max_length, "character").strip()
        if not text:
            return f"A text of {length}." if length else "A text."
        return f"{text}." if not length else f"{text} of {length}."
    what = "A whole number" if field.kind == "integer" else "A number"
    low, high = field.minimum, field.maximum
    if low is not None and high is not None:
        return f"{what} from {number_text(low)} to {number_text(high)}."
    if low is not None:
        return f"{what} of at least {number_text(low)}."
    if high is not None:
        return f"{what} of at most {number_text(high)}."
    return f"{what}."


def _between(verb: str, low: int | None, high: int | None, unit: str) -> str:
    if low is not None and high is not None:
        if low == high:
            return f"{verb} exactly {low} {_plural(low, unit)}"
        return f"{verb} {low} to {high} {_plural(high, unit)}"
    if low is not None:
        return f"{verb} at least {low} {_plural(low, unit)}"
    if high is not None:
        return f"{verb} at most {high} {_plural(high, unit)}"
    return ""


# -- words -------------------------------------------------------------------------------------


def _at(place: str, problem: str) -> str:
    """`problem` said of `place`; a problem of one item (`[1]: ...`) names it."""
    return f"{place}{problem}" if problem.startswith("[") else f"{place}: {problem}"


def _plural(count: int, word: str) -> str:
    return word if count == 1 else f"{word}s"


def _offered(field: FormField) -> str:
    values = [_quoted(choice.value) for choice in field.choices[:_SHOWN_CHOICES]]
    more = len(field.choices) - _SHOWN_CHOICES
    return ", ".join(values) + (f" (and {more} more)" if more > 0 else "")


def _listed(values: Iterator[str] | Mapping[str, Any] | Sequence[str]) -> str:
    return ", ".join(_quoted(value) for value in values)


def _quoted(value: str) -> str:
    """A text as the messages quote it: JSON, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False)


def _shown(value: object) -> str:
    return _quoted(value) if isinstance(value, str) else _type_name(value)


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
