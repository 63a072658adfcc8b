"""The inbox as an A2A agent, driven by the official SDK's client over loopback HTTP: the card,
asking (text, our questions, an approval), how each task ends, refusals, and who sees what."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from a2a.client import (
    AuthInterceptor,
    Client,
    ClientCallContext,
    ClientCallInterceptor,
    ClientConfig,
    CredentialService,
    create_client,
)
from a2a.types import (
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    Part,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import (
    A2AError,
    ContentTypeNotSupportedError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf import json_format

from tests.deadlines import within
from tests.host.a2a.conftest import Inbox, asking, message, raw, send, sent_task
from tests.host.conftest import next_frame
from user_questions.frames import Approval
from user_questions.host.a2a.parts import data_part, json_of

pytestmark = pytest.mark.anyio

DEPLOY = {
    "id": "deploy",
    "header": "Deploy",
    "question": "Deploy build 1.4.2 to production?",
    "options": [{"label": "Deploy", "description": "Every region"}, {"label": "Not now"}],
}
FEATURES = {
    "id": "features",
    "question": "Which features ship first?",
    "multiSelect": True,
    "options": [{"label": "Auth"}, {"label": "Billing"}, {"label": "Search"}],
}


def answer_of(task: Task) -> tuple[Any, str]:
    """The answer artifact's data part and text part."""
    [artifact] = task.artifacts
    assert artifact.name == "answer"
    data, text = artifact.parts
    return json_of(data.data), text.text


def status_text(task: Task) -> str:
    return " ".join(part.text for part in task.status.message.parts)


async def get(client: Client, task_id: str, **fields: Any) -> Task:
    return await client.get_task(GetTaskRequest(id=task_id, **fields))


async def test_the_public_card_needs_no_token_and_names_no_person(inbox: Inbox) -> None:
    await inbox.token("ci-bot", routes=["alice", "@ops"])
    response = await inbox.http.get("/.well-known/agent-card.json")
    assert response.status_code == 200
    card = response.json()
    assert card["name"] == "Ask a person"
    assert [skill["id"] for skill in card["skills"]] == ["ask"]
    bearer = card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]
    assert bearer["scheme"] == "bearer"
    assert "asker's token" in bearer["description"]
    assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    assert card["capabilities"] == {
        "streaming": True,
        "pushNotifications": True,
        "extendedAgentCard": True,
    }
    assert card["supportedInterfaces"] == [
        {"url": f"{inbox.base}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    assert "alice" not in response.text
    assert "@ops" not in response.text
    again = await inbox.http.get(
        "/.well-known/agent-card.json", headers={"If-None-Match": response.headers["etag"]}
    )
    assert again.status_code == 304


async def test_the_endpoint_needs_a_token(inbox: Inbox) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
    refused = await inbox.http.post("/a2a", json=body, headers={"A2A-Version": "1.0"})
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "UNAUTHORIZED"


async def test_a_task_comes_back_at_once_and_completes_with_the_chosen_labels(
    inbox: Inbox,
) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([DEPLOY])))
    assert task.status.state == TaskState.TASK_STATE_WORKING
    assert not task.artifacts
    [frame] = inbox.hub.pending_frames()
    assert '"question":"Deploy build 1.4.2 to production?"' in frame
    assert f'"sessionId":"a2a:{task.context_id}"' in frame
    await inbox.answer(task.id, {"id": "deploy", "selected": ["Deploy"]})
    done = await get(client, task.id)
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer_of(done) == ({"answers": [{"id": "deploy", "selected": ["Deploy"]}]}, "Deploy")
    assert (
        json_format.MessageToDict(done.history[0])["parts"][0]["data"]["questions"][0]["id"]
        == "deploy"
    )


async def test_a_text_part_asks_a_free_text_question_answered_with_typed_text(
    inbox: Inbox,
) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(Part(text="Which region?\n\nWe have **two**.")))
    record = await inbox.store.get(task.id)
    assert record is not None
    [question] = record.questions
    assert (question.id, question.question, question.detail) == (
        "reply",
        "Which region?",
        "We have **two**.",
    )
    await inbox.answer(task.id, {"id": "reply", "selected": [], "custom": "eu-west-1"})
    data, text = answer_of(await get(client, task.id))
    assert data == {"answers": [{"id": "reply", "selected": [], "custom": "eu-west-1"}]}
    assert text == "eu-west-1"


