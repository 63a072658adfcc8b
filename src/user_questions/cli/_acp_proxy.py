"""The relay of `uq acp`: an editor and an ACP agent, with the inbox beside them.

Extras `acp` and `web`. Every line passes between the editor (this process's stdin and stdout) and
the agent (a child process's stdio) byte for byte, in order. The proxy only reads along: when the
agent asks its editor something a person answers (`session/request_permission`, or
`elicitation/create` in form mode), the same question is also put in the inbox
(`bridges._acp_client` maps it). Whichever answers first wins:

- the inbox: the proxy answers the agent itself (the page's answer is recorded by the host as
  usual) and drops the editor's later response to that request. ACP v1 cannot take a request
  back from the editor, so its prompt stays until the person closes it there;
- the editor: its response goes to the agent unchanged, and the proxy withdraws the card from
  every page, with what the editor answered as the withdrawal's note (`answered in the editor:
  Allow once`, `dismissed in the editor`), which the history shows. It never records an answer:
  the proxy asks with an asker's token, and no asker may produce an answer, or an agent that
  read the token could answer a request itself. A response our vocabulary cannot express (a
  `cancelled` permission outcome, a cancelled form, an error) withdraws the card without a note.

Only a person's decision in the inbox wins: an ask that fails (the host went away, the token is
refused) or is withdrawn leaves the editor alone in the race. Before asking, the proxy checks
that the host accepts a connection within `CONNECT_BOUND`; if not, that request is the editor's
alone, so with the host down everything passes through as if the proxy were not there. The
editor's `session/cancel` withdraws the cards of that session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio
import anyio.abc

from user_questions._reading.json_reader import JSONRefused, load_json
from user_questions.abort import AbortController
from user_questions.bridges.acp import (
    AcpPrompt,
    EditorAnswer,
    Filled,
    FormOutcome,
    fill_form,
    prompt_of_request,
)
from user_questions.cli._host_client import HostAddress
from user_questions.errors import ErrorCode, HarnessError, UserQuestionError
from user_questions.frames import Origin
from user_questions.providers.remote import RemoteProvider
from user_questions.service import AskUserQuestionRequest
from user_questions.types import AskUserQuestionAnswer, AskUserQuestionItem

__all__ = ["CONNECT_BOUND", "MAX_LINE_BYTES", "HostInbox", "relay"]

CONNECT_BOUND = 1.0
"""Seconds the proxy waits for the host to accept a connection before leaving a request to the
editor alone."""
MAX_LINE_BYTES = 50 * 1024 * 1024
"""The longest line read at once, as the ACP SDK reads stdio; a longer one still passes through,
unread."""
_ASKS = frozenset({"session/request_permission", "elicitation/create"})


class HostInbox:
    """The host a proxy asks beside the editor, through a `RemoteProvider`: the one place the
    proxy's provider is built."""

    def __init__(self, address: HostAddress, session: str, origin: Origin | None = None) -> None:
        self.address = address
        self.session = session
        self.provider = RemoteProvider(
            address.base, token=address.token, session=session, origin=origin, ca=address.ca
        )

    async def reachable(self) -> bool:
        """Whether the host accepts a connection within `CONNECT_BOUND`."""
        parts = urlsplit(self.address.base)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with anyio.move_on_after(CONNECT_BOUND):
            try:
                stream = await anyio.connect_tcp(parts.hostname or "localhost", port)
            except OSError:
                return False
            await stream.aclose()
            return True
        return False


@dataclass(eq=False)
class _Race:
    """A request of the agent that both the editor and the inbox may answer."""

    request_id: Any
    prompt: AcpPrompt
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    """The inbox's side: cancelling it withdraws the card."""
    settled: bool = False
    """Whether the agent has its answer (from either side)."""
    rpc_id: str | None = None
    """The card on the inbox now."""
    questions: Sequence[AskUserQuestionItem] = ()
    """The questions of that card."""
    editor: AbortController = field(default_factory=AbortController)
    """Aborted, with what the editor answered as the reason, when the editor answers first: the
    card is withdrawn with that reason as its note (`ask_endings.withdraw_note`)."""


class _Rounds:
    """The inbox as a provider for one race: each round is a card the race knows the rpcId of,
    and no round starts once the editor has answered."""

    def __init__(self, provider: RemoteProvider, race: _Race) -> None:
        self._provider = provider
        self._race = race

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        race = self._race
        if race.settled:
            raise UserQuestionError("the editor answered first", ErrorCode.ASK_ABORTED)
        race.rpc_id, race.questions = uuid.uuid4().hex, request.questions
        asked = AskUserQuestionRequest(request.questions, request.agent, race.editor.signal)
        return await self._provider.ask_with_id(race.rpc_id, asked)


