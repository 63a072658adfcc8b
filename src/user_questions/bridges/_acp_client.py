"""An ACP agent's questions to its client, answered by a person through any of our providers.

Extra `acp`. Two requests of an agent ask its client's person something:

- `session/request_permission` becomes one single-select question: the tool kind as header, the
  tool call's title as the question, its content (text, diffs, terminals), locations and raw
  input as markdown detail, and each permission option as an option (its name as label, its kind
  said in its description). The chosen option goes back as `selected` with its option id; a skip,
  a dismissal, an abort, a timeout or an answer that names no option after `MAX_ATTEMPTS` rounds
  is `cancelled`.
- `elicitation/create` in form mode becomes one question per field (`bridges._form_fields`, the
  same reading as MCP's `elicitation_handler`; ACP's select entries may carry a description, which
  becomes the option's). It goes back as `accept` with typed content, `decline` (a required field
  skipped) or `cancel` (dismissed, aborted, timed out). URL mode is not advertised, and refused.

`AcpPrompt` holds one such request as fields, and maps either way: the outcome of asking them to
the agent's result (`result`), and a result another surface gave back to our answer
(`answer_of`), which `uq acp` records when the editor answers first. `acp_client_handlers`
serves both requests for a client built on the SDK, and withdraws what waits on `cancel`.
"""

from __future__ import annotations

import contextlib
import difflib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    ClientCapabilities,
    ContentToolCallContent,
    CreateElicitationResponse,
    CreateFormRequestElicitationRequest,
    CreateFormSessionElicitationRequest,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationFormRequestMode,
    ElicitationFormSessionMode,
    ElicitationMode,
    EmbeddedResourceContentBlock,
    FileEditToolCallContent,
    PermissionOption,
    PermissionOptionKind,
    RequestPermissionRequest,
    RequestPermissionResponse,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
    ToolCallUpdate,
)
from pydantic import TypeAdapter, ValidationError

from user_questions._checks import check_answer
from user_questions.bridges._form_fields import (
    MAX_ATTEMPTS,
    FieldQuestion,
    Filled,
    FormOutcome,
    Unfilled,
    Unsupported,
    fill_form,
    form_fields,
    unique_choices,
)
from user_questions.errors import HarnessError, UserQuestionError
from user_questions.service import UserQuestionProvider
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
)

__all__ = [
    "MAX_RENDERED",
    "PERMISSION_ID",
    "AcpClientHandlers",
    "AcpPrompt",
    "acp_client_handlers",
    "elicitation_prompt",
    "permission_prompt",
    "prompt_of_request",
]

PERMISSION_ID = "permission"
"""The id of the question a permission request becomes."""
MAX_RENDERED = 20_000
"""The most characters of a tool call's content, diffs or raw input shown; the rest is cut."""
KIND_DESCRIPTIONS: dict[PermissionOptionKind, str] = {
    "allow_once": "Allow this time.",
    "allow_always": "Allow, and do not ask again.",
    "reject_once": "Reject this time.",
    "reject_always": "Reject, and do not ask again.",
}
"""What each permission option kind means, shown as the option's description."""

AcpResult = RequestPermissionResponse | CreateElicitationResponse
"""What a client answers an agent's question with."""
EditorAnswer = AskUserQuestionAnswer | Literal["dismissed"] | None
"""A client's result as our vocabulary: an answer, a person's dismissal, or nothing to record."""

_FORM_REQUEST: TypeAdapter[
    CreateFormSessionElicitationRequest | CreateFormRequestElicitationRequest
] = TypeAdapter(CreateFormSessionElicitationRequest | CreateFormRequestElicitationRequest)


@dataclass(frozen=True, slots=True)
class AcpPrompt:
    """One question of an agent to its client's person, as fields asked through a provider."""

    kind: Literal["permission", "elicitation"]
    fields: tuple[FieldQuestion, ...]
    session_id: str | None
    """The session it belongs to; `None` for an elicitation scoped to a request."""

    def result(self, outcome: FormOutcome) -> AcpResult:
        """What the client answers the agent when asking the fields ended with `outcome`."""
        if self.kind == "permission":
            if isinstance(outcome, Filled):
                chosen = outcome.content[PERMISSION_ID]
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=chosen)
                )
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if isinstance(outcome, Filled):
            return AcceptElicitationResponse(action="accept", content=outcome.content)
        if outcome.action == "decline":
            return DeclineElicitationResponse(action="decline")
        return CancelElicitationResponse(action="cancel")

    def answer_of(self, questions: Sequence[AskUserQuestionItem], result: object) -> EditorAnswer:
        """Our answer to `questions` (some or all of the fields' questions) that the client's
        `result` (JSON) gives: `dismissed` for a declined form, `None` when it gives none (a
        cancellation, or a value no answer gives)."""
        if not isinstance(result, Mapping):
            return None
        if self.kind == "permission":
            outcome = result.get("outcome")
            chosen = outcome.get("optionId") if isinstance(outcome, Mapping) else None
            content: object = {PERMISSION_ID: chosen} if isinstance(chosen, str) else None
        elif result.get("action") == "decline":
            return "dismissed"
        elif result.get("action") == "accept":
            content = result.get("content") or {}
        else:
            content = None
        if not isinstance(content, Mapping):
            return None
        by_key = {one.key: one for one in self.fields}
        items = []
        for question in questions:
            item = by_key[question.id].answer_item(content.get(question.id))
            if item is None:
                return None
            items.append(item)
        try:
            return check_answer(questions, AskUserQuestionAnswer(answers=items))
        except UserQuestionError:
            return None


