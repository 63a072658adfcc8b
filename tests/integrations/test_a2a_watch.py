"""An A2A agent on the SDK's server that pauses for a person, answered from the inbox through
`uq a2a watch` (a real process) and `watch_task`: two input-requireds in turn, an auth-required,
a dismissal and a deadline (nothing sent to the agent), a task canceled under a waiting card, and
a watch killed and started again while its card waits."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from a2a.client import Client, ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Part,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
)

from tests.deadlines import within
from tests.host.a2a.conftest import Inbox
from tests.host.conftest import next_frame
from tests.integrations.a2a_agent import (
    AGENT_NAME,
    Pause,
    RunningAgent,
    ScriptedAgent,
    serving_agent,
)
from user_questions import UserQuestionError, connect
from user_questions.host.a2a.parts import data_part, json_of
from user_questions.host.hub import PageSubscription
from user_questions.integrations.a2a import watch_task
from user_questions.outcomes import RequestState

pytestmark = pytest.mark.anyio

NAME = Pause([Part(text="What should the repository be called?")])
LICENSE = Pause(
    [
        Part(text="Pick its license."),
        data_part(
            {
                "questions": [
                    {
                        "id": "license",
                        "question": "Which license?",
                        "options": [{"label": "MIT"}, {"label": "Apache-2.0"}],
                    }
                ]
            }
        ),
    ]
)
AUTHORIZE = Pause(
    [Part(text="I will push to the shared remote.")], TaskState.TASK_STATE_AUTH_REQUIRED
)


@contextlib.asynccontextmanager
async def orchestrating(running: RunningAgent) -> AsyncIterator[tuple[Client, Task]]:
    """The orchestrator's side: the SDK's client sends the first message; the task pauses."""
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(running.base, client_config=ClientConfig(httpx_client=http))
        request = SendMessageRequest(
            message=running.first_message(),
            configuration=SendMessageConfiguration(return_immediately=True),
        )
        with within(10, "the agent's first pause"):
            events = [event async for event in client.send_message(request)]
        yield client, await client.get_task(GetTaskRequest(id=events[0].task.id))


async def card(page: PageSubscription) -> dict[str, Any]:
    """The next card the inbox shows."""
    while True:
        frame = await next_frame(page)
        if "rpcId" in frame:
            return frame


async def watching(
    inbox: Inbox, running: RunningAgent, task_id: str, *args: str
) -> anyio.abc.Process:
    """`uq a2a watch` in a process of its own, with the agents' line of `uq serve` as UQ_URL."""
    env = {**os.environ, "UQ_URL": f"{inbox.base}/?token={inbox.agents_token}"}
    command = [sys.executable, "-m", "user_questions.cli", "a2a", "watch", running.base]
    return await anyio.open_process([*command, "--task", task_id, *args], env=env)


async def ended(process: anyio.abc.Process) -> tuple[int, str, str]:
    """The process's exit status, stdout and stderr, once it ends."""
    assert process.stdout is not None
    assert process.stderr is not None
    read: dict[str, str] = {}
    with within(30, "uq a2a watch to end"):
        async with anyio.create_task_group() as group:
            group.start_soon(_read_all, process.stdout, read, "out")
            group.start_soon(_read_all, process.stderr, read, "err")
        status = await process.wait()
    return status, read["out"], read["err"]


async def _read_all(stream: anyio.abc.ByteReceiveStream, into: dict[str, str], key: str) -> None:
    chunks = []
    with contextlib.suppress(anyio.EndOfStream):
        while True:
            chunks.append(await stream.receive())
    into[key] = b"".join(chunks).decode()


async def test_two_pauses_are_answered_in_the_inbox_and_the_task_completes(inbox: Inbox) -> None:
    agent = ScriptedAgent([NAME, LICENSE])
    page = inbox.hub.subscribe()
    async with serving_agent(agent) as running, orchestrating(running) as (client, task):
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        process = await watching(inbox, running, task.id)
        first = await card(page)
        assert first["payload"]["questions"] == [
            {"id": "reply", "question": "What should the repository be called?"}
        ]
        assert first["origin"]["client"] == AGENT_NAME
        await inbox.answer(first["rpcId"], {"id": "reply", "selected": [], "custom": "shop"})
        second = await card(page)
        [license_] = second["payload"]["questions"]
        assert (license_["id"], license_["detail"]) == ("license", "Pick its license.")
        await inbox.answer(second["rpcId"], {"id": "license", "selected": ["MIT"]})
        status, out, _ = await ended(process)
        assert (status, out) == (0, "completed\n")
        done = await client.get_task(GetTaskRequest(id=task.id))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert done.artifacts[0].parts[0].text == "shop | MIT"
        replies = agent.heard[1:]
        assert [json_of(reply.parts[0].data) for reply in replies] == [
            {"answers": [{"id": "reply", "selected": [], "custom": "shop"}]},
            {"answers": [{"id": "license", "selected": ["MIT"]}]},
        ]
        assert all(reply.task_id == task.id for reply in replies)