async def test_several_questions_are_one_request_and_the_text_says_each_answer(
    inbox: Inbox,
) -> None:
    client = await inbox.client()
    task = await sent_task(
        client, message(Part(text="Release planning"), asking([DEPLOY, FEATURES]))
    )
    record = await inbox.store.get(task.id)
    assert record is not None
    assert [q.id for q in record.questions] == ["deploy", "features"]
    assert record.questions[0].detail == "Release planning"  # the text, shown with the questions
    await inbox.answer(
        task.id,
        {"id": "deploy", "selected": [], "custom": "after the freeze"},
        {"id": "features", "selected": ["Auth", "Search"]},
    )
    _, text = answer_of(await get(client, task.id))
    assert text == "Deploy: after the freeze\nWhich features ship first?: Auth, Search"


async def test_a_stream_sends_the_task_then_the_answer_and_the_end(inbox: Inbox) -> None:
    client = await inbox.client(streaming=True)
    events: list[Any] = []
    async with anyio.create_task_group() as group:
        group.start_soon(collect, client, message(asking([DEPLOY])), events)
        with within(10, "the task to be asked"):
            frame = await next_frame(inbox.hub.subscribe())
        await inbox.answer(frame["rpcId"], {"id": "deploy", "selected": ["Not now"]})
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds == ["task", "artifact_update", "status_update"]
    assert events[0].task.status.state == TaskState.TASK_STATE_WORKING
    assert events[1].artifact_update.artifact.parts[1].text == "Not now"
    assert events[2].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_a_blocking_message_returns_once_the_person_answered(inbox: Inbox) -> None:
    client = await inbox.client()
    events: list[Any] = []
    async with anyio.create_task_group() as group:
        group.start_soon(collect, client, message(asking([DEPLOY])), events, False)
        with within(10, "the task to be asked"):
            frame = await next_frame(inbox.hub.subscribe())
        assert events == []  # still waiting for the person
        await inbox.answer(frame["rpcId"], {"id": "deploy", "selected": ["Deploy"]})
    [event] = events
    assert event.task.status.state == TaskState.TASK_STATE_COMPLETED


async def test_a_dismissal_rejects_the_task_without_an_answer(inbox: Inbox) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([DEPLOY])))
    await inbox.dismiss(task.id)
    done = await get(client, task.id)
    assert done.status.state == TaskState.TASK_STATE_REJECTED
    assert not done.artifacts
    assert "dismissed" in status_text(done)


async def test_canceling_withdraws_the_card_from_every_page(inbox: Inbox) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([DEPLOY])))
    page = inbox.hub.subscribe()
    assert len(page.snapshot) == 1  # the card, on the page
    canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    resolved = await next_frame(page)
    assert resolved["payload"]["settled"] == "withdrawn"
    record = await inbox.store.get(task.id)
    assert record is not None
    assert record.note == "its asker canceled the A2A task"
    again = await client.cancel_task(CancelTaskRequest(id=task.id))  # idempotent
    assert again.status.state == TaskState.TASK_STATE_CANCELED
    assert not again.artifacts


async def test_an_answered_task_cannot_be_canceled(inbox: Inbox) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([DEPLOY])))
    await inbox.answer(task.id, {"id": "deploy", "selected": ["Deploy"]})
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(CancelTaskRequest(id=task.id))


async def test_a_deadline_fails_the_task_with_its_reason_never_an_answer(inbox: Inbox) -> None:
    client = await inbox.client(await inbox.token("hurried", deadline="1s"), streaming=True)
    events = await send(client, message(asking([DEPLOY])))  # the stream, until the task ends
    assert [event.WhichOneof("payload") for event in events] == ["task", "status_update"]
    assert events[1].status_update.status.state == TaskState.TASK_STATE_FAILED
    failed = await get(client, events[0].task.id)
    assert failed.status.state == TaskState.TASK_STATE_FAILED
    assert status_text(failed) == "Nobody answered in time: its asker's deadline passed."
    assert not failed.artifacts


async def test_the_same_message_sent_again_is_the_same_task(inbox: Inbox) -> None:
    client = await inbox.client()
    first = await sent_task(client, message(asking([DEPLOY]), message_id="m-1"))
    again = await sent_task(client, message(asking([DEPLOY]), message_id="m-1"))
    assert again.id == first.id
    assert inbox.hub.pending_count == 1
    with pytest.raises(InvalidParamsError, match="already names another request"):
        await sent_task(client, message(asking([FEATURES]), message_id="m-1"))
    other = await inbox.client(await inbox.token("other-bot"))
    elsewhere = await sent_task(other, message(asking([DEPLOY]), message_id="m-1"))
    assert elsewhere.id != first.id  # another token's message is another task


