"""JSON text from outside the process, read with bounds: the package's one JSON reader.

`json.loads` accepts documents that no peer needs to send and that the rest of the package could not
keep; `load_json` refuses them with a `JSONRefused` (a `ValueError`) whose one-line message says
what and where:

- nesting deeper than `MAX_JSON_DEPTH` arrays and objects (`json.loads` itself raises
  `RecursionError` on deep enough input, and so would any code walking the result);
- a lone UTF-16 surrogate anywhere (`"\\ud800"`): JSON can spell it, but it is not text, and no
  socket, file or database can take it; the message names the property that holds it;
- `NaN`, `Infinity` and `-Infinity`, which are not JSON; bytes that are not UTF-8; a byte order
  mark before the document (which JSON text sent over a network must not have).

What it keeps of `json.loads`: a key given twice counts once, with its last value (as pydantic
reads it too), and an integer has at most 4,300 digits (Python's limit). The checks cost nothing
for ordinary documents: the result is walked only when the text could break a bound.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from user_questions._reading.text import lone_surrogate, surrogate_problem

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_JSON_DEPTH", "JSONRefused", "load_json", "path_text"]

MAX_JSON_DEPTH = 64
"""Arrays and objects nested in one another in a document from outside; the deepest the wire
vocabulary needs is 7."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
"""How JSON text spells a UTF-16 surrogate: the only way one can reach a parsed string."""

Path = Sequence[str | int]


class JSONRefused(ValueError):
    """Raised by `load_json` with a one-line description of what is wrong with the document;
    `document` is the document when it was read but breaks a bound (too deep, a surrogate), so
    that a protocol can still answer the request it names."""

    def __init__(self, problem: str, document: Any = None) -> None:
        super().__init__(problem)
        self.document = document


def path_text(path: Path) -> str:
    """A place in a document as messages name it: `questions[0].options[1].label`."""
    spelled = ""
    for part in path:
        if isinstance(part, int):
            spelled += f"[{part}]"
        else:
            spelled = f"{spelled}.{part}" if spelled else part
    return spelled


def load_json(text: str | bytes) -> Any:
    """The JSON document in `text` (bytes must be UTF-8).

    Raises:
        JSONRefused: `not valid JSON (...)`, `nested deeper than 64 levels`, or
            `property "a.b" holds a lone surrogate (U+D800), which is not text`.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise JSONRefused(f"not valid JSON (not UTF-8: {error.reason})") from None
    if text.startswith("\ufeff"):
        raise JSONRefused("not valid JSON (it begins with a byte order mark, U+FEFF)")
    try:
        document = _DECODER.decode(text)
    except RecursionError:
        raise JSONRefused(_TOO_DEEP) from None
    except ValueError as error:
        raise JSONRefused(f"not valid JSON ({error})") from None
    deep = text.count("[") + text.count("{") > MAX_JSON_DEPTH
    surrogates = bool(_SURROGATE_ESCAPE.search(text)) or lone_surrogate(text) is not None
    if deep or surrogates:
        try:
            _walk(document, surrogates)
        except JSONRefused as refused:
            raise JSONRefused(str(refused), document) from None
    return document


_TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels"


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not a JSON value")


_DECODER = json.JSONDecoder(parse_constant=_not_json)
"""Made once, and shared as `json.loads` shares its default one: given any option, `json.loads`
makes a decoder on every call, a third of the time it took to read a page's answer frame."""


def _walk(document: Any, surrogates: bool) -> None:
    """Refuse the first place, in document order, that nests too deep or holds a surrogate."""
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(document, (), 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth >= MAX_JSON_DEPTH:
                raise JSONRefused(_TOO_DEEP)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            children = []
            for key, item in items:
                problem = surrogates and isinstance(key, str) and surrogate_problem(key)
                if problem:
                    raise JSONRefused(f"a property name in {_where(path)} {problem}")
                children.append((item, (*path, key), depth + 1))
            stack.extend(reversed(children))
        elif surrogates and isinstance(value, str):
            problem = surrogate_problem(value)
            if problem:
                raise JSONRefused(f"{_where(path)} {problem}")


def _where(path: Path) -> str:
    return f'property "{path_text(path)}"' if path else "the document"
