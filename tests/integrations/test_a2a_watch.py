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
from dataclasses import dataclass
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


@dataclass
class Scene:
    """An agent on the SDK's server, its task paused by the orchestrator's first message, and the
    inbox's pages."""

    inbox: Inbox
    running: RunningAgent
    client: Client
    task: Task
    page: PageSubscription

    @property
    def agent(self) -> ScriptedAgent:
        return self.running.agent

    async def frame(self) -> dict[str, Any]:
        """The next frame the inbox's pages get (the watch is a process of its own, which
        takes a moment to start and to act)."""
        with within(20, "a frame of the inbox"):
            frame: dict[str, Any] = json.loads(await self.page.frames.receive())
        return frame

    async def card(self) -> dict[str, Any]:
        """The next card the inbox shows."""
        while "rpcId" not in (frame := await self.frame()):
            pass
        return frame

    async def watch(self, *args: str) -> anyio.abc.Process:
        """`uq a2a watch` of the task, in a process of its own, with the agents' line of `uq
        serve` as UQ_URL."""
        env = {**os.environ, "UQ_URL": f"{self.inbox.base}/?token={self.inbox.agents_token}"}
        command = [sys.executable, "-m", "user_questions.cli", "a2a", "watch", self.running.base]
        return await anyio.open_process([*command, "--task", self.task.id, *args], env=env)


@contextlib.asynccontextmanager
async def paused(inbox: Inbox, *pauses: Pause, streaming: bool = True) -> AsyncIterator[Scene]:
    """An agent that pauses at each of `pauses`; the orchestrator's client (the SDK's) has sent
    the first message."""
    page = inbox.hub.subscribe()
    async with (
        serving_agent(ScriptedAgent(pauses), streaming=streaming) as running,
        httpx.AsyncClient(timeout=30) as http,
    ):
        client = await create_client(running.base, client_config=ClientConfig(httpx_client=http))
        request = SendMessageRequest(
            message=running.first_message(),
            configuration=SendMessageConfiguration(return_immediately=True),
        )
        with within(10, "the agent's first pause"):
            events = [event async for event in client.send_message(request)]
        task = await client.get_task(GetTaskRequest(id=events[0].task.id))
        yield Scene(inbox, running, client, task, page)


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
    async with paused(inbox, NAME, LICENSE) as scene:
        assert scene.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        process = await scene.watch()
        first = await scene.card()
        assert first["payload"]["questions"] == [
            {"id": "reply", "question": "What should the repository be called?"}
        ]
        assert first["origin"]["client"] == AGENT_NAME
        await inbox.answer(first["rpcId"], {"id": "reply", "selected": [], "custom": "shop"})
        second = await scene.card()
        [license_] = second["payload"]["questions"]
        assert (license_["id"], license_["detail"]) == ("license", "Pick its license.")
        await inbox.answer(second["rpcId"], {"id": "license", "selected": ["MIT"]})
        status, out, _ = await ended(process)
        assert (status, out) == (0, "completed\n")
        done = await scene.client.get_task(GetTaskRequest(id=scene.task.id))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert done.artifacts[0].parts[0].text == "shop | MIT"
        replies = scene.agent.heard[1:]
        assert [json_of(reply.parts[0].data) for reply in replies] == [
            {"answers": [{"id": "reply", "selected": [], "custom": "shop"}]},
            {"answers": [{"id": "license", "selected": ["MIT"]}]},
        ]
        assert all(reply.task_id == scene.task.id for reply in replies)


async def test_an_auth_required_asks_the_approval_card(inbox: Inbox) -> None:
    async with paused(inbox, AUTHORIZE) as scene:
        process = await scene.watch()
        frame = await scene.card()
        [question] = frame["payload"]["questions"]
        assert question["question"] == f"Allow {AGENT_NAME} to go on?"
        assert question["detail"] == "I will push to the shared remote."
        assert [option["label"] for option in question["options"]] == ["Allow", "Deny"]
        await inbox.answer(frame["rpcId"], {"id": "authorization", "selected": ["Allow"]})
        status, out, _ = await ended(process)
        assert (status, out) == (0, "completed\n")
        assert scene.agent.heard[1].parts[1].text == "Allow"


async def test_a_dismissal_sends_the_agent_nothing_and_exits_3(inbox: Inbox) -> None:
    async with paused(inbox, NAME) as scene:
        process = await scene.watch()
        frame = await scene.card()
        await inbox.dismiss(frame["rpcId"])
        status, out, err = await ended(process)
        assert (status, out) == (3, "")
        assert "cancelled" in err
        still = await scene.client.get_task(GetTaskRequest(id=scene.task.id))
        assert still.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert len(scene.agent.heard) == 1  # only the first message


async def test_a_task_canceled_under_a_waiting_card_withdraws_it(inbox: Inbox) -> None:
    async with paused(inbox, NAME) as scene:
        process = await scene.watch()
        frame = await scene.card()
        await scene.client.cancel_task(CancelTaskRequest(id=scene.task.id))
        resolved = await scene.frame()
        assert resolved["payload"]["settled"] == "withdrawn"
        status, out, _ = await ended(process)
        assert (status, out) == (5, "canceled\n")
        record = await inbox.store.get(frame["rpcId"])
        assert record is not None
        assert record.note == "the agent's task ended: canceled"


async def test_a_watch_killed_and_started_again_finds_its_card(inbox: Inbox) -> None:
    async with paused(inbox, NAME) as scene:
        first = await scene.watch()
        frame = await scene.card()
        first.send_signal(signal.SIGKILL)  # no withdrawal: the card stays
        await first.wait()
        again = await scene.watch("--json")
        await inbox.answer(frame["rpcId"], {"id": "reply", "selected": [], "custom": "shop"})
        status, out, _ = await ended(again)
        assert status == 0
        assert json.loads(out)["status"]["state"] == "TASK_STATE_COMPLETED"
        assert inbox.hub.pending_count == 0
        record = await inbox.store.get(frame["rpcId"])
        assert record is not None
        assert record.state == RequestState.ANSWERED  # the one card, re-attached and answered
        assert len(scene.agent.heard) == 2


async def test_a_deadline_of_the_watch_sends_nothing(inbox: Inbox) -> None:
    url = f"{inbox.base}/?token={inbox.agents_token}"
    async with (
        paused(inbox, NAME, streaming=False) as scene,  # followed by polling GetTask
        connect(url, session="w") as asker,
    ):
        with pytest.raises(UserQuestionError) as raised:
            await watch_task(
                scene.client, scene.task.id, asker, question_timeout=0.5, poll_interval=0.1
            )
        assert raised.value.code == "ASK_TIMED_OUT"
        assert len(scene.agent.heard) == 1  # the first message alone: no answer was made up
        assert inbox.hub.pending_count == 0  # the card timed out, and is off every page
