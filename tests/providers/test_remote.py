"""`RemoteProvider` against a scripted host: answers, dismissals, re-attachment, withdrawal.

The host here is a small WebSocket server speaking the asker protocol (`FakeHost`), so that a
test can drop the connection, stop the host, or refuse the token at the exact moment it needs;
tests/e2e/test_host_remote.py runs the provider against the real host in other processes.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from tests.deadlines import within
from user_questions import (
    AbortController,
    AbortSignal,
    Agent,
    AskUserQuestionAnswer,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    UserQuestionError,
)
from user_questions._host_link import ask_endings
from user_questions.frames import MAX_FRAME_BYTES, Origin
from user_questions.providers import remote
from user_questions.providers.remote import RemoteProvider

pytestmark = pytest.mark.anyio

TOKEN = "remote-token-1"
PICK = AskUserQuestionItem(
    id="pick",
    question="Which one?",
    options=[AskUserQuestionOption(label="a"), AskUserQuestionOption(label="b")],
)
ANSWER = {"answers": [{"id": "pick", "selected": ["b"]}]}
REATTACHED = "the asker to re-attach after the reconnection and get the answer given meanwhile"


class FakeHost:
    """The host side of the asker protocol, in memory, with switches for failures."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.requests: dict[str, dict[str, Any]] = {}
        self.outcomes: dict[str, dict[str, Any]] = {}
        self.watchers: dict[str, set[ServerConnection]] = {}
        self.connections: set[ServerConnection] = set()
        self.connected_total = 0
        self.refuse_with: int | None = None
        self.port = 0
        self._server: Server | None = None
        self._changed = anyio.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={TOKEN}"

    async def start(self) -> None:
        self._server = await serve(
            self._handle, "127.0.0.1", self.port, process_request=self._check
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        self._server = None

    async def drop_connections(self) -> None:
        """Cut every connection as a network failure would: no close handshake."""
        for connection in list(self.connections):
            connection.transport.abort()
        await self.wait_for(lambda: not self.connections)

    async def wait_for(self, condition: Callable[[], bool]) -> None:
        with anyio.fail_after(5):
            while not condition():
                await self._changed.wait()

    def frames(self, kind: str) -> list[dict[str, Any]]:
        return [frame for frame in self.received if frame["type"] == kind]

    async def settle(self, rpc_id: str, outcome: str, answer: Any = None) -> None:
        payload: dict[str, Any] = {"type": "ask/settled", "outcome": outcome}
        if answer is not None:
            payload["answer"] = answer
        self.outcomes[rpc_id] = payload
        for connection in self.watchers.pop(rpc_id, set()):
            await connection.send(json.dumps({"rpcId": rpc_id, "payload": payload}))

    def _check(self, connection: ServerConnection, request: Request) -> Response | None:
        if self.refuse_with is not None:
            return connection.respond(self.refuse_with, "refused\n")
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return connection.respond(401, "no token\n")
        assert request.path == "/ws/ask"
        return None

    def _changed_now(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _handle(self, connection: ServerConnection) -> None:
        self.connections.add(connection)
        self.connected_total += 1
        self._changed_now()
        try:
            async for message in connection:
                frame = json.loads(message)
                self.received.append(frame)
                await connection.send(json.dumps(await self._reply(connection, frame)))
                self._changed_now()
        finally:
            self.connections.discard(connection)
            for watchers in self.watchers.values():
                watchers.discard(connection)
            self._changed_now()

    async def _reply(self, connection: ServerConnection, frame: dict[str, Any]) -> Any:
        rpc_id = frame["rpcId"]
        if frame["type"] == "withdraw":
            if rpc_id not in self.requests:
                return {
                    "rpcId": rpc_id,
                    "payload": {"type": "ask/error", "code": "NOT_FOUND", "message": "?"},
                }
            if rpc_id not in self.outcomes:
                await self.settle(rpc_id, "withdrawn")
            return {"rpcId": rpc_id, "payload": self.outcomes[rpc_id]}
        if len(frame["questions"]) > 2:
            payload = {"type": "ask/error", "code": "TOO_MANY_QUESTIONS", "message": "too many"}
            return {"rpcId": rpc_id, "payload": payload}
        self.requests.setdefault(rpc_id, frame)
        if rpc_id in self.outcomes:
            return {"rpcId": rpc_id, "payload": self.outcomes[rpc_id]}
        self.watchers.setdefault(rpc_id, set()).add(connection)
        return {"rpcId": rpc_id, "payload": {"type": "ask/pending"}}


@pytest.fixture
async def host() -> AsyncIterator[FakeHost]:
    fake = FakeHost()
    await fake.start()
    try:
        yield fake
    finally:
        if fake._server is not None:
            await fake.stop()


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote, "BACKOFF_FIRST", 0.01)
    monkeypatch.setattr(remote, "BACKOFF_MAX", 0.05)


def start_asking(task_group: TaskGroup, provider: RemoteProvider) -> list[Any]:
    """Ask through `provider` in `task_group`; the answer lands, as JSON, in the list returned."""
    answers: list[Any] = []

    async def asker() -> None:
        answer = await provider.ask(AskUserQuestionRequest(questions=[PICK]))
        answers.append(answer.model_dump(mode="json"))

    task_group.start_soon(asker)
    return answers


async def ask_and_answer(host: FakeHost, ctx: Context, provider: RemoteProvider) -> Any:
    """Ask through the service while the host answers the first request it gets."""
    ctx.user_questions.register_provider(provider)
    result: list[Any] = []

    async def asker() -> None:
        result.append(await ctx.user_questions.ask(AskUserQuestionRequest(questions=[PICK])))

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(asker)
        await host.wait_for(lambda: bool(host.requests))
        await host.settle(next(iter(host.requests)), "answered", ANSWER)
    return result[0]


async def test_the_answer_given_at_the_host_is_returned(host: FakeHost, ctx: Context) -> None:
    async with RemoteProvider(host.url, session="tests") as provider:
        answer = await ask_and_answer(host, ctx, provider)
    assert answer.model_dump(mode="json") == ANSWER
    (asked,) = host.frames("ask")
    assert asked["sessionId"] == "tests"
    assert asked["questions"] == [PICK.model_dump(mode="json")]


async def test_a_dismissal_at_the_host_is_ask_cancelled(host: FakeHost) -> None:
    async with RemoteProvider(host.url) as provider, anyio.create_task_group() as task_group:

        async def dismiss() -> None:
            await host.wait_for(lambda: bool(host.requests))
            await host.settle(next(iter(host.requests)), "dismissed")

        task_group.start_soon(dismiss)
        with pytest.raises(UserQuestionError) as caught:
            await provider.ask(AskUserQuestionRequest(questions=[PICK]))
    assert caught.value.code == ErrorCode.ASK_CANCELLED


async def test_the_session_is_the_agents_id_when_an_agent_asks(
    host: FakeHost, ctx: Context
) -> None:
    agent = Agent(id="agent-42")
    ctx.agents.enter(agent)
    ctx.user_questions.register_provider(RemoteProvider(host.url, session="named"))
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(
            ctx.user_questions.ask, AskUserQuestionRequest(questions=[PICK], agent=agent)
        )
        await host.wait_for(lambda: bool(host.requests))
        (asked,) = host.requests.values()
        assert asked["sessionId"] == "agent-42"
        await host.settle(asked["rpcId"], "answered", ANSWER)


async def test_a_dropped_connection_reattaches_and_the_answer_arrives_once(
    host: FakeHost, fast_backoff: None
) -> None:
    with within(5, REATTACHED):
        async with RemoteProvider(host.url) as provider, anyio.create_task_group() as task_group:
            answers = start_asking(task_group, provider)
            await host.wait_for(lambda: bool(host.requests))
            (rpc_id,) = host.requests
            await host.drop_connections()
            await host.settle(rpc_id, "answered", ANSWER)  # answered while the asker was away
    assert answers == [ANSWER]
    assert [frame["rpcId"] for frame in host.frames("ask")] == [rpc_id, rpc_id]
    assert host.connected_total == 2


async def test_a_restarted_host_is_found_again_on_the_same_address(
    host: FakeHost, fast_backoff: None
) -> None:
    with within(5, REATTACHED):
        async with RemoteProvider(host.url) as provider, anyio.create_task_group() as task_group:
            answers = start_asking(task_group, provider)
            await host.wait_for(lambda: bool(host.requests))
            await host.stop()
            await host.drop_connections()
            await host.start()  # same port
            await host.wait_for(lambda: len(host.frames("ask")) == 2)
            await host.settle(next(iter(host.requests)), "answered", ANSWER)
    assert answers == [ANSWER]


async def test_aborting_the_ask_withdraws_the_request(host: FakeHost, ctx: Context) -> None:
    ctx.user_questions.register_provider(RemoteProvider(host.url))
    controller = AbortController()
    async with anyio.create_task_group() as task_group:

        async def abort_once_asked() -> None:
            await host.wait_for(lambda: bool(host.requests))
            controller.abort()

        task_group.start_soon(abort_once_asked)
        with pytest.raises(UserQuestionError) as caught:
            await ctx.user_questions.ask(
                AskUserQuestionRequest(questions=[PICK], signal=controller.signal)
            )
    assert caught.value.code == ErrorCode.ASK_ABORTED
    (withdrawn,) = host.frames("withdraw")
    assert withdrawn["reason"] == "aborted"
    assert host.outcomes[withdrawn["rpcId"]]["outcome"] == "withdrawn"


async def test_a_timeout_withdraws_the_request_too(host: FakeHost, ctx: Context) -> None:
    ctx.user_questions.register_provider(RemoteProvider(host.url))
    with pytest.raises(UserQuestionError) as caught:
        await ctx.user_questions.ask(
            AskUserQuestionRequest(questions=[PICK], signal=AbortSignal.timeout(0.2))
        )
    assert caught.value.code == ErrorCode.ASK_TIMED_OUT
    (withdrawn,) = host.frames("withdraw")
    assert withdrawn["reason"] == "timed-out"  # the host records it as its own outcome


def test_withdraw_reason_says_why_an_ask_gave_up() -> None:
    controller = AbortController()
    waiting = AbortSignal.timeout(60)
    assert ask_endings.withdraw_reason(None) == "cancelled"
    assert ask_endings.withdraw_reason(waiting) == "cancelled"  # cancelled before its deadline
    assert ask_endings.withdraw_reason(AbortSignal.timeout(0)) == "timed-out"
    controller.abort()
    assert ask_endings.withdraw_reason(controller.signal) == "aborted"
    assert ask_endings.withdraw_reason(AbortSignal.any([controller.signal, waiting])) == "aborted"


async def test_a_withdrawal_made_while_the_host_is_down_reaches_it_when_it_returns(
    host: FakeHost, fast_backoff: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remote, "WITHDRAW_TIMEOUT", 0.2)  # how long the cancelled ask waits
    async with RemoteProvider(host.url) as provider:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(provider.ask, AskUserQuestionRequest(questions=[PICK]))
            await host.wait_for(lambda: bool(host.requests))
            await host.stop()
            await host.drop_connections()
            task_group.cancel_scope.cancel()  # the withdrawal now waits for the host
        await host.start()
        # Leaving `async with` delivers what is still owed to the host.
    (rpc_id,) = host.requests
    assert [frame["type"] for frame in host.received] == ["ask", "ask", "withdraw"]
    assert host.outcomes[rpc_id]["outcome"] == "withdrawn"


async def test_an_unreachable_host_is_an_error_not_a_hang(fast_backoff: None) -> None:
    with anyio.fail_after(5):
        provider = RemoteProvider(
            f"http://127.0.0.1:9/?token={TOKEN}", unreachable_limit=0.2
        )  # port 9 (discard): nothing listens
        with pytest.raises(UserQuestionError) as caught:
            await provider.ask(AskUserQuestionRequest(questions=[PICK]))
    assert caught.value.code == ErrorCode.HOST_UNREACHABLE
    assert "has been unreachable for 0.2 s" in str(caught.value)


async def test_connect_says_at_once_that_no_host_listens() -> None:
    provider = RemoteProvider(f"http://127.0.0.1:9/?token={TOKEN}")  # the default limit is long
    with pytest.raises(UserQuestionError) as caught, anyio.fail_after(2):
        await provider.connect()
    assert caught.value.code == ErrorCode.HOST_UNREACHABLE
    assert "did not answer; is `uq serve` running?" in str(caught.value)


async def test_connect_gives_up_on_a_host_that_never_answers_after_the_connect_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never speaks
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/?token={TOKEN}"
        provider = RemoteProvider(url, connect_timeout=0.3)
        started = anyio.current_time()
        with pytest.raises(UserQuestionError) as caught, anyio.fail_after(5):
            await provider.connect()
    assert caught.value.code == ErrorCode.HOST_UNREACHABLE
    assert 0.3 <= anyio.current_time() - started < 3


async def test_connect_refuses_a_wrong_token_at_once(host: FakeHost) -> None:
    provider = RemoteProvider(host.url.replace(TOKEN, "wrong-token"))
    with pytest.raises(UserQuestionError) as caught, anyio.fail_after(5):
        await provider.connect()
    assert caught.value.code == ErrorCode.UNAUTHORIZED


async def test_connect_tries_the_next_host_and_its_connection_serves_the_asks(
    host: FakeHost, ctx: Context
) -> None:
    async with RemoteProvider(
        [f"http://127.0.0.1:9/?token={TOKEN}", host.url], session="tests"
    ) as provider:
        with anyio.fail_after(5):
            await provider.connect()
        assert provider.url == host.url.partition("?")[0]
        answer = await ask_and_answer(host, ctx, provider)
    assert answer.answers[0].selected == ["b"]
    assert host.connected_total == 1


async def test_a_wrong_token_is_unauthorized_at_once(host: FakeHost) -> None:
    provider = RemoteProvider(host.url.replace(TOKEN, "wrong-token"))
    with pytest.raises(UserQuestionError) as caught, anyio.fail_after(5):
        await provider.ask(AskUserQuestionRequest(questions=[PICK]))
    assert caught.value.code == ErrorCode.UNAUTHORIZED
    assert host.received == []


async def test_something_that_is_not_a_host_is_not_retried_for_ever(host: FakeHost) -> None:
    host.refuse_with = 404
    with pytest.raises(UserQuestionError) as caught, anyio.fail_after(5):
        await RemoteProvider(host.url).ask(AskUserQuestionRequest(questions=[PICK]))
    assert caught.value.code == ErrorCode.HOST_UNREACHABLE
    assert "HTTP 404" in str(caught.value)


async def test_a_request_the_host_refuses_raises_its_code(host: FakeHost) -> None:
    many = [PICK.model_copy(update={"id": f"q{index}"}) for index in range(3)]
    with pytest.raises(UserQuestionError) as caught:
        await RemoteProvider(host.url).ask(AskUserQuestionRequest(questions=many))
    assert caught.value.code == "TOO_MANY_QUESTIONS"


async def test_concurrent_asks_share_one_connection(host: FakeHost) -> None:
    async with RemoteProvider(host.url) as provider, anyio.create_task_group() as task_group:
        answers: list[Any] = []

        async def asker() -> None:
            answers.append(await provider.ask(AskUserQuestionRequest(questions=[PICK])))

        for _ in range(5):
            task_group.start_soon(asker)
        await host.wait_for(lambda: len(host.requests) == 5)
        for rpc_id in list(host.requests):
            await host.settle(rpc_id, "answered", ANSWER)
    assert len(answers) == 5
    assert host.connected_total == 1


async def test_without_async_with_the_connection_closes_after_the_last_ask(
    host: FakeHost, ctx: Context
) -> None:
    provider = RemoteProvider(host.url)
    await ask_and_answer(host, ctx, provider)
    await host.wait_for(lambda: not host.connections)


async def test_an_rpc_id_is_reattached_across_providers(host: FakeHost) -> None:
    request = AskUserQuestionRequest(questions=[PICK])
    await host.settle("kept-id", "answered", ANSWER)  # answered while no process was asking
    answer = await RemoteProvider(host.url).ask_with_id("kept-id", request)
    assert answer.model_dump(mode="json") == ANSWER


async def test_the_same_rpc_id_twice_at_once_is_refused(host: FakeHost) -> None:
    request = AskUserQuestionRequest(questions=[PICK])
    async with RemoteProvider(host.url) as provider, anyio.create_task_group() as task_group:
        task_group.start_soon(provider.ask_with_id, "same", request)
        await host.wait_for(lambda: bool(host.requests))
        with pytest.raises(UserQuestionError) as caught:
            await provider.ask_with_id("same", request)
        assert caught.value.code == ErrorCode.BAD_REQUEST
        await host.settle("same", "answered", ANSWER)


def test_the_token_comes_from_the_argument_the_url_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("UQ_TOKEN", raising=False)
    with pytest.raises(UserQuestionError) as caught:
        RemoteProvider("http://127.0.0.1:8765")
    assert caught.value.code == ErrorCode.BAD_TOKEN
    monkeypatch.setenv("UQ_TOKEN", "from-env")
    assert RemoteProvider("http://127.0.0.1:8765")._token == "from-env"
    assert RemoteProvider("http://127.0.0.1:8765/?token=from-url")._token == "from-url"
    assert RemoteProvider("http://h:1/?token=from-url", token="given")._token == "given"


def test_the_url_must_be_a_web_address() -> None:
    for url in ("127.0.0.1:8765", "ftp://host/", "http:///path"):
        with pytest.raises(UserQuestionError) as caught:
            RemoteProvider(url, token="t")
        assert caught.value.code == ErrorCode.BAD_REQUEST


def test_the_default_session_names_the_program_and_the_machine() -> None:
    import socket

    provider = RemoteProvider("http://127.0.0.1:8765", token="t")
    assert provider.session.endswith(f"@{socket.gethostname()}")
    assert provider.url == "http://127.0.0.1:8765/"


async def test_a_request_too_large_for_any_host_is_refused_before_sending(host: FakeHost) -> None:
    huge = PICK.model_copy(update={"detail": "x" * MAX_FRAME_BYTES})
    with pytest.raises(UserQuestionError) as caught:
        await RemoteProvider(host.url).ask(AskUserQuestionRequest(questions=[huge]))
    assert caught.value.code == ErrorCode.REQUEST_TOO_LARGE
    assert host.connected_total == 0


async def test_a_withdrawal_the_host_refuses_is_given_up_at_once(
    host: FakeHost, fast_backoff: None
) -> None:
    scopes: list[anyio.CancelScope] = []
    async with RemoteProvider(host.url) as provider:

        async def asker() -> None:
            with anyio.CancelScope() as scope:
                scopes.append(scope)
                await provider.ask(AskUserQuestionRequest(questions=[PICK]))

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(asker)
            await host.wait_for(lambda: bool(host.requests))
            await host.stop()
            await host.drop_connections()
            scopes[0].cancel()  # the ask now owes the host a withdrawal
            host.refuse_with = 401  # and the host comes back with another token
            await host.start()
            began = anyio.current_time()
        assert anyio.current_time() - began < ask_endings.WITHDRAW_TIMEOUT / 2
    assert host.frames("withdraw") == []


async def test_the_origin_goes_with_every_ask_and_a_timed_out_request_is_ask_timed_out(
    host: FakeHost,
) -> None:
    origin = Origin(client="langgraph", cwd="/srv/agents")
    async with (
        RemoteProvider(host.url, origin=origin) as provider,
        anyio.create_task_group() as task_group,
    ):

        async def time_out() -> None:
            await host.wait_for(lambda: bool(host.requests))
            await host.settle(next(iter(host.requests)), "timed-out")

        task_group.start_soon(time_out)
        with pytest.raises(UserQuestionError) as caught:
            await provider.ask(AskUserQuestionRequest(questions=[PICK]))
    assert caught.value.code == ErrorCode.ASK_TIMED_OUT
    (asked,) = host.frames("ask")
    assert asked["origin"] == {"client": "langgraph", "cwd": "/srv/agents"}


async def test_a_settlement_whose_answer_cannot_be_read_fails_its_ask(host: FakeHost) -> None:
    async with RemoteProvider(host.url) as provider, anyio.create_task_group() as task_group:

        async def answer_badly() -> None:
            await host.wait_for(lambda: bool(host.requests))
            broken = {"answers": [{"id": "pick", "selected": "b"}]}
            await host.settle(next(iter(host.requests)), "answered", broken)

        task_group.start_soon(answer_badly)
        with pytest.raises(UserQuestionError) as caught, anyio.fail_after(5):
            await provider.ask(AskUserQuestionRequest(questions=[PICK]))
    assert caught.value.code == ErrorCode.BAD_ANSWER
    assert caught.value.message == (
        'invalid answer: property "answers[0].selected" must be an array, got string'
    )


async def test_a_reader_cancelled_while_it_resends_leaves_nothing_unsent(
    host: FakeHost, fast_backoff: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ask whose task reads is cancelled while, on a new connection, the calls are sent
    again: the reader that takes over sends what it had not, so the other ask is answered."""
    scopes: dict[str, anyio.CancelScope] = {}
    send = RemoteProvider._send

    async def cancelled_on_the_way(self: RemoteProvider, call: Any) -> None:
        first = scopes["first"]
        if host.connected_total == 2 and call.rpc_id == "first" and not first.cancel_called:
            first.cancel()  # the first ask, whose task reads, as it is sent again
            await anyio.lowlevel.checkpoint()
        await send(self, call)

    monkeypatch.setattr(RemoteProvider, "_send", cancelled_on_the_way)
    answers: list[AskUserQuestionAnswer] = []
    request = AskUserQuestionRequest(questions=[PICK])

    async def asker(provider: RemoteProvider, rpc_id: str) -> None:
        with anyio.CancelScope() as scope:
            scopes[rpc_id] = scope
            answers.append(await provider.ask_with_id(rpc_id, request))

    def asked(rpc_id: str) -> int:
        return [frame["rpcId"] for frame in host.frames("ask")].count(rpc_id)

    with within(5, "the second ask to be sent again on the new connection and answered"):
        async with RemoteProvider(host.url) as provider, anyio.create_task_group() as task_group:
            task_group.start_soon(asker, provider, "first")
            await host.wait_for(lambda: asked("first") == 1)
            task_group.start_soon(asker, provider, "second")
            await host.wait_for(lambda: asked("second") == 1)
            await host.drop_connections()
            await host.wait_for(lambda: asked("second") == 2)
            await host.settle("second", "answered", ANSWER)
    assert [answer.model_dump(mode="json") for answer in answers] == [ANSWER]
    assert host.outcomes["first"]["outcome"] == "withdrawn"


async def test_a_withdrawal_owed_after_an_outage_is_delivered_and_then_forgotten(
    host: FakeHost, fast_backoff: None
) -> None:
    """Without `async with`, the connection still closes after the last ask once the
    withdrawal owed since the host was unreachable has been confirmed."""
    await host.stop()
    provider = RemoteProvider(host.url, unreachable_limit=0.2)
    request = AskUserQuestionRequest(questions=[PICK])
    with pytest.raises(UserQuestionError) as caught:
        await provider.ask_with_id("lost", request)
    assert caught.value.code == ErrorCode.HOST_UNREACHABLE
    await host.start()
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(provider.ask_with_id, "next", request)
        await host.wait_for(lambda: "next" in host.requests)
        await host.settle("next", "answered", ANSWER)
    assert host.outcomes["lost"]["outcome"] == "withdrawn"
    await host.wait_for(lambda: not host.connections)
