"""`connect()`: one call that gives code outside a harness a way to ask a human.

`providers.remote` (and so the `web` extra) is imported only when it connects to a host.

A framework adapter, a script or a test needs what a harness assembles by hand: a `Context`, the
service, the tool runtime, the `ask_user_question` plugin and a provider. `connect()` assembles
them around one provider, a `RemoteProvider` to the host at `url` (or `$UQ_URL`) or any provider
given, and hands back an `Asker`:

    async with connect() as asker:
        answer = await asker.ask([{"id": "go", "question": "Deploy?"}])

`Asker.ask` goes through the service, so it checks the questions and fails with the same codes as
`ctx.user_questions.ask`. `Asker.tool` is the `ask_user_question` tool bound to the asker, and
`Asker.execute` calls it as a model would, returning the text the model reads.

An ask may name its rpcId (`rpc_id=`): a process that restarts asks again under the same rpcId
and re-attaches to its request on the host instead of asking twice. Providers without that notion
(`ScriptedProvider`, the terminal) ignore it.

An approval card (an ask with `approval=`: the framework adapters' tool approvals) is a gate, so it
is never left waiting without a bound: asked without a signal it gets `approvals.DECISION_TIMEOUT`
(half an hour), and then fails with `ASK_TIMED_OUT`, which the adapters read as "not approved".
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from user_questions import tool_ask_user
from user_questions._reading.wire import parse_questions
from user_questions.abort import AbortSignal
from user_questions.approvals import DECISION_TIMEOUT
from user_questions.context import Context
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import Approval
from user_questions.service import AskUserQuestionRequest, UserQuestionProvider, UserQuestionService
from user_questions.tools import Tool, ToolRegistry, ToolResult
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

if TYPE_CHECKING:
    from user_questions.providers.remote import RemoteProvider

__all__ = ["URL_VARIABLE", "Asker", "Question", "connect", "questions_of"]

URL_VARIABLE = "UQ_URL"
"""The environment variable `connect()` reads the host's URL from when no `url` is given."""

Question = AskUserQuestionItem | Mapping[str, Any]
"""A question as a model or as wire JSON (`{"id", "question", "options", ...}`)."""


@runtime_checkable
class _Reattaching(Protocol):
    """A provider that can ask under a caller's rpcId (`RemoteProvider`)."""

    async def ask_with_id(
        self, rpc_id: str, request: AskUserQuestionRequest
    ) -> AskUserQuestionAnswer: ...


class _NamedAsks:
    """The provider an asker registers: passes each request on to the real provider, under the
    rpcId its caller named when the provider can re-attach. The service hands the provider the
    very request object it was given, so the rpcId is found by identity."""

    def __init__(self, provider: UserQuestionProvider) -> None:
        self.provider = provider
        self.rpc_ids: dict[AskUserQuestionRequest, str] = {}

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        rpc_id = self.rpc_ids.get(request)
        if rpc_id is not None and isinstance(self.provider, _Reattaching):
            return await self.provider.ask_with_id(rpc_id, request)
        return await self.provider.ask(request)


def questions_of(questions: Sequence[Question]) -> list[AskUserQuestionItem]:
    """`questions` as models; plain dicts are read as wire JSON.

    Raises:
        UserQuestionError: `BAD_REQUEST` naming the property of a malformed question.
    """
    if all(isinstance(question, AskUserQuestionItem) for question in questions):
        return [question for question in questions if isinstance(question, AskUserQuestionItem)]
    document = [
        question.model_dump(mode="json") if isinstance(question, AskUserQuestionItem) else question
        for question in questions
    ]
    return parse_questions({"questions": document})


class Asker:
    """Asks a human through one provider, with the service's checks, and runs the
    `ask_user_question` tool for framework adapters. Made by `connect()`."""

    def __init__(self, provider: UserQuestionProvider) -> None:
        self._named = _NamedAsks(provider)
        self.ctx = Context()
        """The asker's own app: the service, the tool runtime and the `ask_user_question` tool."""
        self.ctx.plugin(UserQuestionService)
        self.ctx.plugin(ToolRegistry)
        self.ctx.plugin(tool_ask_user)
        self.ctx.user_questions.register_provider(self._named)

    def __repr__(self) -> str:
        return f"<Asker {self.provider!r}>"

    @property
    def provider(self) -> UserQuestionProvider:
        """The provider that shows the questions."""
        return self._named.provider

    @property
    def tool(self) -> Tool:
        """The `ask_user_question` tool, asking through this asker; export it with
        `to_openai()`, `to_responses()`, `to_anthropic()` or `to_mcp()`."""
        tool = self.ctx.tools.get(tool_ask_user.TOOL_NAME)
        assert tool is not None  # registered in __init__, never unloaded
        return tool

    async def ask(
        self,
        questions: Sequence[Question],
        *,
        signal: AbortSignal | None = None,
        rpc_id: str | None = None,
        approval: Approval | None = None,
    ) -> AskUserQuestionAnswer:
        """Ask `questions` and wait for the answer, one item per question in question order.

        Args:
            signal: Aborts the ask; `AbortSignal.timeout(seconds)` bounds it. An approval card
                asked without one is bounded by `approvals.DECISION_TIMEOUT`.
            rpc_id: The request's id on a host: asking again under the same id (with the same
                questions and session) re-attaches to the request instead of asking twice.
            approval: What the questions approve, when they are an approval card: a host may
                settle the request by a rule.

        Raises:
            UserQuestionError: the codes of `ctx.user_questions.ask` (`ASK_CANCELLED` when the
                person dismissed the questions, `ASK_TIMED_OUT`, `ASK_ABORTED`, `BAD_QUESTION`,
                ...), `BAD_REQUEST` for a malformed question, and the provider's own codes
                (`HOST_UNREACHABLE`, `UNAUTHORIZED`, ...).
        """
        if approval is not None and signal is None:
            signal = AbortSignal.timeout(DECISION_TIMEOUT)
        request = AskUserQuestionRequest(
            questions=questions_of(questions), signal=signal, approval=approval
        )
        if rpc_id is not None:
            self._named.rpc_ids[request] = rpc_id
        try:
            answer: AskUserQuestionAnswer = await self.ctx.user_questions.ask(request)
        finally:
            self._named.rpc_ids.pop(request, None)
        return answer

    async def execute(self, arguments: object, *, signal: AbortSignal | None = None) -> ToolResult:
        """Call `ask_user_question` with a model's arguments (an object or its JSON text).

        Never raises for a failure of the call: invalid arguments, a dismissal or a timeout come
        back as an error result whose text (`Error: ...`) the model reads.
        """
        return await self.ctx.tools.execute(tool_ask_user.TOOL_NAME, arguments, signal=signal)