def permission_prompt(
    session_id: str, tool_call: ToolCallUpdate, options: Sequence[PermissionOption]
) -> AcpPrompt:
    """The question a permission request asks: pick one of its options.

    Raises:
        Unsupported: a request without options.
    """
    if not options:
        raise Unsupported("the permission request offers no option")
    choices = unique_choices(
        (option.name or option.option_id, option.option_id, KIND_DESCRIPTIONS.get(option.kind))
        for option in options
    )
    question = AskUserQuestionItem(
        id=PERMISSION_ID,
        question=tool_call.title or "Allow this tool call?",
        header=_header(tool_call),
        detail=_render_tool_call(tool_call) or None,
        options=[
            AskUserQuestionOption(label=label, description=description)
            for label, _, description in choices
        ],
    )
    labels = {label: option_id for label, option_id, _ in choices}
    one = FieldQuestion(PERMISSION_ID, "enum", {}, True, question, labels)
    return AcpPrompt("permission", (one,), session_id)


def elicitation_prompt(message: str, mode: ElicitationMode) -> AcpPrompt:
    """The questions a form elicitation asks, one per field.

    Raises:
        Unsupported: a URL elicitation, or a form this client cannot ask (a field of an
            unknown kind, more than `MAX_FIELDS` fields).
    """
    if not isinstance(mode, ElicitationFormSessionMode | ElicitationFormRequestMode):
        raise Unsupported("this client answers form elicitations only, not URL ones")
    schema = mode.requested_schema.model_dump(mode="json", by_alias=True, exclude_none=True)
    session_id = mode.session_id if isinstance(mode, ElicitationFormSessionMode) else None
    return AcpPrompt("elicitation", tuple(form_fields(message, schema)), session_id)


def prompt_of_request(method: str, params: object) -> AcpPrompt | None:
    """The prompt of a raw JSON-RPC request from an agent, if it asks a person something this
    module can ask (`None` for any other method, a URL elicitation, or params it cannot read)."""
    try:
        if method == "session/request_permission":
            request = RequestPermissionRequest.model_validate(params)
            return permission_prompt(request.session_id, request.tool_call, request.options)
        if method == "elicitation/create":
            form = _FORM_REQUEST.validate_python(params)
            if isinstance(form, CreateFormSessionElicitationRequest):
                mode: ElicitationMode = ElicitationFormSessionMode(
                    session_id=form.session_id,
                    tool_call_id=form.tool_call_id,
                    requested_schema=form.requested_schema,
                )
            else:
                mode = ElicitationFormRequestMode(
                    request_id=form.request_id, requested_schema=form.requested_schema
                )
            return elicitation_prompt(form.message, mode)
    except (ValidationError, Unsupported):
        return None
    return None


