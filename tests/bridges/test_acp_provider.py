"""A Python ACP agent asks the person at its editor through `AcpProvider`, on the real SDK.

The editor is a scripted SDK client (`tests/bridges/acp_peers.py`); the responses it gives are the
SDK's models: `AcceptElicitationResponse` / `DeclineElicitationResponse` /
`CancelElicitationResponse` (`action`, `content`) and `RequestPermissionResponse` whose `outcome`
is `AllowedOutcome` (`outcome: "selected"`, `optionId`) or `DeniedOutcome` (`"cancelled"`).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    ClientCapabilities,
    ContentToolCallContent,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationFormSessionMode,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)
from pydantic import BaseModel

from tests.bridges.acp_peers import (
    FORM_CAPABLE,
    Editor,
    QuestionAgent,
    Respond,
    ask,
    in_memory,
    over_stdio,
    start_session,
)

pytestmark = pytest.mark.anyio

PKG = {
    "id": "pkg",
    "question": "Which package manager?",
    "header": "Tooling",
    "options": [
        {"label": "pnpm (Recommended)", "description": "Fast, strict installs."},
        {"label": "npm"},
    ],
}
FEATURES = {
    "id": "features",
    "question": "Which features?",
    "multiSelect": True,
    "options": [{"label": "lint"}, {"label": "test"}],
}
NAME = {"id": "name", "question": "Project name?"}
PLAN = {
    "id": "plan",
    "question": "Approve this plan?",
    "detail": "1. Edit\n2. Test",
    "options": [{"label": "Approve"}, {"label": "Keep planning"}],
    "intent": {"kind": "plan-review", "approve": "Approve"},
}


def answering(*responses: BaseModel) -> Respond:
    """An editor's `respond` giving `responses` in turn."""
    queue = list(responses)

    async def respond(method: str, arguments: dict[str, Any]) -> BaseModel:
        return queue.pop(0)

    return respond


def chosen(option_id: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option_id)
    )


CANCELLED = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


async def run(
    editor: Editor,
    questions: list[dict[str, Any]],
    capabilities: ClientCapabilities | None = None,
    **extra: Any,
) -> Any:
    """Prompt a `QuestionAgent` in memory to ask `questions`; what it replied."""
    with anyio.fail_after(10):
        async with in_memory(QuestionAgent(), editor) as (conn, _):
            session = await start_session(conn, capabilities)
            response = await ask(conn, session, questions, **extra)
    assert response.stop_reason == "end_turn"
    return json.loads(editor.messages[-1])


async def test_an_editor_that_shows_forms_gets_the_whole_batch_as_one_elicitation() -> None:
    content = {
        "pkg": "pnpm (Recommended)",
        "features": ["test", "lint"],
        "name": "shop",
        "plan": "Approve",
    }
    editor = Editor(answering(AcceptElicitationResponse(action="accept", content=content)))
    reply = await run(editor, [PKG, FEATURES, NAME, PLAN], FORM_CAPABLE, toolCallId="call-7")
    assert reply == {
        "answers": [
            {"id": "pkg", "selected": ["pnpm (Recommended)"]},
            {"id": "features", "selected": ["lint", "test"]},
            {"id": "name", "selected": [], "custom": "shop"},
            {"id": "plan", "selected": ["Approve"]},
        ]
    }
    [(method, arguments)] = editor.asked
    assert method == "elicitation/create"
    mode = arguments["mode"]
    assert isinstance(mode, ElicitationFormSessionMode)
    assert (mode.session_id, mode.tool_call_id) == ("session-1", "call-7")
    assert "1. Edit\n2. Test" in arguments["message"]
    schema = mode.requested_schema.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert schema["properties"]["pkg"]["oneOf"][0] == {
        "const": "pnpm (Recommended)",
        "title": "pnpm (Recommended)",
        "description": "Fast, strict installs.",
    }
    assert schema["properties"]["features"]["type"] == "array"
    assert schema["properties"]["name"] == {"type": "string", "title": "Project name?"}
    assert "required" not in schema


@pytest.mark.parametrize(
    "response",
    [DeclineElicitationResponse(action="decline"), CancelElicitationResponse(action="cancel")],
)
async def test_a_declined_or_cancelled_form_is_a_dismissal(response: BaseModel) -> None:
    reply = await run(Editor(answering(response)), [PKG, NAME], FORM_CAPABLE)
    assert reply == {"error": "ASK_CANCELLED"}


async def test_a_form_the_editor_refuses_is_elicitation_unsupported() -> None:
    async def refuse(method: str, arguments: dict[str, Any]) -> BaseModel:
        raise RequestError.method_not_found(method)

    reply = await run(Editor(refuse), [PKG], FORM_CAPABLE)
    assert reply == {"error": "ELICITATION_UNSUPPORTED"}


