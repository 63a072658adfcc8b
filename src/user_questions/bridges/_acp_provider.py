"""`AcpProvider`: a Python ACP agent asks the person at its client (an editor such as Zed).

Extra `acp`. An agent built on the SDK holds the client's connection (the `AgentSideConnection` its
`on_connect` receives) and the capabilities the client sent in `initialize`. The provider asks
through what the client can show:

- the client advertised form elicitation (`clientCapabilities.elicitation.form`): the whole batch
  is one `elicitation/create` form (`bridges._acp_form`), answered all at once;
- otherwise one `session/request_permission` per question, in order: the question is the tool
  call's title, its header, detail and option descriptions are the tool call's markdown content,
  and its options are the permission options (a plan review's approve option `allow_once`, the
  others `reject_once`; an ordinary question's options are all `allow_once`). A permission
  request carries one choice among options, nothing else, so a batch with a multi-select or a
  free-text question fails with `ELICITATION_UNSUPPORTED` before anything is shown.

A declined or cancelled form and a `cancelled` permission outcome are `ASK_CANCELLED`. ACP v1 has
no way to take one request back from the client: cancelling the ask stops waiting (the SDK drops
the late reply), and the client's prompt stays until the person answers it there or the prompt
turn is cancelled (`session/cancel`, after which the client must answer every pending permission
request with `cancelled`). A reply the SDK cannot read is `BAD_ANSWER`.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence
from typing import Literal

import anyio
from acp import Client, RequestError
from acp.helpers import start_tool_call, text_block, tool_content, update_tool_call
from acp.schema import (
    ClientCapabilities,
    DeniedOutcome,
    ElicitationFormSessionMode,
    ElicitationSchema,
    PermissionOption,
    PermissionOptionKind,
    ToolCallUpdate,
)
from pydantic import ValidationError

from user_questions._checks import cancelled_error, check_request, quoted
from user_questions._reading.wire import describe_validation_error
from user_questions.bridges._acp_form import answer_from_elicitation, questions_to_elicitation
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.service import AskUserQuestionRequest
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    PlanReviewIntent,
)

__all__ = ["AcpProvider"]

STATUS_SECONDS = 5.0
"""How long a cancelled ask may take to mark the tool call it started as failed."""


class AcpProvider:
    """A `UserQuestionProvider` asking the client of an ACP session.

    Args:
        connection: The agent's connection to its client (`AgentSideConnection`, an `acp.Client`).
        session_id: The session whose person is asked.
        capabilities: What the client sent in `initialize`; without form elicitation there, the
            questions go as permission requests.
        tool_call_id: The tool call the questions belong to (say the model's call of
            `ask_user_question`). Without one, a permission request gets a tool call of its own,
            reported to the client before it is asked and marked completed or failed after.
    """

    def __init__(
        self,
        connection: Client,
        session_id: str,
        *,
        capabilities: ClientCapabilities | None = None,
        tool_call_id: str | None = None,
    ) -> None:
        self._connection = connection
        self._session_id = session_id
        elicitation = capabilities.elicitation if capabilities is not None else None
        self._form = elicitation is not None and elicitation.form is not None
        self._tool_call_id = tool_call_id

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        """Ask every question of `request` and wait for the client's answer.

        Raises:
            UserQuestionError: `ASK_CANCELLED` when the person declined or cancelled;
                `ELICITATION_UNSUPPORTED` when the client cannot show the batch (no form
                elicitation and a question a permission request cannot carry, or the client
                refused the form); `BAD_ANSWER` for a reply that does not fit the questions.
        """
        if self._form:
            return await self._elicit(request.questions)
        _check_permissions(request.questions)
        return await self._ask_permissions(request.questions)

    async def _elicit(self, questions: Sequence[AskUserQuestionItem]) -> AskUserQuestionAnswer:
        params = questions_to_elicitation(questions)
        mode = ElicitationFormSessionMode(
            session_id=self._session_id,
            tool_call_id=self._tool_call_id,
            requested_schema=ElicitationSchema.model_validate(params["requestedSchema"]),
        )
        try:
            response = await self._connection.create_elicitation(params["message"], mode)
        except RequestError as error:
            raise UserQuestionError(
                f"the ACP client could not show the questions: {error}",
                ErrorCode.ELICITATION_UNSUPPORTED,
                cause=error,
            ) from error
        except ValidationError as error:
            raise _malformed(error) from None
        return answer_from_elicitation(
            questions, response.model_dump(mode="json", by_alias=True, exclude_none=True)
        )

    async def _ask_permissions(
        self, questions: Sequence[AskUserQuestionItem]
    ) -> AskUserQuestionAnswer:
        tool_call_id = self._tool_call_id or f"ask-{uuid.uuid4().hex}"
        if self._tool_call_id is None:
            title = questions[0].question
            start = start_tool_call(tool_call_id, title, kind="other", status="pending")
            await self._connection.session_update(self._session_id, start)
        try:
            items = [await self._permit(tool_call_id, question) for question in questions]
        except BaseException:
            if self._tool_call_id is None:
                await self._finish(tool_call_id, "failed")
            raise
        if self._tool_call_id is None:
            await self._finish(tool_call_id, "completed")
        return AskUserQuestionAnswer(answers=items)

    async def _finish(self, tool_call_id: str, status: Literal["completed", "failed"]) -> None:
        """Mark the tool call this provider started; even when the ask is being cancelled, and
        never in the way of the answer (or the error) when the connection is gone."""
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(STATUS_SECONDS),
            contextlib.suppress(ConnectionError),
        ):
            update = update_tool_call(tool_call_id, status=status)
            await self._connection.session_update(self._session_id, update)

    async def _permit(
        self, tool_call_id: str, question: AskUserQuestionItem
    ) -> AskUserQuestionAnswerItem:
        options = question.options or ()
        labels = {str(index): option.label for index, option in enumerate(options)}
        kinds = _kinds(question)
        content = _content(question)
        tool_call = ToolCallUpdate(
            tool_call_id=tool_call_id,
            title=question.question,
            content=[tool_content(text_block(content))] if content else None,
        )
        offered = [
            PermissionOption(option_id=option_id, name=label, kind=kinds[label])
            for option_id, label in labels.items()
        ]
        try:
            response = await self._connection.request_permission(
                self._session_id, tool_call, offered
            )
        except ValidationError as error:
            raise _malformed(error) from None
        outcome = response.outcome
        if isinstance(outcome, DeniedOutcome):
            raise cancelled_error()
        label = labels.get(outcome.option_id)
        if label is None:
            raise UserQuestionError(
                f"provider answer for question {question.id}: the ACP client chose the option "
                f"id {quoted(outcome.option_id)}, which was not offered",
                ErrorCode.BAD_ANSWER,
            )
        return AskUserQuestionAnswerItem(id=question.id, selected=[label])


def _malformed(error: ValidationError) -> UserQuestionError:
    return UserQuestionError(
        f"provider answer from the ACP client is malformed: {describe_validation_error(error)}",
        ErrorCode.BAD_ANSWER,
    )


def _check_permissions(questions: Sequence[AskUserQuestionItem]) -> None:
    """Refuse, before anything is shown, a batch that permission requests cannot carry."""
    check_request(questions, None, None, None)
    for question in questions:
        what = None
        if not question.options:
            what = "asks for free text"
        elif question.multi_select:
            what = "is multi-select"
        if what is not None:
            raise UserQuestionError(
                f"question {question.id} {what}, which an ACP permission request cannot carry, "
                "and the client did not advertise form elicitation",
                ErrorCode.ELICITATION_UNSUPPORTED,
            )


def _kinds(question: AskUserQuestionItem) -> dict[str, PermissionOptionKind]:
    options = question.options or ()
    intent = question.intent
    if isinstance(intent, PlanReviewIntent):
        return {
            option.label: "allow_once" if option.label == intent.approve else "reject_once"
            for option in options
        }
    return {option.label: "allow_once" for option in options}


def _content(question: AskUserQuestionItem) -> str:
    """The tool call's markdown: header, detail, then the options' descriptions."""
    parts = [f"**{question.header}**"] if question.header else []
    if question.detail:
        parts.append(question.detail)
    described = [
        f"- **{option.label}**: {option.description}"
        for option in question.options or ()
        if option.description
    ]
    if described:
        parts.append("\n".join(described))
    return "\n\n".join(parts)
