"""AG-UI interrupts of each reason asked as one request, and the resume list they give: resolved
with the payload AG-UI expects, cancelled for a skip or a dismissal, the deadline from
`expiresAt`, a form asked from `responseSchema`, a changed call resumed with `editedArgs` and a note
in the entry's metadata.

The interrupts and tool calls are the SDK's own types (`ag_ui.core`), shaped as in AG-UI's
interrupts document (docs/concepts/interrupts.mdx of ag-ui-protocol/ag-ui)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from ag_ui.core import FunctionCall, Interrupt, RunAgentInput, ToolCall

from tests.deadlines import within
from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    ScriptedProvider,
    UserQuestionError,
    connect,
)
from user_questions.integrations.ag_ui import resume_interrupts

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 4, 20, 16, 0, tzinfo=UTC)
SEND_EMAIL = ToolCall(
    id="tc-001",
    function=FunctionCall(name="sendEmail", arguments='{"to": "a@b.com", "subject": "Hi"}'),
)
APPROVE = Interrupt(
    id="int-abc123",
    reason="tool_call",
    message="Send email to a@b.com with subject 'Hi'?",
    tool_call_id="tc-001",
    response_schema={
        "type": "object",
        "properties": {"approved": {"type": "boolean"}},
        "required": ["approved"],
    },
)
CONFIRM = Interrupt(id="int-confirm", reason="confirmation", message="Archive the thread?")
NAME = Interrupt(
    id="int-name",
    reason="input_required",
    message="What should the repository be called?",
    response_schema={"type": "string"},
)


class Recorder(ScriptedProvider):
    """A scripted person that also keeps what it was asked."""

    def __init__(self, answers: Mapping[str, Any]) -> None:
        super().__init__(answers)
        self.asked: list[AskUserQuestionRequest] = []

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        self.asked.append(request)
        return await super().ask(request)


async def resume(
    interrupts: list[Interrupt], answers: Mapping[str, Any], **options: Any
) -> tuple[list[dict[str, Any]], Recorder]:
    person = Recorder(answers)
    async with connect(provider=person) as asker:
        entries = await resume_interrupts(interrupts, asker, now=lambda: NOW, **options)
    return [entry.model_dump(mode="json", by_alias=True) for entry in entries], person


async def test_one_request_answers_every_reason() -> None:
    entries, person = await resume(
        [APPROVE, CONFIRM, NAME],
        {"int-abc123": "Allow", "int-confirm": "No", "int-name": "shop"},
        tool_calls=[SEND_EMAIL],
    )
    [request] = person.asked  # one request, a question per interrupt, in their order
    card, confirm, name = request.questions
    assert card.question == "Allow the agent to run sendEmail?"
    assert card.detail is not None
    assert card.detail.startswith("Send email to a@b.com with subject 'Hi'?")
    assert '"to": "a@b.com"' in card.detail
    assert [option.label for option in confirm.options or []] == ["Yes", "No"]
    assert (name.question, name.options) == ("What should the repository be called?", None)
    assert entries == [
        {"interruptId": "int-abc123", "status": "resolved", "payload": {"approved": True}},
        {"interruptId": "int-confirm", "status": "resolved", "payload": False},
        {"interruptId": "int-name", "status": "resolved", "payload": "shop"},
    ]
    RunAgentInput(thread_id="t", run_id="r2", messages=[], resume=entries)  # what AG-UI reads


async def test_a_lone_tool_call_goes_with_its_approval_for_the_rules() -> None:
    _, person = await resume([APPROVE], {"int-abc123": "Deny"}, tool_calls=[SEND_EMAIL])
    [request] = person.asked
    assert request.approval is not None
    assert (request.approval.tool, request.approval.input) == (
        "sendEmail",
        {"to": "a@b.com", "subject": "Hi"},
    )


async def test_a_denial_with_a_reason_carries_the_reason_in_the_metadata() -> None:
    entries, _ = await resume([APPROVE], {"int-abc123": "wrong address"}, tool_calls=[SEND_EMAIL])
    assert entries == [
        {
            "interruptId": "int-abc123",
            "status": "resolved",
            "payload": {"approved": False},
            "metadata": {"user-questions": {"feedback": "wrong address"}},
        }
    ]


async def test_a_tool_call_not_in_the_run_is_asked_from_its_message() -> None:
    entries, person = await resume([APPROVE], {"int-abc123": "Allow"})
    [card] = person.asked[0].questions
    assert card.question == "Send email to a@b.com with subject 'Hi'?"
    assert [option.label for option in card.options or []] == ["Allow", "Deny"]
    assert person.asked[0].approval is None  # nothing a rule could match
    assert entries[0]["payload"] == {"approved": True}


async def test_a_confirmation_with_an_object_of_one_boolean_answers_in_it() -> None:
    confirm = CONFIRM.model_copy(
        update={
            "response_schema": {"type": "object", "properties": {"confirmed": {"type": "boolean"}}}
        }
    )
    entries, _ = await resume([confirm], {"int-confirm": "Yes"})
    assert entries[0]["payload"] == {"confirmed": True}


async def test_a_skip_is_cancelled_and_a_dismissal_cancels_every_interrupt() -> None:
    entries, _ = await resume([CONFIRM, NAME], {"int-confirm": "Yes", "int-name": None})
    assert [entry["status"] for entry in entries] == ["resolved", "cancelled"]
    assert "payload" not in entries[1]
    dismissed, _ = await resume([CONFIRM, NAME], {"int-confirm": "Yes"})  # no answer: dismissed
    assert dismissed == [
        {"interruptId": "int-confirm", "status": "cancelled"},
        {"interruptId": "int-name", "status": "cancelled"},
    ]


async def test_the_earliest_expiry_bounds_the_request() -> None:
    soon = NAME.model_copy(update={"expires_at": (NOW + timedelta(seconds=0.2)).isoformat()})
    later = CONFIRM.model_copy(update={"expires_at": "2026-04-21T00:00:00Z"})
    waits = ScriptedProvider(lambda request: _never())  # a person who never answers
    async with connect(provider=waits) as asker:
        with within(5, "the earliest expiry"), pytest.raises(UserQuestionError) as timed_out:
            await resume_interrupts([later, soon], asker, now=lambda: NOW)
    assert timed_out.value.code == "ASK_TIMED_OUT"
    past = NAME.model_copy(update={"expires_at": "2026-04-20T15:59:59Z"})
    with pytest.raises(UserQuestionError, match="expired at") as expired:
        await resume([past], {"int-name": "shop"})
    assert expired.value.code == "ASK_TIMED_OUT"


async def test_an_expiry_that_is_not_a_date_sets_no_deadline() -> None:
    vague = NAME.model_copy(update={"expires_at": "tomorrow-ish"})
    entries, _ = await resume([vague], {"int-name": "shop"})
    assert entries[0]["payload"] == "shop"


QUARTER = {
    "type": "object",
    "properties": {
        "quarter": {"type": "string", "enum": ["Q1", "Q2", "Q3", "Q4"]},
        "year": {"type": "integer", "minimum": 2000},
        "final": {"type": "boolean", "default": False},
    },
    "required": ["quarter", "year"],
}


async def test_a_form_is_asked_with_its_schema_and_resolved_with_the_typed_object() -> None:
    form = NAME.model_copy(update={"id": "int-report", "response_schema": QUARTER})
    filled = AskUserQuestionAnswerItem(
        id="int-report", selected=[], value={"quarter": "Q2", "year": 2026, "final": True}
    )
    entries, person = await resume([CONFIRM, form], {"int-confirm": "Yes", "int-report": filled})
    assert person.asked[0].questions[1].schema_ == QUARTER
    assert entries[1] == {
        "interruptId": "int-report",
        "status": "resolved",
        "payload": {"quarter": "Q2", "year": 2026, "final": True},
    }


async def test_a_value_that_breaks_the_form_is_refused_naming_its_field() -> None:
    form = NAME.model_copy(update={"id": "int-report", "response_schema": QUARTER})
    wrong = AskUserQuestionAnswerItem(
        id="int-report", selected=[], value={"quarter": "Q2", "year": 1999}
    )
    with pytest.raises(UserQuestionError, match=r"value\.year: must be at least 2000"):
        await resume([form], {"int-report": wrong})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "enum": ["Q1", "Q2"]},
        {"type": "integer"},
        {"type": "object", "properties": {"where": {"type": "object"}}},
    ],
)
async def test_a_schema_no_form_reads_is_refused_before_anything_is_asked(
    schema: dict[str, Any],
) -> None:
    form = NAME.model_copy(update={"response_schema": schema})
    with pytest.raises(UserQuestionError, match="cannot ask as a form") as refused:
        await resume([CONFIRM, form], {"int-confirm": "Yes", "int-name": "x"})
    assert refused.value.code == "BAD_REQUEST"


EDITABLE = APPROVE.model_copy(
    update={
        "response_schema": {
            "type": "object",
            "properties": {"approved": {"type": "boolean"}, "editedArgs": {"type": "object"}},
            "required": ["approved"],
        }
    }
)


async def test_an_approval_offering_edits_resumes_with_the_changed_arguments() -> None:
    changed = {"to": "a@b.com", "subject": "Hi there"}
    allowed = AskUserQuestionAnswerItem(
        id="int-abc123", selected=["Allow"], edited=changed, note="friendlier subject"
    )
    entries, person = await resume([EDITABLE], {"int-abc123": allowed}, tool_calls=[SEND_EMAIL])
    approval = person.asked[0].approval
    assert approval is not None
    assert approval.editable
    assert entries == [
        {
            "interruptId": "int-abc123",
            "status": "resolved",
            "payload": {"approved": True, "editedArgs": changed},
            "metadata": {"user-questions": {"note": "friendlier subject"}},
        }
    ]


async def test_an_unchanged_allow_sends_no_edited_args() -> None:
    entries, _ = await resume([EDITABLE], {"int-abc123": "Allow"}, tool_calls=[SEND_EMAIL])
    assert entries[0]["payload"] == {"approved": True}
    assert "metadata" not in entries[0]


async def test_an_approval_without_edited_args_in_its_schema_is_not_editable() -> None:
    changed = AskUserQuestionAnswerItem(
        id="int-abc123", selected=["Allow"], edited={"to": "c@d.com", "subject": "Hi"}
    )
    with pytest.raises(UserQuestionError, match="cannot take a changed sendEmail call"):
        await resume([APPROVE], {"int-abc123": changed}, tool_calls=[SEND_EMAIL])


async def test_a_note_beside_a_denial_travels_with_the_reason() -> None:
    denied = AskUserQuestionAnswerItem(
        id="int-abc123", selected=[], custom="wrong person", note="ask Bob first"
    )
    entries, _ = await resume([APPROVE], {"int-abc123": denied}, tool_calls=[SEND_EMAIL])
    assert entries[0]["payload"] == {"approved": False}
    assert entries[0]["metadata"] == {
        "user-questions": {"feedback": "wrong person", "note": "ask Bob first"}
    }


async def _never() -> AskUserQuestionAnswer:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")
