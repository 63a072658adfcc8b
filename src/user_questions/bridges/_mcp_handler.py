"""`elicitation_handler(provider)`: a harness acting as an MCP client answers elicitations.

Extra `mcp`. Pass the handler as the SDK client's `elicitation_callback`; each form request a server
sends becomes one batch of our questions (`bridges._form_fields`) answered by any provider (the
terminal, a host through `RemoteProvider`, `ctx.user_questions` itself), and the answer goes back as
`accept` with typed content, `decline` or `cancel`:

- every field answered or skipped, the values valid: `accept`, with the skipped optional fields
  left out of `content` (the server applies its own defaults);
- a required field skipped: `decline`, since the user chose not to give what was asked;
- dismissed, aborted or timed out (`ASK_CANCELLED`, `ASK_ABORTED`, `ASK_TIMED_OUT`): `cancel`;
- a value that does not fit its field (a word for a number, a number out of range, text for a
  select): only those fields are asked again, saying what was wrong, up to `MAX_ATTEMPTS` rounds
  in all; still wrong after that: `cancel`. No value is ever made up;
- a field this client cannot ask, or more than `MAX_FIELDS` of them: an `INVALID_PARAMS` error,
  so the server knows the client failed rather than the user declining.

With `forms=True`, for a provider that shows a form itself (a host's page through
`RemoteProvider`), a request whose schema is a form this package can ask (`_reading.forms`) is
asked as one question carrying that schema, and its value goes back as the content as it came:
an integer stays an integer, a boolean a boolean, a multi-choice an array; skipped: `decline`.
Other schemas are asked field by field as above.

A URL-mode request asks for consent to open the address: the question shows the URL, and
`Open it` accepts (the user opens the address themselves), `Decline` declines.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import mcp_types
from mcp.client.session import ClientRequestContext, ElicitationFnT

from user_questions._reading.forms import schema_problem
from user_questions.bridges._form_fields import (
    MAX_ATTEMPTS,
    Filled,
    Unfilled,
    Unsupported,
    ask_checked,
    fill_form,
    form_fields,
)
from user_questions.errors import HarnessError
from user_questions.service import UserQuestionProvider
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

__all__ = ["DECLINE", "OPEN", "elicitation_handler"]

OPEN, DECLINE = "Open it", "Decline"
_URL_ID = "open-url"
_FORM_ID = "form"


def elicitation_handler(
    provider: UserQuestionProvider, *, max_attempts: int = MAX_ATTEMPTS, forms: bool = False
) -> ElicitationFnT:
    """An `elicitation_callback` for `mcp.Client` that asks through `provider`; with `forms`,
    a form whole, as one question with its schema (the provider shows forms).

    A provider error other than a dismissal, an abort or a timeout (say `BAD_ANSWER`) reaches
    the server as an `INTERNAL_ERROR` naming its code; any other exception propagates.
    """

    async def elicit(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        try:
            if isinstance(params, mcp_types.ElicitRequestURLParams):
                return await _consent(provider, params)
            if forms and schema_problem(params.requested_schema) is None:
                return await _whole_form(provider, params)
            fields = form_fields(params.message, params.requested_schema)
            outcome = await fill_form(provider, fields, max_attempts)
        except Unsupported as error:
            return mcp_types.ErrorData(code=mcp_types.INVALID_PARAMS, message=str(error))
        except HarnessError as error:
            return mcp_types.ErrorData(
                code=mcp_types.INTERNAL_ERROR, message=f"{error.code}: {error.message}"
            )
        if isinstance(outcome, Filled):
            return mcp_types.ElicitResult(action="accept", content=outcome.content)
        return mcp_types.ElicitResult(action=outcome.action)

    return elicit


async def _consent(
    provider: UserQuestionProvider, params: mcp_types.ElicitRequestURLParams
) -> mcp_types.ElicitResult:
    host = _host_of(params.url)
    question = AskUserQuestionItem(
        id=_URL_ID,
        question=params.message or f"Open {host}?",
        header=f"Open {host}",
        detail=f"The server asks you to open this address in your browser:\n\n{params.url}",
        options=[AskUserQuestionOption(label=OPEN), AskUserQuestionOption(label=DECLINE)],
    )
    answer = await ask_checked(provider, [question])
    selected = [] if isinstance(answer, Unfilled) else answer.answers[0].selected
    if selected == [OPEN]:
        return mcp_types.ElicitResult(action="accept")
    if selected == [DECLINE]:
        return mcp_types.ElicitResult(action="decline")
    return mcp_types.ElicitResult(action="cancel")


async def _whole_form(
    provider: UserQuestionProvider, params: mcp_types.ElicitRequestFormParams
) -> mcp_types.ElicitResult:
    """The form asked as one question with its schema; its value is the content."""
    question = AskUserQuestionItem.model_validate(
        {
            "id": _FORM_ID,
            "question": params.message or "The server asks:",
            "schema": params.requested_schema,
        }
    )
    answer = await ask_checked(provider, [question])
    if isinstance(answer, Unfilled):
        return mcp_types.ElicitResult(action=answer.action)
    value = answer.answers[0].value
    if value is None:
        return mcp_types.ElicitResult(action="decline")
    return mcp_types.ElicitResult(action="accept", content=value)


def _host_of(url: str) -> str:
    return urlsplit(url).netloc or url
