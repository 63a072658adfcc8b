"""A Python ACP client answers an agent's questions through our providers
(`acp_client_handlers`), on the real SDK.

The agent's requests are the SDK's: `AgentSideConnection.request_permission(session_id,
tool_call, options)` with a `ToolCallUpdate` (`kind`, `title`, `content` of
`ContentToolCallContent` / `FileEditToolCallContent` (`path`, `oldText`, `newText`) /
`TerminalToolCallContent`, `locations`, `rawInput`) and `PermissionOption`s (`optionId`, `name`,
`kind`); `AgentSideConnection.create_elicitation(message, mode)` with an
`ElicitationFormSessionMode` whose `requestedSchema` holds string, number, integer, boolean,
titled single-select (`oneOf` of `EnumOption`: `const`, `title`, `description`) and titled
multi-select (`items.anyOf`) properties.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from acp import RequestError
from acp.agent.connection import AgentSideConnection
from acp.helpers import text_block, tool_content, tool_diff_content, tool_terminal_ref
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationUrlSessionMode,
    PermissionOption,
    ToolCallLocation,
    ToolCallUpdate,
)

from tests.bridges.acp_peers import (
    Editor,
    QuestionAgent,
    ask,
    in_memory,
    over_stdio,
    start_session,
)
from user_questions import AskUserQuestionRequest, ErrorCode, ScriptedProvider, UserQuestionError
from user_questions.bridges.acp import MAX_ATTEMPTS, MAX_RENDERED, acp_client_handlers
from user_questions.providers.scripted import Script

pytestmark = pytest.mark.anyio

OPTIONS = [
    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]
EDIT = ToolCallUpdate(
    tool_call_id="call-1",
    kind="edit",
    title="Edit src/app.py",
    content=[
        tool_content(text_block("Rename the entry point.")),
        tool_diff_content("src/app.py", "def start():\n    run()\n", "def main():\n    run()\n"),
        tool_terminal_ref("term-1"),
    ],
    locations=[ToolCallLocation(path="src/app.py", line=1)],
    raw_input={"path": "src/app.py", "old": "main", "new": "start"},
)
BOOKING = {
    "type": "object",
    "properties": {
        "room": {
            "type": "string",
            "title": "Room",
            "oneOf": [
                {"const": "dbl", "title": "Double", "description": "One large bed."},
                {"const": "twn", "title": "Twin"},
            ],
        },
        "extras": {
            "type": "array",
            "title": "Extras",
            "items": {
                "anyOf": [{"const": "spa", "title": "Spa"}, {"const": "gym", "title": "Gym"}]
            },
        },
        "breakfast": {"type": "boolean", "title": "Breakfast?"},
        "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 8},
        "note": {"type": "string", "title": "Anything else?"},
    },
    "required": ["room", "guests"],
}


@asynccontextmanager
async def agent_of(provider: Any) -> AsyncIterator[tuple[AgentSideConnection, Editor]]:
    """The agent's connection to an editor whose questions `provider` answers."""
    editor = Editor(handlers=acp_client_handlers(provider))
    with anyio.fail_after(10):
        async with in_memory(QuestionAgent(), editor) as (conn, agent_conn):
            await start_session(conn, editor.handlers.capabilities if editor.handlers else None)
            yield agent_conn, editor


async def permission(script: Script, tool_call: ToolCallUpdate = EDIT) -> tuple[Any, Any]:
    """The agent asks for permission; the outcome and what the person was asked."""
    provider = ScriptedProvider(script)
    async with agent_of(provider) as (agent_conn, _):
        response = await agent_conn.request_permission("session-1", tool_call, OPTIONS)
    return response.outcome, provider.seen


async def elicit(script: Script, schema: dict[str, Any] = BOOKING) -> tuple[Any, Any]:
    """The agent asks for the form; the response and what the person was asked."""
    provider = ScriptedProvider(script)
    mode = ElicitationFormSessionMode(
        session_id="session-1", requested_schema=ElicitationSchema.model_validate(schema)
    )
    async with agent_of(provider) as (agent_conn, _):
        response = await agent_conn.create_elicitation("Book the hotel", mode)
    return response, provider.seen


