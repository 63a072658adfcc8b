"""`elicitation_handler(provider)`: a harness acting as an MCP client answers elicitations.

Level 9, extra `mcp`. Pass the handler as the SDK client's `elicitation_callback`; each form
request a server sends becomes one batch of our questions (`bridges._mcp_fields`) answered by
any provider (the terminal, a host through `RemoteProvider`, `ctx.user_questions` itself), and
the answer goes back as `accept` with typed content, `decline` or `cancel`:

- every field answered or skipped, the values valid: `accept`, with the skipped optional fields
  left out of `content` (the server applies its own defaults);
- a required field skipped: `decline`, since the user chose not to give what was asked;
- dismissed, aborted or timed out (`ASK_CANCELLED`, `ASK_ABORTED`, `ASK_TIMED_OUT`): `cancel`;
- a value that does not fit its field (a word for a number, a number out of range, text for a
  select): only those fields are asked again, saying what was wrong, up to `MAX_ATTEMPTS` rounds
  in all; still wrong after that: `cancel`. No value is ever made up;
- a field this client cannot ask, or more than `MAX_FIELDS` of them: an `INVALID_PARAMS` error,
  so the server knows the client failed rather than the user declining.

A URL-mode request asks for consent to open the address: the question shows the URL, and
`Open it` accepts (the user opens the address themselves), `Decline` declines.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

import mcp_types
from mcp.client.session import ClientRequestContext, ElicitationFnT

from user_questions._checks import check_answer, check_request
from user_questions.bridges._mcp_fields import (
    SKIPPED,
    FieldQuestion,
    Problem,
    Unsupported,
    form_fields,
)
from user_questions.errors import ErrorCode, HarnessError
from user_questions.service import AskUserQuestionRequest, UserQuestionProvider
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem, AskUserQuestionOption

__all__ = ["MAX_ATTEMPTS", "MAX_FIELDS", "OPEN", "DECLINE", "elicitation_handler"]

MAX_ATTEMPTS = 3
"""Rounds of asking one form: the first, then re-asks of the fields whose answer did not fit."""
MAX_FIELDS = 64
"""The most fields one form may hold."""
OPEN, DECLINE = "Open it", "Decline"
_GIVE_UP = (ErrorCode.ASK_CANCELLED, ErrorCode.ASK_ABORTED, ErrorCode.ASK_TIMED_OUT)
_URL_ID = "open-url"


def elicitation_handler(
    provider: UserQuestionProvider, *, max_attempts: int = MAX_ATTEMPTS
) -> ElicitationFnT:
    """An `elicitation_callback` for `mcp.Client` that asks through `provider`.

    A provider error other than a dismissal, an abort or a timeout (say `BAD_ANSWER`) reaches
    the server as an `INTERNAL_ERROR` naming its code; any other exception propagates.
    """

    async def elicit(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            return await _consent(provider, params)
        try:
            fields = form_fields(params.message, params.requested_schema)
            if len(fields) > MAX_FIELDS:
                raise Unsupported(f"the form has {len(fields)} fields; at most {MAX_FIELDS}")
            if not fields:
                return mcp_types.ElicitResult(action="accept", content={})
        except Unsupported as error:
            return mcp_types.ErrorData(code=mcp_types.INVALID_PARAMS, message=str(error))
        return await _fill(provider, fields, max_attempts)

    return elicit


async def _fill(
    provider: UserQuestionProvider, fields: Sequence[FieldQuestion], max_attempts: int
) -> mcp_types.ElicitResult | mcp_types.ErrorData:
    content: dict[str, str | int | float | bool | list[str] | None] = {}
    pending = {field.key: field.question for field in fields}
    by_key = {field.key: field for field in fields}
    for _ in range(max_attempts):
        answer = await _ask(provider, list(pending.values()))
        if not isinstance(answer, AskUserQuestionAnswer):
            return answer
        problems: dict[str, str] = {}
        for item in answer.answers:
            field = by_key[item.id]
            try:
                value = field.value(item)
            except Problem as problem:
                problems[item.id] = str(problem)
                continue
            if value is SKIPPED:
                if field.required:
                    return mcp_types.ElicitResult(action="decline")
                continue
            content[item.id] = value  # type: ignore[assignment]
        if not problems:
            return mcp_types.ElicitResult(action="accept", content=content)
        pending = {key: by_key[key].retry(problem) for key, problem in problems.items()}
    return mcp_types.ElicitResult(action="cancel")


async def _ask(
    provider: UserQuestionProvider, questions: list[AskUserQuestionItem]
) -> AskUserQuestionAnswer | mcp_types.ElicitResult | mcp_types.ErrorData:
    """The provider's checked answer, or what to reply when there is none."""
    try:
        check_request(questions, None, None, None)
        answer = await provider.ask(AskUserQuestionRequest(questions=questions))
        return check_answer(questions, answer)
    except HarnessError as error:
        if error.code in _GIVE_UP:
            return mcp_types.ElicitResult(action="cancel")
        return mcp_types.ErrorData(
            code=mcp_types.INTERNAL_ERROR, message=f"{error.code}: {error.message}"
        )


async def _consent(
    provider: UserQuestionProvider, params: mcp_types.ElicitRequestURLParams
) -> mcp_types.ElicitResult | mcp_types.ErrorData:
    host = _host_of(params.url)
    question = AskUserQuestionItem(
        id=_URL_ID,
        question=params.message or f"Open {host}?",
        header=f"Open {host}",
        detail=f"The server asks you to open this address in your browser:\n\n{params.url}",
        options=[AskUserQuestionOption(label=OPEN), AskUserQuestionOption(label=DECLINE)],
    )
    answer = await _ask(provider, [question])
    if not isinstance(answer, AskUserQuestionAnswer):
        return answer
    selected = answer.answers[0].selected
    if selected == [OPEN]:
        return mcp_types.ElicitResult(action="accept")
    if selected == [DECLINE]:
        return mcp_types.ElicitResult(action="decline")
    return mcp_types.ElicitResult(action="cancel")


def _host_of(url: str) -> str:
    return urlsplit(url).netloc or url