async def test_an_auth_required_asks_the_approval_card(inbox: Inbox) -> None:
    agent = ScriptedAgent([AUTHORIZE])
    page = inbox.hub.subscribe()
    async with serving_agent(agent) as running, orchestrating(running) as (_client, task):
        process = await watching(inbox, running, task.id)
        frame = await card(page)
        [question] = frame["payload"]["questions"]
        assert question["question"] == f"Allow {AGENT_NAME} to go on?"
        assert question["detail"] == "I will push to the shared remote."
        assert [option["label"] for option in question["options"]] == ["Allow", "Deny"]
        await inbox.answer(frame["rpcId"], {"id": "authorization", "selected": ["Allow"]})
        status, out, _ = await ended(process)
        assert (status, out) == (0, "completed\n")
        assert agent.heard[1].parts[1].text == "Allow"


async def test_a_dismissal_sends_the_agent_nothing_and_exits_3(inbox: Inbox) -> None:
    agent = ScriptedAgent([NAME])
    page = inbox.hub.subscribe()
    async with serving_agent(agent) as running, orchestrating(running) as (client, task):
        process = await watching(inbox, running, task.id)
        frame = await card(page)
        await inbox.dismiss(frame["rpcId"])
        status, out, err = await ended(process)
        assert (status, out) == (3, "")
        assert "cancelled" in err
        still = await client.get_task(GetTaskRequest(id=task.id))
        assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert len(agent.heard) == 1  # only the first message


async def test_a_task_canceled_under_a_waiting_card_withdraws_it(inbox: Inbox) -> None:
    agent = ScriptedAgent([NAME])
    page = inbox.hub.subscribe()
    async with serving_agent(agent) as running, orchestrating(running) as (client, task):
        process = await watching(inbox, running, task.id)
        frame = await card(page)
        await client.cancel_task(CancelTaskRequest(id=task.id))
        resolved = await next_frame(page)
        assert resolved["payload"]["settled"] == "withdrawn"
        status, out, _ = await ended(process)
        assert (status, out) == (5, "canceled\n")
        record = await inbox.store.get(frame["rpcId"])
        assert record is not None
        assert record.note == "the agent's task ended: canceled"


async def test_a_watch_killed_and_started_again_finds_its_card(inbox: Inbox) -> None:
    agent = ScriptedAgent([NAME])
    page = inbox.hub.subscribe()
    async with serving_agent(agent) as running, orchestrating(running) as (_client, task):
        first = await watching(inbox, running, task.id)
        frame = await card(page)
        first.send_signal(signal.SIGKILL)  # no withdrawal: the card stays
        await first.wait()
        again = await watching(inbox, running, task.id, "--json")
        await inbox.answer(frame["rpcId"], {"id": "reply", "selected": [], "custom": "shop"})
        status, out, _ = await ended(again)
        assert status == 0
        assert json.loads(out)["status"]["state"] == "TASK_STATE_COMPLETED"
        assert inbox.hub.pending_count == 0
        record = await inbox.store.get(frame["rpcId"])
        assert record is not None
        assert record.state == RequestState.ANSWERED  # the one card, re-attached and answered
        assert len(agent.heard) == 2


async def test_a_deadline_of_the_watch_sends_nothing(inbox: Inbox) -> None:
    agent = ScriptedAgent([NAME])
    url = f"{inbox.base}/?token={inbox.agents_token}"
    async with (
        serving_agent(agent, streaming=False) as running,  # followed by polling GetTask
        orchestrating(running) as (client, task),
        connect(url, session="w") as asker,
    ):
        with pytest.raises(UserQuestionError) as raised:
            await watch_task(client, task.id, asker, question_timeout=0.5, poll_interval=0.1)
        assert raised.value.code == "ASK_TIMED_OUT"
        assert len(agent.heard) == 1  # the first message alone: no answer was made up
        assert inbox.hub.pending_count == 0  # the card timed out, and is off every page
