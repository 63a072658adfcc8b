"""Asking our questions through an MCP client's elicitation: in flight, or by resolver rounds.

Extra `mcp`. Code running inside an MCP tool call asks its client's user through form elicitation
(`bridges._form` builds the form). The SDK offers two ways, one per protocol era:

- `ElicitationProvider(ctx)`: a `UserQuestionProvider` that sends `elicitation/create` in the
  middle of the call. Only connections on protocol <= 2025-11-25 carry server-to-client requests
  mid-call; on a 2026-07-28 connection it fails with `ELICITATION_UNSUPPORTED`.
- `QuestionForm(questions)`: questions known before the tool body runs, asked by a resolver
  (`Annotated[..., Resolve(fn)]` returning `form.elicit()`). The SDK sends it in flight on legacy
  connections and as an input-required round on 2026-07-28 ones; `form.answer(outcome)` reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.server.elicitation import AcceptedElicitation, CancelledElicitation, DeclinedElicitation
from mcp.server.mcpserver import Context as MCPContext
from mcp.server.mcpserver import Elicit
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field, WithJsonSchema, create_model

from user_questions._checks import cancelled_error
from user_questions.bridges._form import Form, build_form
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.service import AskUserQuestionRequest
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = ["ElicitationProvider", "QuestionForm"]

ElicitationOutcome = AcceptedElicitation[Any] | DeclinedElicitation | CancelledElicitation


class ElicitationProvider:
    """A provider that asks through the elicitation of the MCP client of the current tool call.

    Build one per call from the call's context (`mcp.server.mcpserver.Context` in an `MCPServer`
    tool, or the low-level `ServerRequestContext`). The whole batch is one form; `decline` and
    `cancel` raise `ASK_CANCELLED`. Cancelling the ask abandons the elicitation request, and the
    SDK tells the client so (`notifications/cancelled`).
    """

    def __init__(self, context: MCPContext[Any, Any] | ServerRequestContext[Any, Any]) -> None:
        if isinstance(context, MCPContext):
            self._session = context.session
            self._request_id: mcp_types.RequestId | None = context.request_context.request_id
        else:
            self._session = context.session
            self._request_id = context.request_id

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Ask every question of `request` in one form and wait for the client's result.

        Raises:
            UserQuestionError: `ELICITATION_UNSUPPORTED` when the client declared no form
                elicitation, the connection carries no server-to-client request (protocol
                2026-07-28: ask through `QuestionForm` instead), or the client answered the
                request with an error; `ASK_CANCELLED` on decline or cancel; `BAD_ANSWER` when
                the accepted content does not fit the form.
        """
        form = build_form(request.questions, other_choice=False, option_descriptions=False)
        self._check_capability()
        try:
            result = await self._session.elicit_form(
                form.message, form.schema, related_request_id=self._request_id
            )
        except MCPError as error:
            raise UserQuestionError(
                f"the MCP client could not show the questions: {error.message}",
                ErrorCode.ELICITATION_UNSUPPORTED,
                cause=error,
            ) from error
        if result.action != "accept":
            raise cancelled_error()
        return form.answer(result.content)

    def _check_capability(self) -> None:
        capabilities = self._session.client_capabilities
        elicitation = capabilities.elicitation if capabilities is not None else None
        # A bare `elicitation: {}` predates modes and means form support; url-only does not.
        if elicitation is None or (elicitation.form is None and elicitation.url is not None):
            raise UserQuestionError(
                "the MCP client did not declare form elicitation, so it cannot be asked questions",
                ErrorCode.ELICITATION_UNSUPPORTED,
            )
        if not self._session.can_send_request:
            raise UserQuestionError(
                f"this MCP connection (protocol {self._session.protocol_version}) carries no "
                "request to the client during a tool call; ask through "
                "user_questions.bridges.mcp.QuestionForm in a Resolve resolver instead",
                ErrorCode.ELICITATION_UNSUPPORTED,
            )


class QuestionForm:
    """Questions asked by an MCP resolver, on either protocol era.

    `elicit()` is what a resolver returns; the SDK asks the form (in flight on <= 2025-11-25, as
    an input-required round on 2026-07-28) and injects the outcome, which `answer()` turns into
    our answer. Declare the tool parameter as `Annotated[ElicitationResult[BaseModel],
    Resolve(fn)]` so a decline reaches `answer()` (and becomes `ASK_CANCELLED`) rather than
    failing the call inside the SDK. The form renders identically every round, as the SDK needs.
    """

    def __init__(self, questions: Sequence[AskUserQuestionItem]) -> None:
        self._form: Form = build_form(questions, other_choice=False, option_descriptions=False)
        self.model: type[BaseModel] = _model_of(self._form)
        """The generated model whose elicitation schema is exactly `schema`."""

    @property
    def message(self) -> str:
        """The message shown above the form."""
        return self._form.message

    @property
    def schema(self) -> dict[str, Any]:
        """The form's `requestedSchema`."""
        return self._form.schema

    def elicit(self) -> Elicit[BaseModel]:
        """The request marker a resolver returns to ask this form."""
        return Elicit(self._form.message, self.model)

    def answer(self, outcome: ElicitationOutcome | BaseModel) -> AskUserQuestionAnswer:
        """Our answer from the resolver's outcome (or from the unwrapped accepted model).

        Raises:
            UserQuestionError: `ASK_CANCELLED` for a decline or cancel; `BAD_ANSWER` when the
                content does not fit the form.
        """
        if isinstance(outcome, DeclinedElicitation | CancelledElicitation):
            raise cancelled_error()
        data = outcome.data if isinstance(outcome, AcceptedElicitation) else outcome
        if not isinstance(data, BaseModel):
            raise TypeError(f"expected the form's model, got {type(data).__name__}")
        return self._form.answer(data.model_dump(by_alias=True, exclude_none=True))


_KINDS: dict[str, Any] = {
    "array": list[str] | None,
    "integer": int | None,
    "number": int | float | None,
    "boolean": bool | None,
}
"""The Python type a field's content takes, so that a value keeps its type (3 stays 3)."""


def _model_of(form: Form) -> type[BaseModel]:
    """A model whose properties render exactly as the form's; the form itself checks values."""
    fields: dict[str, Any] = {}
    required = set(form.schema.get("required") or ())
    for index, (key, schema) in enumerate(form.schema["properties"].items()):
        kind: Any = _KINDS.get(schema["type"], str | None)
        default = ... if key in required else schema.get("default")
        fields[f"field_{index}"] = (
            Annotated[kind, WithJsonSchema(schema)],
            Field(default=default, alias=key, title=schema.get("title")),
        )
    model: type[BaseModel] = create_model("Questions", **fields)
    return model