async def test_a_task_is_reached_only_with_the_token_that_asked(inbox: Inbox) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([DEPLOY])))
    stranger = await inbox.client(await inbox.token("stranger"))
    with pytest.raises(TaskNotFoundError):
        await get(stranger, task.id)
    with pytest.raises(TaskNotFoundError):
        await stranger.cancel_task(CancelTaskRequest(id=task.id))
    assert inbox.hub.pending_count == 1
    admin = await inbox.client("test-token-a2a")
    assert (await get(admin, task.id)).id == task.id


@pytest.mark.parametrize(
    ("parts", "error", "code"),
    [
        (
            [Part(url="https://example.com/a.pdf", filename="a.pdf")],
            ContentTypeNotSupportedError,
            "BAD_REQUEST",
        ),
        ([asking([DEPLOY, DEPLOY])], InvalidParamsError, "BAD_QUESTION"),
        ([asking([{"id": "x"}])], InvalidParamsError, "BAD_REQUEST"),
        ([asking([])], InvalidParamsError, "EMPTY_QUESTIONS"),
        ([Part(text="  ")], InvalidParamsError, "EMPTY_QUESTIONS"),
        ([asking([{"id": "x", "question": "q" * 10_001}])], InvalidParamsError, "LIMIT_EXCEEDED"),
        ([data_part({"what": "not ours"})], ContentTypeNotSupportedError, "BAD_REQUEST"),
    ],
)
async def test_a_message_that_cannot_be_asked_is_refused_with_a_code(
    inbox: Inbox, parts: list[Part], error: type[A2AError], code: str
) -> None:
    response = await raw(
        inbox, "SendMessage", {"message": json_format.MessageToDict(message(*parts))}
    )
    assert (
        response["error"]["code"]
        == {ContentTypeNotSupportedError: -32005, InvalidParamsError: -32602}[error]
    )
    [info] = response["error"]["data"]
    assert info["metadata"] == {"code": code}
    assert inbox.hub.pending_count == 0


async def test_a_message_naming_a_task_is_refused(inbox: Inbox) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([DEPLOY])))
    with pytest.raises(UnsupportedOperationError, match="waits for a person"):
        await sent_task(client, message(Part(text="hurry"), task_id=task.id))
    await inbox.answer(task.id, {"id": "deploy", "selected": ["Deploy"]})
    with pytest.raises(UnsupportedOperationError, match="has ended"):
        await sent_task(client, message(Part(text="again"), task_id=task.id))
    with pytest.raises(TaskNotFoundError):
        await sent_task(client, message(Part(text="who?"), task_id="no-such-task"))


async def test_an_approval_alone_asks_the_approval_card(inbox: Inbox) -> None:
    client = await inbox.client()
    approval = {"tool": "Bash", "input": {"command": "rm -rf build/"}}
    task = await sent_task(
        client, message(Part(text="cleaning up"), data_part({"approval": approval}))
    )
    record = await inbox.store.get(task.id)
    assert record is not None
    [card] = record.questions
    assert card.question == "Allow the agent to run Bash: rm -rf build/?"
    detail = card.detail or ""
    assert detail.startswith("```sh\nrm -rf build/\n```")  # the host writes the card
    assert detail.endswith("```text\ncleaning up\n```")  # the agent's words, quoted as such
    assert record.approval == Approval(tool="Bash", input={"command": "rm -rf build/"})
    await inbox.answer(task.id, {"id": "approval", "selected": [], "custom": "not today"})
    _, text = answer_of(await get(client, task.id))
    assert text == "not today"


REPLICAS = {
    "id": "scale",
    "question": "How should the service scale?",
    "schema": {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
            "canary": {"type": "boolean"},
        },
        "required": ["replicas"],
    },
}


async def test_a_data_part_with_a_form_asks_it_and_the_answer_carries_the_value(
    inbox: Inbox,
) -> None:
    client = await inbox.client()
    task = await sent_task(client, message(asking([REPLICAS])))
    record = await inbox.store.get(task.id)
    assert record is not None
    assert record.questions[0].schema_ == REPLICAS["schema"]
    refused = await inbox.respond(
        task.id, {"id": "scale", "selected": [], "value": {"replicas": 11}}
    )
    assert (refused.accepted, refused.reason) == (False, "bad-response")
    assert "value.replicas: must be at most 10" in str(refused.message)
    await inbox.answer(
        task.id,
        {"id": "scale", "selected": [], "value": {"replicas": 3, "canary": True}, "note": "slowly"},
    )
    data, text = answer_of(await get(client, task.id))
    [item] = data["answers"]
    assert item["value"] == {"replicas": 3, "canary": True}
    assert item["note"] == "slowly"
    assert text == '{"replicas":3,"canary":true} (note: slowly)'