class _Relay:
    """The two directions of the relay, and the races between the editor and the inbox."""

    def __init__(
        self,
        inbox: HostInbox,
        agent_in: asyncio.StreamWriter,
        editor_out: asyncio.StreamWriter,
        tasks: anyio.abc.TaskGroup,
    ) -> None:
        self._inbox = inbox
        self._agent_in = agent_in
        self._editor_out = editor_out
        self._tasks = tasks
        self._races: dict[str, _Race] = {}

    async def from_editor(self, editor_in: asyncio.StreamReader) -> None:
        """Pass the editor's lines to the agent, except responses the inbox already gave."""
        async for line in _lines(editor_in):
            message = _message(line)
            if message is not None and "method" not in message and "id" in message:
                race = self._races.pop(_key(message["id"]), None)
                if race is not None:
                    if race.settled:
                        continue  # the inbox answered first: the agent has its answer
                    race.settled = True  # before writing: the inbox's answer must not follow
                    _editor_answered(race, message)
                await _write(self._agent_in, line)
                continue
            if message is not None and message.get("method") == "session/cancel":
                self._withdraw_session(message.get("params"))
            await _write(self._agent_in, line)
        self._agent_in.close()

    async def from_agent(self, agent_out: asyncio.StreamReader) -> None:
        """Pass the agent's lines to the editor, putting its questions in the inbox too."""
        async for line in _lines(agent_out):
            asked = _question(_message(line))
            if asked is not None:
                race = _Race(*asked)
                self._races[_key(race.request_id)] = race  # before the editor can answer
                self._tasks.start_soon(self._ask_inbox, race)
            await _write(self._editor_out, line)

    async def _ask_inbox(self, race: _Race) -> None:
        inbox = self._inbox
        with race.scope:
            if not await inbox.reachable():
                _log(
                    f"the inbox at {inbox.address.base} is not reachable; the editor alone answers"
                )
                return
            try:
                outcome = await fill_form(_Rounds(inbox.provider, race), race.prompt.fields)
            except HarnessError as error:
                _log(f"the inbox could not ask: {error.message}")
                return
            if race.settled or not _decided(outcome):
                return
            race.settled = True
            result = race.prompt.result(outcome)
            reply = {
                "jsonrpc": "2.0",
                "id": race.request_id,
                "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
            }
            await _write(self._agent_in, json.dumps(reply, separators=(",", ":")).encode() + b"\n")

    def _withdraw_session(self, params: object) -> None:
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        for race in self._races.values():
            if race.prompt.session_id == session_id:
                race.scope.cancel()


async def relay(
    inbox: HostInbox,
    editor: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    agent: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    """Relay between the editor's streams and the agent's until the agent's output ends; the
    editor's end of input closes the agent's."""
    (editor_in, editor_out), (agent_out, agent_in) = editor, agent
    async with inbox.provider, anyio.create_task_group() as tasks:
        both = _Relay(inbox, agent_in, editor_out, tasks)
        tasks.start_soon(both.from_editor, editor_in)
        await both.from_agent(agent_out)
        tasks.cancel_scope.cancel()


def _editor_answered(race: _Race, message: dict[str, Any]) -> None:
    """Withdraw the race's card, with what the editor's response `message` answered as its
    note (none when our vocabulary cannot say it)."""
    answer: EditorAnswer = None
    if race.rpc_id is not None and "result" in message:
        answer = race.prompt.answer_of(race.questions, message["result"])
    if answer is not None:
        race.editor.abort(_editor_note(answer))
    race.scope.cancel()


def _editor_note(answer: AskUserQuestionAnswer | Literal["dismissed"]) -> str:
    """What the editor answered, in a few words: `answered in the editor: Allow once`."""
    if answer == "dismissed":
        return "dismissed in the editor"
    chosen = [
        ", ".join([*item.selected, *([] if item.custom is None else [f"“{item.custom}”"])])
        for item in answer.answers
    ]
    return "answered in the editor: " + ("; ".join(filter(None, chosen)) or "(skipped)")


def _decided(outcome: FormOutcome) -> bool:
    """Whether a person decided `outcome` in the inbox: not a withdrawal, an abort or a timeout."""
    if isinstance(outcome, Filled) or outcome.reason is None:
        return True
    return outcome.reason.code == ErrorCode.ASK_CANCELLED


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """Every line of `reader` with its newline (the last one may have none), until its end."""
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            if end.partial:
                yield end.partial
            return
        except asyncio.LimitOverrunError as over:
            yield await reader.readexactly(over.consumed)  # too long to read: passed on unread
            continue
        yield line


def _message(line: bytes) -> dict[str, Any] | None:
    """The JSON-RPC message on `line`, if it is one."""
    try:
        message = load_json(line)
    except JSONRefused:
        return None
    return message if isinstance(message, dict) else None


def _question(message: dict[str, Any] | None) -> tuple[Any, AcpPrompt] | None:
    """The id and prompt of an agent's request that a person answers, if `message` is one."""
    if message is None or "id" not in message:
        return None
    method = message.get("method")
    if not isinstance(method, str) or method not in _ASKS:
        return None
    prompt = prompt_of_request(method, message.get("params"))
    return None if prompt is None else (message["id"], prompt)


def _key(request_id: object) -> str:
    """A request id as a key that keeps `1` and `"1"` apart."""
    return json.dumps(request_id)


async def _write(stream: asyncio.StreamWriter, line: bytes) -> None:
    if stream.is_closing():
        return
    stream.write(line)
    with contextlib.suppress(ConnectionError):  # the other side is gone: its end ends the relay
        await stream.drain()


def _log(message: str) -> None:
    print(f"uq acp: {message}", file=sys.stderr, flush=True)