async def test_a_permission_request_is_one_question_rendered_for_a_person() -> None:
    outcome, seen = await permission({"permission": "Always allow"})
    assert outcome == AllowedOutcome(outcome="selected", option_id="always")
    [question] = seen[0].questions
    assert (question.header, question.question) == ("Edit", "Edit src/app.py")
    assert [(o.label, o.description) for o in question.options] == [
        ("Allow", "Allow this time."),
        ("Always allow", "Allow, and do not ask again."),
        ("Reject", "Reject this time."),
    ]
    assert question.detail == (
        "Rename the entry point.\n\n"
        "`src/app.py`\n\n```diff\n--- src/app.py\n+++ src/app.py\n@@ -1,2 +1,2 @@\n"
        "-def main():\n+def start():\n     run()\n```\n\n"
        "Terminal `term-1`\n\n"
        "Files: `src/app.py:1`\n\n"
        '```json\n{\n  "path": "src/app.py",\n  "old": "main",\n  "new": "start"\n}\n```'
    )


async def test_a_new_file_and_a_long_raw_input_are_shown_within_bounds() -> None:
    tool_call = ToolCallUpdate(
        tool_call_id="call-2",
        content=[tool_diff_content("notes.md", "hello\n")],
        raw_input={"text": "x" * (MAX_RENDERED + 50)},
    )
    _, seen = await permission({"permission": "Reject"}, tool_call)
    [question] = seen[0].questions
    assert (question.header, question.question) == ("Tool call", "Allow this tool call?")
    detail = question.detail or ""
    assert detail.startswith("`notes.md` (new file)\n\n```diff\n--- /dev/null\n+++ notes.md\n")
    assert "more characters not shown" in detail
    assert detail.endswith("\n```")
    assert len(detail) < MAX_RENDERED + 500


def timed_out(request: AskUserQuestionRequest) -> Any:
    raise UserQuestionError("ask_user_question timed out", ErrorCode.ASK_TIMED_OUT)


@pytest.mark.parametrize(
    "script",
    [{"permission": None}, {}, timed_out],
    ids=["skipped", "dismissed", "timed out"],
)
async def test_a_skip_a_dismissal_or_a_timeout_answers_cancelled(script: Script) -> None:
    outcome, _ = await permission(script)
    assert outcome == DeniedOutcome(outcome="cancelled")


async def test_typed_text_naming_an_option_takes_it_and_other_text_is_asked_again() -> None:
    outcome, _ = await permission({"permission": {"selected": [], "custom": "reject"}})
    assert outcome == AllowedOutcome(outcome="selected", option_id="no")
    outcome, seen = await permission({"permission": {"selected": [], "custom": "maybe"}})
    assert outcome == DeniedOutcome(outcome="cancelled")
    assert len(seen) == MAX_ATTEMPTS
    assert (seen[1].questions[0].detail or "").startswith(
        "Your last answer was not accepted: choose one of the options rather than typing"
    )


async def test_a_permission_request_without_options_is_refused_as_invalid_params() -> None:
    async with agent_of(ScriptedProvider({})) as (agent_conn, _):
        with pytest.raises(RequestError) as caught:
            await agent_conn.request_permission("session-1", EDIT, [])
    assert caught.value.code == -32602


async def test_options_of_the_same_name_stay_apart() -> None:
    twice = [
        PermissionOption(option_id="a", name="Allow", kind="allow_once"),
        PermissionOption(option_id="b", name="Allow", kind="allow_always"),
    ]
    provider = ScriptedProvider({"permission": "Allow (b)"})
    async with agent_of(provider) as (agent_conn, _):
        response = await agent_conn.request_permission("session-1", EDIT, twice)
    assert response.outcome == AllowedOutcome(outcome="selected", option_id="b")


async def test_a_provider_failure_reaches_the_agent_as_an_internal_error() -> None:
    def broken(request: AskUserQuestionRequest) -> Any:
        raise UserQuestionError("the host is gone", ErrorCode.HOST_UNREACHABLE)

    with pytest.raises(RequestError) as caught:
        await permission(broken)
    assert caught.value.code == -32603
    assert "HOST_UNREACHABLE: the host is gone" in json.dumps(caught.value.data)