async def test_an_approval_allowed_with_changes_carries_the_changed_call(inbox: Inbox) -> None:
    client = await inbox.client()
    approval = {"tool": "Bash", "input": {"command": "rm -rf build/"}, "editable": True}
    task = await sent_task(client, message(data_part({"approval": approval})))
    changed = {"command": "rm -rf build/tmp"}
    await inbox.answer(task.id, {"id": "approval", "selected": ["Allow"], "edited": changed})
    data, text = answer_of(await get(client, task.id))
    assert data["answers"][0]["edited"] == changed
    assert text == 'Allow (changed to {"command":"rm -rf build/tmp"})'


async def test_the_extended_card_says_whom_the_token_reaches_and_when_it_gives_up(
    inbox: Inbox,
) -> None:
    client = await inbox.client(
        await inbox.token("ci-bot", routes=["alice", "@ops"], deadline="10m")
    )
    card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    assert [(skill.id, skill.name) for skill in card.skills] == [
        ("ask:alice", "Ask alice"),
        ("ask:@ops", "Ask the group @ops"),
    ]
    assert "goes to alice, the group @ops." in card.skills[0].description
    assert "not answered within 10m fails" in card.skills[0].description
    everyone = await (await inbox.client()).get_extended_agent_card(GetExtendedAgentCardRequest())
    assert [skill.name for skill in everyone.skills] == ["Ask every person on this inbox"]


async def test_subscribing_re_attaches_and_hears_the_answer(inbox: Inbox) -> None:
    asker = await inbox.client()
    task = await sent_task(asker, message(asking([DEPLOY])))
    follower = await inbox.client(streaming=True)
    events: list[Any] = []

    async def follow() -> None:
        async for event in follower.subscribe(SubscribeToTaskRequest(id=task.id)):
            events.append(event)
            if len(events) == 1:
                await inbox.answer(task.id, {"id": "deploy", "selected": ["Deploy"]})

    with within(10, "the subscription to end"):
        await follow()
    assert [event.WhichOneof("payload") for event in events] == [
        "task",
        "artifact_update",
        "status_update",
    ]
    with pytest.raises(UnsupportedOperationError, match="has ended"):
        async for _ in follower.subscribe(SubscribeToTaskRequest(id=task.id)):
            pass


# -- helpers ----------------------------------------------------------------------------------


async def collect(client: Client, sent: Any, into: list[Any], immediately: bool = True) -> None:
    into.extend(await send(client, sent, immediately=immediately))


async def test_the_sdks_auth_interceptor_finds_the_cards_bearer_scheme(inbox: Inbox) -> None:
    class AgentsToken(CredentialService):
        async def get_credentials(
            self, security_scheme_name: str, context: ClientCallContext | None
        ) -> str | None:
            return inbox.agents_token if security_scheme_name == "bearer" else None

    async with httpx.AsyncClient(timeout=30) as http:  # no header of its own
        config = ClientConfig(httpx_client=http, streaming=False)
        interceptors: list[ClientCallInterceptor] = [AuthInterceptor(AgentsToken())]
        client = await create_client(inbox.base, client_config=config, interceptors=interceptors)
        task = await sent_task(client, message(asking([DEPLOY])))
        assert task.status.state == TaskState.TASK_STATE_WORKING
        await client.close()


async def test_a_failure_of_the_host_is_an_internal_error_that_says_nothing_of_it(
    inbox: Inbox, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(rpc_id: str) -> None:
        raise RuntimeError("the secret inner workings")

    monkeypatch.setattr(inbox.store, "get", broken)
    response = await raw(inbox, "GetTask", {"id": "any"})
    assert response["error"]["code"] == -32603
    assert (
        response["error"]["message"] == "the host failed to handle this request; its log says why"
    )
    assert response["error"]["data"][0]["metadata"] == {"code": "INTERNAL_ERROR"}
    assert "the secret inner workings" not in str(response)
    assert "the secret inner workings" in caplog.text  # the traceback is the log's