@asynccontextmanager
async def connect(
    url: str | Sequence[str] | None = None,
    *,
    session: str | None = None,
    token: str | None = None,
    client: str | None = None,
    ca: str | os.PathLike[str] | None = None,
    unreachable_limit: float | None = None,
    connect_timeout: float | None = None,
    require_asker: bool = False,
    provider: UserQuestionProvider | None = None,
) -> AsyncIterator[Asker]:
    """An `Asker` for as long as the block runs.

    With `provider`, it asks through that provider (a `ScriptedProvider` in tests, a
    `TerminalProvider`, ...). Otherwise it asks through the host (`uq serve`) at `url`, else at
    `$UQ_URL`, over one connection kept open for the block (a `RemoteProvider`; it needs the
    `web` extra).

    Args:
        url: The URL `uq serve` printed (its `?token=` is used), or several hosts' URLs.
        session: Names this asker's requests on the host's page; default `<program>@<hostname>`.
            A process that re-attaches after a restart must use the same session.
        token: The host's token, when the URL has none; else `$UQ_TOKEN`.
        client: Names the program that asks (`langgraph`, `pydantic-ai`, your agent's name): the
            inbox shows it, with this process's working folder, beside each question.
        ca: A PEM file of the certificate authority that signed an `https://` host's
            certificate, trusted besides the system's (and `SSL_CERT_FILE`'s).
        unreachable_limit: Seconds the host may give nothing useful before the waiting asks
            fail with `HOST_UNREACHABLE`; default `RemoteProvider`'s (300).
        connect_timeout: Seconds a connection attempt, and the host's answer to a frame, may
            take; default `RemoteProvider`'s (10).
        require_asker: Refuse a token that can answer, and fail the first asks at once when no
            host answers: for an asker that gates tool calls (`RemoteProvider(require_asker=)`).

    Raises:
        UserQuestionError: `NO_PROVIDER` when neither a URL, `$UQ_URL` nor a provider is given,
            or the `web` extra is missing; `BAD_TOKEN` and `BAD_REQUEST` from `RemoteProvider`
            (a `ca` that cannot be read too).
        TypeError: when both a provider and host arguments are given.
    """
    if provider is not None:
        given = (url, session, token, client, ca, unreachable_limit, connect_timeout)
        if require_asker or any(one is not None for one in given):
            raise TypeError("connect() takes either a provider or a host's url, not both")
        yield Asker(provider)
        return
    url = url or os.environ.get(URL_VARIABLE)
    if not url:
        raise UserQuestionError(
            f"connect() needs a host: pass url= (the URL `uq serve` printed), set {URL_VARIABLE}, "
            "or pass provider=",
            ErrorCode.NO_PROVIDER,
        )
    remote = _remote_provider(
        url,
        session=session,
        token=token,
        client=client,
        ca=ca,
        unreachable_limit=unreachable_limit,
        connect_timeout=connect_timeout,
        require_asker=require_asker,
    )
    async with remote:
        yield Asker(remote)


def _remote_provider(
    url: str | Sequence[str],
    *,
    session: str | None,
    token: str | None,
    client: str | None,
    ca: str | os.PathLike[str] | None,
    unreachable_limit: float | None,
    connect_timeout: float | None,
    require_asker: bool,
) -> RemoteProvider:
    """The one place an asker's `RemoteProvider` is made, importing the `web` extra lazily so
    that `import user_questions` stays pydantic and anyio only."""
    try:
        from user_questions.frames import Origin
        from user_questions.providers.remote import (
            CONNECT_TIMEOUT,
            UNREACHABLE_LIMIT,
            RemoteProvider,
        )
    except ImportError as error:
        raise UserQuestionError(
            f"connect() to a host needs the web extra ({error}): pip install 'user-questions[web]'",
            ErrorCode.NO_PROVIDER,
        ) from error
    origin = Origin(client=client, cwd=os.getcwd())
    return RemoteProvider(
        url,
        session=session,
        token=token,
        origin=origin,
        ca=ca,
        unreachable_limit=UNREACHABLE_LIMIT if unreachable_limit is None else unreachable_limit,
        connect_timeout=CONNECT_TIMEOUT if connect_timeout is None else connect_timeout,
        require_asker=require_asker,
    )