async def test_without_forms_each_question_is_a_permission_request_with_its_options() -> None:
    editor = Editor(answering(chosen("1"), chosen("0")))
    reply = await run(editor, [PKG, PLAN], toolCallId="call-7")
    assert reply == {
        "answers": [{"id": "pkg", "selected": ["npm"]}, {"id": "plan", "selected": ["Approve"]}]
    }
    (_, first), (_, second) = editor.asked
    tool_call = first["tool_call"]
    assert isinstance(tool_call, ToolCallUpdate)
    assert (tool_call.tool_call_id, tool_call.title) == ("call-7", "Which package manager?")
    [block] = tool_call.content or []
    assert isinstance(block, ContentToolCallContent)
    assert isinstance(block.content, TextContentBlock)
    assert block.content.text == "**Tooling**\n\n- **pnpm (Recommended)**: Fast, strict installs."
    assert [(o.option_id, o.name, o.kind) for o in first["options"]] == [
        ("0", "pnpm (Recommended)", "allow_once"),
        ("1", "npm", "allow_once"),
    ]
    assert [(o.name, o.kind) for o in second["options"]] == [
        ("Approve", "allow_once"),
        ("Keep planning", "reject_once"),
    ]
    assert not any(isinstance(update, ToolCallStart) for update in editor.updates)


async def test_without_a_tool_call_the_provider_reports_one_of_its_own() -> None:
    editor = Editor(answering(chosen("0")))
    await run(editor, [PKG])
    start, done = editor.updates[:2]
    assert isinstance(start, ToolCallStart)
    assert (start.title, start.status) == ("Which package manager?", "pending")
    assert isinstance(done, ToolCallProgress)
    assert (done.tool_call_id, done.status) == (start.tool_call_id, "completed")
    assert editor.asked[0][1]["tool_call"].tool_call_id == start.tool_call_id


@pytest.mark.parametrize("question", [FEATURES, NAME], ids=["multi-select", "free text"])
async def test_what_a_permission_request_cannot_carry_fails_before_anything_is_shown(
    question: dict[str, Any],
) -> None:
    editor = Editor(answering())
    reply = await run(editor, [PKG, question])
    assert reply == {"error": "ELICITATION_UNSUPPORTED"}
    assert editor.asked == []
    assert editor.updates[:-1] == []  # only the agent's reply


async def test_a_cancelled_permission_outcome_is_a_dismissal_and_fails_the_tool_call() -> None:
    editor = Editor(answering(CANCELLED))
    assert await run(editor, [PKG]) == {"error": "ASK_CANCELLED"}
    done = editor.updates[1]
    assert isinstance(done, ToolCallProgress)
    assert done.status == "failed"


async def test_an_option_id_that_was_not_offered_is_a_bad_answer() -> None:
    assert await run(Editor(answering(chosen("7"))), [PKG]) == {"error": "BAD_ANSWER"}


@pytest.mark.parametrize("capabilities", [None, FORM_CAPABLE], ids=["permission", "form"])
async def test_a_reply_the_sdk_cannot_read_is_a_bad_answer(
    capabilities: ClientCapabilities | None,
) -> None:
    async def garbled(method: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if method == "elicitation/create":
            return {"action": "accept", "content": "pnpm"}  # content must be an object
        return {"outcome": {"outcome": "selected"}}  # no optionId

    assert await run(Editor(garbled), [PKG], capabilities) == {"error": "BAD_ANSWER"}


@pytest.mark.parametrize("capabilities", [None, FORM_CAPABLE], ids=["permission", "form"])
async def test_session_cancel_mid_wait_cancels_the_ask(
    capabilities: ClientCapabilities | None,
) -> None:
    release = anyio.Event()

    async def hold(method: str, arguments: dict[str, Any]) -> BaseModel:
        await release.wait()  # a person who never answers, until the editor gives up
        if method == "elicitation/create":
            return CancelElicitationResponse(action="cancel")
        return CANCELLED

    editor = Editor(hold)
    with anyio.fail_after(10):
        async with in_memory(QuestionAgent(), editor) as (conn, _):
            session = await start_session(conn, capabilities)
            async with anyio.create_task_group() as tasks:

                async def cancel_when_asked() -> None:
                    await editor.wait_asked(1)
                    await conn.cancel(session_id=session)

                tasks.start_soon(cancel_when_asked)
                response = await ask(conn, session, [PKG])
            release.set()  # the editor answers as the protocol says: too late, and dropped
    assert response.stop_reason == "cancelled"
    assert editor.messages == []


async def test_over_stdio_the_agent_process_asks_through_forms_and_permissions() -> None:
    form = Editor(answering(AcceptElicitationResponse(action="accept", content={"name": "shop"})))
    permission = Editor(answering(chosen("0")))
    with anyio.fail_after(30):
        async with over_stdio(form) as conn:
            session = await start_session(conn, FORM_CAPABLE)
            await ask(conn, session, [NAME])
        async with over_stdio(permission) as conn:
            session = await start_session(conn)
            await ask(conn, session, [PKG])
    assert json.loads(form.messages[-1]) == {
        "answers": [{"id": "name", "selected": [], "custom": "shop"}]
    }
    assert json.loads(permission.messages[-1]) == {
        "answers": [{"id": "pkg", "selected": ["pnpm (Recommended)"]}]
    }
