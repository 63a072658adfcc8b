"""A2A's `ListTasks` on the inbox, through the official SDK's client over loopback HTTP, on both
stores: whose tasks a token lists, each filter, the pages, and the parameters refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from a2a.client import Client
from a2a.types import CancelTaskRequest, ListTasksRequest, ListTasksResponse, Part, TaskState

from tests.host.a2a.conftest import TOKEN, Inbox, asking, inbox_on, message, raw, sent_task
from tests.host.conftest import STORES
from user_questions.types import AskUserQuestionItem

pytestmark = pytest.mark.anyio

DEPLOY = {
    "id": "deploy",
    "question": "Deploy build 1.4.2 to production?",
    "options": [{"label": "Deploy"}, {"label": "Not now"}],
}


@pytest.fixture(params=STORES)
async def inbox(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Inbox]:
    """A host on each store: a SQLite file, then a fresh PostgreSQL database."""
    store = request.getfixturevalue("pg_url") if request.param == "postgresql" else None
    async with inbox_on(store or tmp_path / "host.db") as opened:
        yield opened


async def listed(client: Client, **fields: Any) -> ListTasksResponse:
    return await client.list_tasks(ListTasksRequest(**fields))


def ids(response: ListTasksResponse) -> list[str]:
    return [task.id for task in response.tasks]


async def ask(client: Client, text: str = "Deploy?", **fields: Any) -> str:
    """A new task asking `text`; its id."""
    return (await sent_task(client, message(Part(text=text), **fields))).id


async def test_an_asker_lists_its_own_tasks_and_an_admin_every_task(inbox: Inbox) -> None:
    agents = await inbox.client()
    first, second = await ask(agents), await ask(agents)
    other = await inbox.client(await inbox.token("other-bot"))
    theirs = await ask(other)
    question = AskUserQuestionItem(id="q", question="Not over A2A?")
    _, stop = await inbox.hub.submit("not-a2a", "agent-1", [question], asked_by="agents")
    stop()
    mine = await listed(agents)
    assert ids(mine) == [second, first]
    assert (mine.total_size, mine.page_size, mine.next_page_token) == (2, 50, "")
    assert ids(await listed(other)) == [theirs]
    admin = await inbox.client(TOKEN)
    assert ids(await listed(admin)) == [theirs, second, first]
    stranger = await inbox.client(await inbox.token("stranger"))
    assert ids(await listed(stranger)) == []


async def test_the_last_changed_task_comes_first(inbox: Inbox) -> None:
    client = await inbox.client()
    first, second = await ask(client), await ask(client)
    await inbox.answer(first, {"id": "reply", "selected": [], "custom": "yes"})
    assert ids(await listed(client)) == [first, second]


async def test_tasks_are_listed_by_context(inbox: Inbox) -> None:
    client = await inbox.client()
    one = await ask(client, context_id="release-1.4")
    await ask(client, context_id="release-1.5")
    alone = await ask(client)  # its context is the task itself
    assert ids(await listed(client, context_id="release-1.4")) == [one]
    assert ids(await listed(client, context_id=alone)) == [alone]
    assert ids(await listed(client, context_id="nowhere")) == []


async def test_tasks_are_listed_by_status(inbox: Inbox) -> None:
    client = await inbox.client()
    working = await sent_task(client, message(asking([DEPLOY])))
    completed = await sent_task(client, message(asking([DEPLOY])))
    rejected = await sent_task(client, message(asking([DEPLOY])))
    canceled = await sent_task(client, message(asking([DEPLOY])))
    await inbox.answer(completed.id, {"id": "deploy", "selected": ["Deploy"]})
    await inbox.dismiss(rejected.id)
    await client.cancel_task(CancelTaskRequest(id=canceled.id))
    for state, task in (
        (TaskState.TASK_STATE_WORKING, working),
        (TaskState.TASK_STATE_COMPLETED, completed),
        (TaskState.TASK_STATE_REJECTED, rejected),
        (TaskState.TASK_STATE_CANCELED, canceled),
    ):
        response = await listed(client, status=state)
        assert ids(response) == [task.id], state
        assert response.tasks[0].status.state == state
        assert response.total_size == 1
    for never in (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_FAILED):
        assert (await listed(client, status=never)).total_size == 0


async def test_tasks_are_listed_by_when_their_status_last_changed(inbox: Inbox) -> None:
    client = await inbox.client()
    first = await ask(client)
    second = await sent_task(client, message(Part(text="Ship it?")))
    since = second.status.timestamp
    assert ids(await listed(client, status_timestamp_after=since)) == [second.id]
    await inbox.answer(first, {"id": "reply", "selected": [], "custom": "yes"})
    assert ids(await listed(client, status_timestamp_after=since)) == [first, second.id]


async def test_artifacts_only_when_asked_for_and_the_history_as_long_as_asked(
    inbox: Inbox,
) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([DEPLOY])))
    await inbox.answer(task.id, {"id": "deploy", "selected": ["Deploy"]})
    [plain] = (await listed(client)).tasks
    assert plain.status.state == TaskState.TASK_STATE_COMPLETED
    assert not plain.artifacts
    assert len(plain.history) == 1
    [full] = (await listed(client, include_artifacts=True, history_length=0)).tasks
    [artifact] = full.artifacts
    assert [part.text for part in artifact.parts if part.text] == ["Deploy"]
    assert not full.history


async def test_pages_cover_every_task_once_while_tasks_change(inbox: Inbox) -> None:
    client = await inbox.client()
    asked = [await ask(client, f"Question {index}?") for index in range(5)]
    first = await listed(client, page_size=2)
    assert ids(first) == asked[:2:-1]
    assert (first.total_size, first.page_size) == (5, 2)
    await ask(client, "Asked between two pages?")  # above the cursor: the next listing's
    second = await listed(client, page_size=2, page_token=first.next_page_token)
    assert ids(second) == [asked[2], asked[1]]
    third = await listed(client, page_size=2, page_token=second.next_page_token)
    assert ids(third) == [asked[0]]
    assert third.next_page_token == ""
    assert third.total_size == 6


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"pageSize": 0}, "pageSize must be from 1 to 100"),
        ({"pageSize": 101}, "pageSize must be from 1 to 100"),
        ({"historyLength": -1}, "historyLength must not be negative"),
        ({"pageToken": "not a token"}, "invalid pageToken"),
        ({"status": 42}, "no task state"),
    ],
)
async def test_bad_parameters_are_invalid_params_with_a_code(
    inbox: Inbox, params: dict[str, Any], says: str
) -> None:
    response = await raw(inbox, "ListTasks", params)
    error = response["error"]
    assert error["code"] == -32602
    assert says in error["message"]
    [info] = error["data"]
    assert info["metadata"] == {"code": "BAD_REQUEST"}


async def test_every_node_sharing_a_postgresql_store_lists_the_same_tasks(pg_url: str) -> None:
    async with inbox_on(pg_url) as first, inbox_on(pg_url) as second:
        asked = await ask(await first.client())
        here, there = await first.client(), await second.client()
        assert ids(await listed(there)) == [asked]
        await first.answer(asked, {"id": "reply", "selected": [], "custom": "yes"})
        [task] = (await listed(there, include_artifacts=True)).tasks
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert [part.text for part in task.artifacts[0].parts if part.text] == ["yes"]
        assert ids(await listed(here)) == [asked]
