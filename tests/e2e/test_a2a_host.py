"""A2A tasks are the host's requests, as durable as they are: a host killed and started again
while a task waits still has it (the same task for a client that sends its message again, and a
stream that hears its answer), and two `uq serve` nodes on one PostgreSQL database share every
task: asked on one, answered on the other, followed, pushed and canceled from either.

The hosts are real `uq serve` processes; the client is the official A2A SDK's.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import Client, ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

from tests.deadlines import within
from tests.e2e.host_process import HostProcess, answer_body, free_port
from tests.e2e.test_multinode import Nodes
from tests.receivers import HttpReceiver, http_receiver
from user_questions.host.a2a.parts import data_part

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

DEPLOY = {
    "id": "deploy",
    "question": "Deploy build 1.4.2 to production?",
    "options": [{"label": "Deploy"}, {"label": "Not now"}],
}


@contextlib.asynccontextmanager
async def a2a_client(host: HostProcess, *, streaming: bool = False) -> AsyncIterator[Client]:
    """The SDK's client of `host`'s inbox, with the agents' token."""
    token = host.asker_url.partition("?token=")[2]
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        config = ClientConfig(httpx_client=http, streaming=streaming)
        yield await create_client(host.base, client_config=config)


async def ask(
    client: Client, message_id: str, push: TaskPushNotificationConfig | None = None
) -> Task:
    message = Message(
        role=Role.ROLE_USER,
        message_id=message_id,
        parts=[data_part({"questions": [DEPLOY]})],
    )
    configuration = SendMessageConfiguration(return_immediately=True)
    if push is not None:
        configuration.task_push_notification_config.CopyFrom(push)
    request = SendMessageRequest(message=message, configuration=configuration)
    [event] = [event async for event in client.send_message(request)]
    return event.task


async def answer(host: HostProcess, task: Task, label: str) -> None:
    body = answer_body(task.id, f"a2a:{task.context_id}", {"id": "deploy", "selected": [label]})
    assert await anyio.to_thread.run_sync(host.respond, body) == {"accepted": True}


async def answered_while_followed(client: Client, host: HostProcess, task: Task) -> list[str]:
    """Subscribe to `task` through `client`, answer it on `host` once the stream has sent the
    task as it is, and return the kinds of the events the stream sent."""
    events: list[StreamResponse] = []
    ready = anyio.Event()

    async def follow() -> None:
        async for event in client.subscribe(SubscribeToTaskRequest(id=task.id)):
            events.append(event)
            ready.set()

    with within(20, "the stream to hear the answer"):
        async with anyio.create_task_group() as group:
            group.start_soon(follow)
            await ready.wait()
            await answer(host, task, "Deploy")
    return [str(event.WhichOneof("payload")) for event in events]


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostProcess]:
    running = HostProcess(tmp_path / "uq.db", port=free_port())
    running.start()
    yield running
    if running.process is not None and running.process.poll() is None:
        assert running.stop() == 0, running.stderr


async def test_a_task_outlives_a_killed_host(host: HostProcess) -> None:
    message_id = str(uuid.uuid4())
    async with a2a_client(host) as client:
        task = await ask(client, message_id)
    await anyio.to_thread.run_sync(host.kill)
    await anyio.to_thread.run_sync(host.start)  # the same store and port
    async with a2a_client(host) as client, a2a_client(host, streaming=True) as streaming:
        again = await client.get_task(GetTaskRequest(id=task.id))
        assert again.status.state == TaskState.TASK_STATE_WORKING
        assert (await ask(client, message_id)).id == task.id  # sent again: the same task
        kinds = await answered_while_followed(streaming, host, task)
        assert kinds == ["task", "artifact_update", "status_update"]
        done = await client.get_task(GetTaskRequest(id=task.id))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert done.artifacts[0].parts[1].text == "Deploy"


@pytest.fixture
def nodes(pg_url: str) -> Iterator[Nodes]:
    with ExitStack() as stack:
        yield Nodes(pg_url, stack)


@pytest.fixture
def receiver() -> Iterator[HttpReceiver]:
    with http_receiver() as running:
        yield running


async def test_two_nodes_share_every_task(nodes: Nodes, receiver: HttpReceiver) -> None:
    node_a, node_b = nodes.start("--a2a-push-private"), nodes.start("--a2a-push-private")
    push = TaskPushNotificationConfig(url=f"http://{receiver.netloc}/hook", token="t-1")
    async with (
        a2a_client(node_a) as on_a,
        a2a_client(node_b) as on_b,
        a2a_client(node_a, streaming=True) as streaming_a,
    ):
        task = await ask(on_a, str(uuid.uuid4()), push)
        assert (await on_b.get_task(GetTaskRequest(id=task.id))).id == task.id
        kinds = await answered_while_followed(streaming_a, node_b, task)  # asked on a, on b
        assert kinds == ["task", "artifact_update", "status_update"]
        for client in (on_a, on_b):
            done = await client.get_task(GetTaskRequest(id=task.id))
            assert done.status.state == TaskState.TASK_STATE_COMPLETED
        [post] = await anyio.to_thread.run_sync(receiver.posts.wait_for, 1)
        pushed: dict[str, Any] = post.json["task"]
        assert (pushed["id"], pushed["status"]["state"]) == (task.id, "TASK_STATE_COMPLETED")
        assert post.headers["x-a2a-notification-token"] == "t-1"

        other = await ask(on_b, str(uuid.uuid4()))
        canceled = await on_a.cancel_task(CancelTaskRequest(id=other.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        read = await on_b.get_task(GetTaskRequest(id=other.id))
        assert read.status.state == TaskState.TASK_STATE_CANCELED
    await anyio.to_thread.run_sync(node_a.wait_pending, 0)
    assert len(receiver.posts.items) == 1  # pushed once, by the node that ended the task