@dataclass(eq=False)
class AcpClientHandlers:
    """A client's answers to an agent's permission requests and form elicitations, asked
    through a provider. Delegate the `Client` methods of the same names to it, advertise
    `capabilities` in `initialize`, connect with `use_unstable_protocol=True` (the SDK gates
    `elicitation/create` behind it), and call `cancel(session_id)` when sending `session/cancel`.
    """

    provider: UserQuestionProvider
    max_attempts: int = MAX_ATTEMPTS
    capabilities: ClientCapabilities = field(
        default_factory=lambda: ClientCapabilities(
            elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
        )
    )
    """What to send as `clientCapabilities`: form elicitation, not URL."""
    _waiting: dict[str, set[anyio.CancelScope]] = field(default_factory=dict, repr=False)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        """Ask which option to take; `cancelled` unless one was chosen.

        Raises:
            RequestError: invalid params for a request without options; internal error when
                the provider failed otherwise than by a dismissal, an abort or a timeout.
        """
        try:
            prompt = permission_prompt(session_id, tool_call, options)
        except Unsupported as error:
            raise RequestError.invalid_params({"details": str(error)}) from None
        result = await self._answer(prompt)
        assert isinstance(result, RequestPermissionResponse)
        return result

    async def create_elicitation(
        self, message: str, mode: ElicitationMode, **kwargs: Any
    ) -> CreateElicitationResponse:
        """Ask the form's fields; `accept` with typed content, `decline` or `cancel`.

        Raises:
            RequestError: invalid params for a URL elicitation or a form this client cannot
                ask; internal error when the provider failed.
        """
        try:
            prompt = elicitation_prompt(message, mode)
        except Unsupported as error:
            raise RequestError.invalid_params({"details": str(error)}) from None
        result = await self._answer(prompt)
        assert not isinstance(result, RequestPermissionResponse)
        return result

    def cancel(self, session_id: str) -> None:
        """Withdraw every question of `session_id` still waiting: they answer `cancelled`."""
        for scope in self._waiting.pop(session_id, set()):
            scope.cancel()

    async def _answer(self, prompt: AcpPrompt) -> AcpResult:
        with self._watch(prompt.session_id):
            try:
                outcome = await fill_form(self.provider, prompt.fields, self.max_attempts)
            except HarnessError as error:
                raise RequestError.internal_error(
                    {"details": f"{error.code}: {error.message}"}
                ) from None
            return prompt.result(outcome)
        return prompt.result(Unfilled("cancel"))  # withdrawn by `cancel`

    @contextlib.contextmanager
    def _watch(self, session_id: str | None) -> Iterator[None]:
        """A scope that `cancel(session_id)` cancels."""
        with anyio.CancelScope() as scope:
            waiting = self._waiting.setdefault(session_id, set()) if session_id else set()
            waiting.add(scope)
            try:
                yield
            finally:
                waiting.discard(scope)
                if not waiting and session_id and self._waiting.get(session_id) is waiting:
                    del self._waiting[session_id]


def acp_client_handlers(
    provider: UserQuestionProvider, *, max_attempts: int = MAX_ATTEMPTS
) -> AcpClientHandlers:
    """Handlers answering an ACP agent's permission requests and form elicitations through
    `provider` (a `RemoteProvider` for the inbox, a `TerminalProvider`, `ctx.user_questions`)."""
    return AcpClientHandlers(provider, max_attempts)


def _header(tool_call: ToolCallUpdate) -> str:
    """The tool's kind as a header: `Edit`, `Execute`, `Switch mode`; `Tool call` for `other`."""
    kind = tool_call.kind if tool_call.kind not in (None, "other") else "tool call"
    return str(kind).replace("_", " ").capitalize()


def _render_tool_call(tool_call: ToolCallUpdate) -> str:
    """The tool call as markdown: its content, the files it touches, its raw input."""
    return "\n\n".join(part for part in _rendered_parts(tool_call) if part)


def _rendered_parts(tool_call: ToolCallUpdate) -> Iterator[str]:
    for item in tool_call.content or ():
        if isinstance(item, ContentToolCallContent):
            yield _clip(_render_block(item.content))
        elif isinstance(item, FileEditToolCallContent):
            yield _render_diff(item.path, item.old_text, item.new_text)
        else:
            yield f"Terminal `{item.terminal_id}`"
    locations = [
        f"`{where.path}:{where.line}`" if where.line is not None else f"`{where.path}`"
        for where in tool_call.locations or ()
    ]
    if locations:
        yield "Files: " + ", ".join(locations)
    if tool_call.raw_input is not None:
        shown = json.dumps(tool_call.raw_input, indent=2, ensure_ascii=False, default=str)
        yield f"```json\n{_clip(shown)}\n```"


def _render_block(block: object) -> str:
    if isinstance(block, TextContentBlock):
        return block.text
    if isinstance(block, ResourceContentBlock):
        return f"[{block.title or block.name}]({block.uri})"
    if isinstance(block, EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return f"`{resource.uri}`\n\n```\n{_clip(resource.text)}\n```"
        return f"`{resource.uri}` (binary)"
    kind = getattr(block, "type", "content")
    return f"({kind} not shown)"


def _render_diff(path: str, old: str | None, new: str) -> str:
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile="/dev/null" if old is None else path,
        tofile=path,
    )
    body = _clip("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    return f"`{path}`{' (new file)' if old is None else ''}\n\n```diff\n{body}```"


def _clip(text: str) -> str:
    if len(text) <= MAX_RENDERED:
        return text
    cut = len(text) - MAX_RENDERED
    return f"{text[:MAX_RENDERED]}\n… ({cut} more characters not shown)\n"