async def test_a_form_becomes_one_question_per_field_with_typed_values_back() -> None:
    response, seen = await elicit(
        {
            "room": "Double",
            "extras": ["Gym", "Spa"],
            "breakfast": "Yes",
            "guests": {"selected": [], "custom": "2"},
            "note": None,
        }
    )
    assert response == AcceptElicitationResponse(
        action="accept",
        content={"room": "dbl", "extras": ["spa", "gym"], "breakfast": True, "guests": 2},
    )
    questions = {question.id: question for question in seen[0].questions}
    assert [(o.label, o.description) for o in questions["room"].options or ()] == [
        ("Double", "One large bed."),
        ("Twin", None),
    ]
    assert questions["extras"].multi_select is True
    assert (questions["room"].detail or "").startswith("Book the hotel")


async def test_a_required_field_skipped_declines_the_form() -> None:
    skip_all = dict.fromkeys(BOOKING["properties"])
    response, _ = await elicit(skip_all)
    assert response == DeclineElicitationResponse(action="decline")


async def test_a_url_elicitation_is_refused_as_invalid_params() -> None:
    mode = ElicitationUrlSessionMode(
        session_id="session-1", elicitation_id="e-1", url="https://example.com/login"
    )
    async with agent_of(ScriptedProvider({})) as (agent_conn, _):
        with pytest.raises(RequestError) as caught:
            await agent_conn.create_elicitation("Log in", mode)
    assert caught.value.code == -32602


async def test_cancelling_a_session_withdraws_what_waits_and_answers_cancelled() -> None:
    shown = anyio.Event()

    async def never_answers(request: AskUserQuestionRequest) -> dict[str, Any]:
        shown.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def cancel_when_shown(editor: Editor) -> None:
        await shown.wait()
        assert editor.handlers is not None
        editor.handlers.cancel("session-1")

    async with (
        agent_of(ScriptedProvider(never_answers)) as (agent_conn, editor),
        anyio.create_task_group() as tasks,
    ):
        tasks.start_soon(cancel_when_shown, editor)
        response = await agent_conn.request_permission("session-1", EDIT, OPTIONS)
    assert response.outcome == DeniedOutcome(outcome="cancelled")


def by_question(script: dict[str, Any]) -> Script:
    """A script answering each request's first question by its text (ids repeat across
    permission requests)."""

    def answer(request: AskUserQuestionRequest) -> dict[str, Any]:
        question = request.questions[0]
        return {question.id: script[question.question]}

    return answer


async def test_our_questions_go_both_ways_through_forms_and_permissions() -> None:
    batch: list[dict[str, Any]] = [
        {"id": "pkg", "question": "Which package manager?", "options": [{"label": "pnpm"}]},
        {"id": "name", "question": "Project name?"},
    ]
    form = Editor(
        handlers=acp_client_handlers(
            ScriptedProvider({"pkg": None, "pkg.other": "bun", "name": "shop"})
        )
    )
    plan = {
        "id": "plan",
        "question": "Approve this plan?",
        "detail": "1. Edit",
        "options": [{"label": "Approve"}, {"label": "Keep planning"}],
        "intent": {"kind": "plan-review", "approve": "Approve"},
    }
    permissions = Editor(
        handlers=acp_client_handlers(
            ScriptedProvider(
                by_question(
                    {"Which package manager?": "pnpm", "Approve this plan?": "Keep planning"}
                )
            )
        )
    )
    with anyio.fail_after(30):
        async with in_memory(QuestionAgent(), form) as (conn, _):
            assert form.handlers is not None
            await ask(conn, await start_session(conn, form.handlers.capabilities), batch)
        async with over_stdio(permissions) as conn:
            await ask(conn, await start_session(conn), [batch[0], plan])
    assert json.loads(form.messages[-1]) == {
        "answers": [
            {"id": "pkg", "selected": [], "custom": "bun"},
            {"id": "name", "selected": [], "custom": "shop"},
        ]
    }
    assert json.loads(permissions.messages[-1]) == {
        "answers": [
            {"id": "pkg", "selected": ["pnpm"]},
            {"id": "plan", "selected": ["Keep planning"]},
        ]
    }
