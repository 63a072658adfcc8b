"""Reading wire JSON from outside (a file, stdin, a socket) into models, with one-line errors.

Every place that reads the vocabulary from outside the process goes through here, so a wrong type
anywhere is reported the same way: one line that names the field, never a traceback. JSON text is
read by `read_json` (within the bounds of `json_reader.load_json`: nesting depth, lone surrogates,
`NaN`), so a document too deep or holding a lone surrogate is refused with the same code as any
other malformed one.

A frame (`user_questions.frames`) carries the vocabulary, an ask's questions or a page's answer,
and is read with it, once; a problem inside them is still told as reading them alone tells it
(`frame_refusal`), so that what a sender is told does not depend on where the document travels.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from user_questions._reading.json_reader import JSONRefused, load_json
from user_questions._reading.json_schema import json_type_name
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem, WireModel

__all__ = [
    "describe_validation_error",
    "frame_refusal",
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
    return _problem(first, first["loc"])


def _problem(first: ErrorDetails, loc: Sequence[int | str]) -> str:
    """One problem, as one line naming the property at `loc`."""
    path, kind, value = _path(loc), first["type"], first.get("input")
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


def _carried(loc: Sequence[int | str]) -> tuple[str, str, Sequence[int | str]] | None:
    """The vocabulary document of a frame that a problem at `loc` lies inside: what it is, its
    code, and the problem's place in it; `None` for a problem of the frame's own.

    In a frame, `questions` are always `AskUserQuestionItem`s, read as a request's
    (`{"questions": [...]}`, `parse_questions`), and `answer` is always an
    `AskUserQuestionAnswer`, read on its own (`parse_answer`); tests/test_frames.py checks that
    every frame keeps to it. A question or an answer that is not an object at all is the frame's
    own problem, as it was when frames held them as JSON objects.
    """
    for index, part in enumerate(loc):
        if part == "questions" and len(loc) > index + 2:
            return "request", ErrorCode.BAD_REQUEST, loc[index:]
        if part == "answer" and len(loc) > index + 1:
            return "answer", ErrorCode.BAD_ANSWER, loc[index + 1 :]
    return None


def frame_refusal(error: ValidationError, *, what: str) -> UserQuestionError:
    """What a frame that broke its model is refused with.

    Its own first problem comes first: `invalid <what>: …` (`BAD_REQUEST`). Failing one, the first
    problem inside the questions or the answer it carries, told as reading those alone tells it:
    `invalid request: …` (`BAD_REQUEST`) or `invalid answer: …` (`BAD_ANSWER`).
    """
    problems = error.errors(include_url=False)
    for problem in problems:
        if _carried(problem["loc"]) is None:
            message = f"invalid {what}: {_problem(problem, problem['loc'])}"
            return UserQuestionError(message, ErrorCode.BAD_REQUEST)
    carried = _carried(problems[0]["loc"])
    assert carried is not None
    inside, inside_code, loc = carried
    return UserQuestionError(f"invalid {inside}: {_problem(problems[0], loc)}", inside_code)


def read_json(text: str | bytes, *, what: str, code: str) -> Any:
    """The JSON document in `text`, read within the bounds of `json_reader.load_json`.

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
