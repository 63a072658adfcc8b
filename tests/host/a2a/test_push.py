"""A2A push notifications: a webhook registered with the message, or afterwards, hears the ended
task once, with its token and credentials; its config is kept in the store and forgotten once
delivered; an address the host will not POST to is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from a2a.types import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError

from tests.deadlines import within
from tests.host.a2a.conftest import Inbox, asking, inbox_on, message, sent_task
from tests.host.a2a.test_server import DEPLOY
from tests.receivers import HttpReceiver, Request, http_receiver
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.a2a.push import PUSH_PREFIX, PushConfigs
from user_questions.host.stores.sqlite import SQLiteStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def receiver() -> Iterator[HttpReceiver]:
    with http_receiver() as running:
        yield running


async def posts(receiver: HttpReceiver, count: int) -> list[Request]:
    received: list[Request] = await anyio.to_thread.run_sync(receiver.posts.wait_for, count)
    return received


async def test_a_webhook_given_with_the_message_hears_the_ended_task_once(
    inbox: Inbox, receiver: HttpReceiver
) -> None:
    client = await inbox.client()
    config = TaskPushNotificationConfig(
        url=f"http://{receiver.netloc}/hook?k=1",
        token="task-secret",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="hook-credentials"),
    )
    request = SendMessageRequest(
        message=message(asking([DEPLOY])),
        configuration=SendMessageConfiguration(
            return_immediately=True, task_push_notification_config=config
        ),
    )
    [event] = [event async for event in client.send_message(request)]
    task = event.task
    listed = await client.list_task_push_notification_configs(
        ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    [kept] = listed.configs
    assert (kept.task_id, kept.url, kept.token) == (task.id, config.url, "task-secret")
    await inbox.answer(task.id, {"id": "deploy", "selected": ["Deploy"]})
    [post] = await posts(receiver, 1)
    assert post.path == "/hook?k=1"
    assert post.headers["x-a2a-notification-token"] == "task-secret"
    assert post.headers["authorization"] == "Bearer hook-credentials"
    assert post.headers["content-type"] == "application/a2a+json"
    pushed = post.json["task"]
    assert (pushed["id"], pushed["status"]["state"]) == (task.id, "TASK_STATE_COMPLETED")
    assert pushed["artifacts"][0]["parts"][1]["text"] == "Deploy"
    with within(10, "the delivered config to be forgotten"):
        while await inbox.store.settings_under(PUSH_PREFIX):  # noqa: ASYNC110 - the store's
            await anyio.sleep(0.02)
    assert len(receiver.posts.items) == 1


async def test_a_webhook_added_after_the_task_ended_hears_it_at_once(
    inbox: Inbox, receiver: HttpReceiver
) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([DEPLOY])))
    await inbox.dismiss(task.id)
    await client.create_task_push_notification_config(
        TaskPushNotificationConfig(task_id=task.id, url=f"http://{receiver.netloc}/late")
    )
    [post] = await posts(receiver, 1)
    assert post.json["task"]["status"]["state"] == "TASK_STATE_REJECTED"


async def test_a_task_ending_after_a_restart_is_pushed_before_any_a2a_request(
    tmp_path: Path, receiver: HttpReceiver
) -> None:
    """The SDK is loaded when first needed: a task ending on a host nobody has called over A2A
    since it started still loads it, and its webhook hears the end."""
    async with inbox_on(tmp_path / "host.db") as first:
        client = await first.client()
        task = await sent_task(client, message(asking([DEPLOY])))
        await client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task.id, url=f"http://{receiver.netloc}/restart")
        )
    async with inbox_on(tmp_path / "host.db") as second:
        await second.dismiss(task.id)
        [post] = await posts(receiver, 1)
    assert post.json["task"]["status"]["state"] == "TASK_STATE_REJECTED"


async def test_configs_are_read_and_deleted_by_id(inbox: Inbox, receiver: HttpReceiver) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([DEPLOY])))
    made = await client.create_task_push_notification_config(
        TaskPushNotificationConfig(task_id=task.id, url=f"http://{receiver.netloc}/a")
    )
    assert made.id  # the host names a config that has no id
    read = await client.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=task.id, id=made.id)
    )
    assert read.url == made.url
    await client.delete_task_push_notification_config(
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=made.id)
    )
    await client.delete_task_push_notification_config(  # again: nothing happens
        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=made.id)
    )
    with pytest.raises(TaskNotFoundError):
        await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id=made.id)
        )
    stranger = await inbox.client(await inbox.token("stranger"))
    with pytest.raises(TaskNotFoundError):
        await stranger.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task.id, url=f"http://{receiver.netloc}/b")
        )
    with pytest.raises(InvalidParamsError, match="must be an http"):
        await client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task.id, url="file:///etc/passwd")
        )


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://10.1.2.3/hook",
        "http://[::1]/x",
        "http://169.254.169.254/",
    ],
)
async def test_a_host_without_the_flag_refuses_private_addresses(tmp_path: Path, url: str) -> None:
    async with SQLiteStore(tmp_path / "host.db") as store:
        with pytest.raises(UserQuestionError, match="--a2a-push-private") as refused:
            await PushConfigs(store).add(TaskPushNotificationConfig(task_id="t", url=url))
        assert refused.value.code == ErrorCode.BAD_REQUEST
        assert await store.settings_under(PUSH_PREFIX) == {}
        await PushConfigs(store, allow_private=True).add(
            TaskPushNotificationConfig(task_id="t", url=url)
        )
