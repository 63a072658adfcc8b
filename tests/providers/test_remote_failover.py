"""`RemoteProvider` with several hosts on one database: failing over to the next host, and waiting
out a host whose store is unavailable.

The hosts are `FakeHost`s (tests/providers/test_remote.py) that share their requests and
outcomes, as nodes on one PostgreSQL database do; tests/e2e/test_multinode.py runs the same
against real nodes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from websockets.asyncio.server import ServerConnection

from tests.deadlines import within
from tests.providers.test_remote import (
    ANSWER,
    PICK,
    REATTACHED,
    TOKEN,
    FakeHost,
    start_asking,
)
from user_questions import AskUserQuestionRequest, ErrorCode, UserQuestionError
from user_questions.providers import remote
from user_questions.providers.remote import RemoteProvider

pytestmark = pytest.mark.anyio


class Node(FakeHost):
    """A fake host whose store can be switched off: asks then get `STORE_UNAVAILABLE`."""

    def __init__(self) -> None:
        super().__init__()
        self.store_down = False

    async def _reply(self, connection: ServerConnection, frame: dict[str, Any]) -> Any:
        if self.store_down:
            message = "the store postgresql://db/uq is unavailable (connection refused)"
            payload = {"type": "ask/error", "code": "STORE_UNAVAILABLE", "message": message}
            return {"rpcId": frame["rpcId"], "payload": payload}
        return await super()._reply(connection, frame)


@pytest.fixture
async def nodes() -> AsyncIterator[tuple[Node, Node]]:
    first, second = Node(), Node()
    second.requests, second.outcomes = first.requests, first.outcomes  # one shared database
    for node in (first, second):
        await node.start()
    try:
        yield first, second
    finally:
        for node in (first, second):
            if node._server is not None:
                await node.stop()


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote, "BACKOFF_FIRST", 0.01)
    monkeypatch.setattr(remote, "BACKOFF_MAX", 0.05)


def base(node: Node) -> str:
    return f"http://127.0.0.1:{node.port}/"


async def test_when_its_host_goes_away_the_asker_reattaches_through_the_next(
    nodes: tuple[Node, Node],
) -> None:
    first, second = nodes
    with within(5, REATTACHED):
        async with (
            RemoteProvider([first.url, base(second)]) as provider,
            anyio.create_task_group() as task_group,
        ):
            answers = start_asking(task_group, provider)
            await first.wait_for(lambda: bool(first.requests))
            (rpc_id,) = first.requests
            await first.stop()
            await first.drop_connections()
            await second.settle(rpc_id, "answered", ANSWER)  # answered on the other node meanwhile
    assert answers == [ANSWER]
    assert [frame["rpcId"] for frame in second.frames("ask")] == [rpc_id]
    assert provider.url == base(second)
    assert provider.urls == (base(first), base(second))


async def test_an_unreachable_first_host_is_skipped(nodes: tuple[Node, Node]) -> None:
    _, second = nodes
    provider = RemoteProvider([f"http://127.0.0.1:9/?token={TOKEN}", base(second)])
    with within(5, "the asker to get its answer through the second host"):
        async with anyio.create_task_group() as task_group:
            answers = start_asking(task_group, provider)
            await second.wait_for(lambda: bool(second.requests))
            await second.settle(next(iter(second.requests)), "answered", ANSWER)
    assert answers == [ANSWER]
    assert provider.url == base(second)


async def test_an_ask_meeting_an_unavailable_store_is_sent_again_until_it_is_back(
    nodes: tuple[Node, Node],
) -> None:
    first, _ = nodes
    first.store_down = True
    answers: list[Any] = []
    async with RemoteProvider(first.url) as provider, anyio.create_task_group() as task_group:

        async def asker() -> None:
            answers.append(await provider.ask(AskUserQuestionRequest(questions=[PICK])))

        task_group.start_soon(asker)
        await first.wait_for(lambda: len(first.frames("ask")) >= 3)  # refused, asked again
        assert answers == []
        first.store_down = False
        await first.wait_for(lambda: bool(first.requests))
        await first.settle(next(iter(first.requests)), "answered", ANSWER)
    assert [answer.model_dump(mode="json") for answer in answers] == [ANSWER]
    assert len({frame["rpcId"] for frame in first.frames("ask")}) == 1  # the same request


async def test_with_every_host_gone_the_error_names_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider = RemoteProvider(
        [f"http://127.0.0.1:9/?token={TOKEN}", "http://127.0.0.1:7/"], unreachable_limit=0.2
    )
    with pytest.raises(UserQuestionError) as caught, anyio.fail_after(5):
        await provider.ask(AskUserQuestionRequest(questions=[PICK]))
    assert caught.value.code == ErrorCode.HOST_UNREACHABLE
    assert "http://127.0.0.1:9/ or http://127.0.0.1:7/ has been unreachable" in str(caught.value)


def test_an_empty_list_of_hosts_is_refused() -> None:
    with pytest.raises(UserQuestionError) as caught:
        RemoteProvider([], token=TOKEN)
    assert caught.value.code == ErrorCode.BAD_REQUEST
