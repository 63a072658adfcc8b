"""ACP form elicitation as plain JSON: a whole batch of questions as one form, and back.

Pure mapping over `bridges._form`; no dependency, so it serves an agent that speaks ACP with any
library. `elicitation/create` (form mode) takes MCP's restricted JSON Schema, whose select entries
in ACP carry a `description` of their own (`EnumOption`):

    params = {"sessionId": session_id, **questions_to_elicitation(questions)}
    response = await connection.request("elicitation/create", params)
    answer = answer_from_elicitation(questions, response)

The form has one property per question, named by the question's id. A question with options is a
select whose last entry is an explicit "Other" (`const` `__other__`), with a companion free-text
property `<id>.other`; an optionless question is one string property. Nothing is required: an
empty property skips its question. `AcpProvider` sends exactly this form through the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from user_questions._checks import cancelled_error, quoted
from user_questions.bridges._form import build_form
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = ["answer_from_elicitation", "questions_to_elicitation"]


def questions_to_elicitation(questions: Sequence[AskUserQuestionItem]) -> dict[str, Any]:
    """The form-mode `elicitation/create` params asking `questions`: `mode`, `message` and
    `requestedSchema`.

    Raises:
        UserQuestionError: `EMPTY_QUESTIONS`, `BAD_INTENT` or `BAD_QUESTION`, as `ask()` would.
    """
    form = build_form(questions, other_choice=True, option_descriptions=True)
    return {"mode": "form", "message": form.message, "requestedSchema": form.schema}


def answer_from_elicitation(
    questions: Sequence[AskUserQuestionItem], response: Mapping[str, Any]
) -> AskUserQuestionAnswer:
    """The answer in the client's result `{"action", "content"}` to the form of `questions`.

    "Other" chosen without any text skips the question, as does an empty property; text typed
    into `<id>.other` replaces a single-select choice and joins multi-select ones.

    Raises:
        UserQuestionError: `ASK_CANCELLED` when the user declined or cancelled the form;
            `BAD_ANSWER` when the result is malformed or names no option.
    """
    form = build_form(questions, other_choice=True, option_descriptions=True)
    action = response.get("action")
    if action in ("decline", "cancel"):
        raise cancelled_error()
    if action != "accept":
        shown = quoted(action) if isinstance(action, str) else "missing"
        raise UserQuestionError(
            f"provider answer has the elicitation action {shown}; expected accept, decline or "
            "cancel",
            ErrorCode.BAD_ANSWER,
        )
    content = response.get("content")
    if content is not None and not isinstance(content, Mapping):
        raise UserQuestionError(
            "provider answer has an elicitation content that is not an object",
            ErrorCode.BAD_ANSWER,
        )
    return form.answer(content)
