"""An A2A client (the official SDK's) asks the inbox of a real `uq serve` through its public Agent
Card, and a person answers in Chromium: the task completes with the answer, or is rejected when
the card is dismissed.

The client runs on the portal's event loop: `create_client(base_url)` with the agents' token as
its bearer header, JSON-RPC, `return_immediately`; the test drives the page from the main thread.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from a2a.client import Client, ClientConfig, create_client
from a2a.types import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
)
from anyio.from_thread import BlockingPortal
from playwright.sync_api import expect

from tests.e2e.web.conftest import Host, OpenInbox
from user_questions.host.a2a.parts import data_part, json_of

pytestmark = pytest.mark.e2e

RELEASE = [
    {
        "id": "deploy",
        "header": "Deploy",
        "question": "Deploy build 1.4.2 to production?",
        "options": [{"label": "Deploy", "description": "Every region"}, {"label": "Not now"}],
    },
    {
        "id": "features",
        "question": "Which features ship first?",
        "multiSelect": True,
        "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}],
    },
]


@dataclass
class Orchestrator:
    """An A2A client of the inbox, living on the portal's event loop."""

    http: httpx.AsyncClient
    client: Client

    @classmethod
    async def open(cls, host: Host) -> Orchestrator:
        token = host.asker_url.partition("?token=")[2]
        http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        config = ClientConfig(httpx_client=http, streaming=False)
        return cls(http, await create_client(host.base, client_config=config))

    async def send(self, session: str, *parts: Part) -> Task:
        """Ask, returning at once; the task is filed under `a2a:<session>` in the inbox."""
        message = Message(
            role=Role.ROLE_USER, message_id=str(uuid.uuid4()), context_id=session, parts=list(parts)
        )
        request = SendMessageRequest(
            message=message, configuration=SendMessageConfiguration(return_immediately=True)
        )
        [event] = [event async for event in self.client.send_message(request)]
        return event.task

    async def get(self, task_id: str) -> Task:
        return await self.client.get_task(GetTaskRequest(id=task_id))

    async def close(self) -> None:
        await self.client.close()
        await self.http.aclose()


@pytest.fixture
def orchestrator(portal: BlockingPortal, host: Host) -> Any:
    opened = portal.call(Orchestrator.open, host)
    yield opened
    portal.call(opened.close)


def test_a_task_asked_over_a2a_is_answered_in_the_browser(
    portal: BlockingPortal, open_inbox: OpenInbox, orchestrator: Orchestrator, session: str
) -> None:
    inbox = open_inbox()
    task = portal.call(
        orchestrator.send, session, Part(text="Release planning"), data_part({"questions": RELEASE})
    )
    assert task.status.state == TaskState.TASK_STATE_WORKING  # back at once, while it waits
    card = inbox.card(f"a2a:{session}")
    expect(card).to_contain_text("Release planning")
    expect(card).to_contain_text("a2a")  # where it comes from
    card.locator(".option", has_text="Deploy").first.click()
    card.get_by_role("button", name="Next").click()
    card.get_by_role("checkbox", name="Search").check()
    card.get_by_role("checkbox", name="Auth").check()
    card.get_by_role("button", name="Submit").click()
    expect(card).to_have_count(0)
    done = portal.call(orchestrator.get, task.id)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    [artifact] = done.artifacts
    data, text = artifact.parts
    assert json_of(data.data) == {
        "answers": [
            {"id": "deploy", "selected": ["Deploy"]},
            {"id": "features", "selected": ["Auth", "Search"]},
        ]
    }
    assert text.text == "Deploy: Deploy\nWhich features ship first?: Auth, Search"


def test_a_free_text_task_gets_the_typed_text(
    portal: BlockingPortal, open_inbox: OpenInbox, orchestrator: Orchestrator, session: str
) -> None:
    inbox = open_inbox()
    task = portal.call(orchestrator.send, session, Part(text="Which region should we use?"))
    card = inbox.card(f"a2a:{session}")
    expect(card).to_contain_text("Which region should we use?")
    card.get_by_role("textbox", name="Your answer").fill("eu-west-1")
    card.get_by_role("button", name="Submit").click()
    expect(card).to_have_count(0)
    done = portal.call(orchestrator.get, task.id)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert done.artifacts[0].parts[1].text == "eu-west-1"


def test_a_task_dismissed_in_the_browser_is_rejected_without_an_answer(
    portal: BlockingPortal, open_inbox: OpenInbox, orchestrator: Orchestrator, session: str
) -> None:
    inbox = open_inbox()
    task = portal.call(orchestrator.send, session, data_part({"questions": RELEASE[:1]}))
    card = inbox.card(f"a2a:{session}")
    card.get_by_role("button", name="Dismiss").click()
    expect(card).to_have_count(0)
    done = portal.call(orchestrator.get, task.id)
    assert done.status.state == TaskState.TASK_STATE_REJECTED
    assert not done.artifacts
