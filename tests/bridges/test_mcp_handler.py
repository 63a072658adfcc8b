"""A harness acting as an MCP client answers a server's elicitations with our providers."""

from __future__ import annotations

import json
from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.server.mcpserver import Context as MCPContext
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    Context,
    ScriptedProvider,
)
from user_questions.bridges.mcp import MAX_ATTEMPTS, elicitation_handler
from user_questions.providers.scripted import Script

pytestmark = pytest.mark.anyio

BOOKING = {
    "type": "object",
    "properties": {
        "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 8},
        "budget": {"type": "number", "title": "Budget per night", "description": "In euros."},
        "breakfast": {"type": "boolean", "title": "Breakfast?", "default": True},
        "room": {
            "type": "string",
            "title": "Room",
            "oneOf": [
                {"const": "dbl", "title": "Double"},
                {"const": "twn", "title": "Twin"},
            ],
        },
        "extras": {
            "type": "array",
            "title": "Extras",
            "items": {
                "anyOf": [{"const": "spa", "title": "Spa"}, {"const": "gym", "title": "Gym"}]
            },
            "maxItems": 1,
        },
        "email": {"type": "string", "title": "Email", "format": "email"},
    },
    "required": ["guests", "room"],
}


def answers(**given: Any) -> dict[str, Any]:
    """A script answering the booking form: the given fields, every other one skipped."""
    return dict.fromkeys(BOOKING["properties"]) | given


async def elicit(
    script: Script, schema: dict[str, Any] = BOOKING, message: str = "Book the hotel"
) -> tuple[mcp_types.ElicitResult | mcp_types.ErrorData, ScriptedProvider]:
    provider = ScriptedProvider(script)
    params = mcp_types.ElicitRequestFormParams(message=message, requested_schema=schema)
    result = await elicitation_handler(provider)(None, params)  # type: ignore[arg-type]
    return result, provider


async def test_each_field_becomes_a_question_of_its_kind() -> None:
    _result, provider = await elicit(answers(guests="2", room="Twin"))
    questions = {q.id: q for q in provider.seen[0].questions}
    assert list(questions) == ["guests", "budget", "breakfast", "room", "extras", "email"]
    assert questions["guests"].question == "Guests"
    assert questions["guests"].options is None
    assert (
        questions["guests"].detail == "Book the hotel\n\nA whole number from 1 to 8.\n\nRequired."
    )
    assert questions["budget"].detail == "In euros.\n\nA number.\n\nOptional: you may skip it."
    assert [o.label for o in questions["breakfast"].options or ()] == ["Yes", "No"]
    assert questions["breakfast"].detail == "Suggested: True.\n\nOptional: you may skip it."
    assert [o.label for o in questions["room"].options or ()] == ["Double", "Twin"]
    assert questions["extras"].multi_select is True
    assert questions["email"].detail == "Format: email.\n\nOptional: you may skip it."


async def test_answers_come_back_as_typed_content_and_skipped_optional_fields_are_left_out() -> (
    None
):
    result, _ = await elicit(
        answers(
            guests="2",
            budget="120.5",
            breakfast="No",
            room="Twin",
            extras=["Gym"],
            email="ana@example.org",
        )
    )
    assert result == mcp_types.ElicitResult(
        action="accept",
        content={
            "guests": 2,
            "budget": 120.5,
            "breakfast": False,
            "room": "twn",
            "extras": ["gym"],
            "email": "ana@example.org",
        },
    )
    skipped, _ = await elicit(answers(guests="3", room="Double"))
    assert skipped == mcp_types.ElicitResult(action="accept", content={"guests": 3, "room": "dbl"})


async def test_an_integral_number_stays_an_integer_and_typed_yes_counts_as_yes() -> None:
    result, _ = await elicit(answers(guests="1", room="dbl", budget="90", breakfast="yes"))
    assert isinstance(result, mcp_types.ElicitResult)
    assert result.content is not None
    assert result.content["budget"] == 90
    assert isinstance(result.content["budget"], int)
    assert result.content["room"] == "dbl"
    assert result.content["breakfast"] is True


async def test_skipping_a_required_field_declines_the_form() -> None:
    result, _ = await elicit(answers(room="Twin"))
    assert result == mcp_types.ElicitResult(action="decline")


async def test_a_dismissal_cancels_the_form() -> None:
    result, _ = await elicit({})
    assert result == mcp_types.ElicitResult(action="cancel")


async def test_invalid_answers_are_asked_again_saying_why_and_only_those_fields() -> None:
    rounds = [
        answers(guests="twelve", room="Double", extras=["Spa", "Gym"], email="nope"),
        {"guests": "12", "extras": ["Spa"], "email": "ana@example.org"},
        {"guests": "4"},
    ]

    def script(request: AskUserQuestionRequest) -> dict[str, Any]:
        return rounds.pop(0)

    result, provider = await elicit(script)
    assert result == mcp_types.ElicitResult(
        action="accept",
        content={"room": "dbl", "extras": ["spa"], "email": "ana@example.org", "guests": 4},
    )
    second = {q.id: q.detail for q in provider.seen[1].questions}
    assert list(second) == ["guests", "extras", "email"]
    assert second["guests"] is not None
    assert second["guests"].startswith("Your last answer was not accepted: type a whole number.")
    assert second["extras"] is not None
    assert "choose at most 1" in second["extras"]
    assert second["email"] is not None
    assert "type a valid email" in second["email"]
    third = provider.seen[2].questions[0].detail
    assert third is not None
    assert "type a number of at most 8" in third


async def test_an_answer_still_invalid_after_the_last_attempt_cancels_rather_than_guessing() -> (
    None
):
    result, provider = await elicit(answers(guests="many", room="Double"))
    assert result == mcp_types.ElicitResult(action="cancel")
    assert len(provider.seen) == MAX_ATTEMPTS


async def test_typed_text_for_a_select_is_taken_only_when_it_names_an_option() -> None:
    result, _ = await elicit(answers(guests="2", room="twin"))
    assert isinstance(result, mcp_types.ElicitResult)
    assert result.content is not None
    assert result.content["room"] == "twn"
    again, provider = await elicit(answers(guests="2", room="a suite"))
    assert again == mcp_types.ElicitResult(action="cancel")
    detail = provider.seen[1].questions[0].detail
    assert detail is not None
    assert "choose one of the options" in detail


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "object", "properties": {"x": {"type": "object"}}}, 'field "x" asks for a kind'),
        ({"type": "object"}, "the requested schema has no properties"),
        (
            {"type": "object", "properties": {"x": {"type": "string", "pattern": "("}}},
            'field "x" has a pattern this client cannot read',
        ),
        (
            {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(65)}},
            "the form has 65 fields; at most 64",
        ),
    ],
)
async def test_a_form_this_client_cannot_ask_is_an_error_not_a_decline(
    schema: dict[str, Any], message: str
) -> None:
    result, provider = await elicit({}, schema)
    assert isinstance(result, mcp_types.ErrorData)
    assert result.code == mcp_types.INVALID_PARAMS
    assert message in result.message
    assert provider.seen == []


async def test_a_one_field_form_asks_the_message_with_the_field_title_as_header() -> None:
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean", "title": "Confirm"}},
        "required": ["ok"],
    }
    result, provider = await elicit({"ok": "Yes"}, schema, "Delete 3 files?")
    question = provider.seen[0].questions[0]
    assert (question.question, question.header) == ("Delete 3 files?", "Confirm")
    assert result == mcp_types.ElicitResult(action="accept", content={"ok": True})


async def test_legacy_enum_names_and_plain_enums_are_selects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
            "tier": {"type": "string", "enum": ["free", "pro"]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        },
    }
    result, provider = await elicit({"size": "Medium", "tier": "pro", "tags": ["b"]}, schema)
    assert [o.label for o in provider.seen[0].questions[0].options or ()] == ["Small", "Medium"]
    assert result == mcp_types.ElicitResult(
        action="accept", content={"size": "m", "tier": "pro", "tags": ["b"]}
    )


async def test_url_mode_asks_for_consent_showing_the_address() -> None:
    provider = ScriptedProvider({"open-url": "Open it"})
    params = mcp_types.ElicitRequestURLParams(
        message="Authorize GitHub", url="https://github.com/login/oauth?x=1", elicitation_id="e1"
    )
    result = await elicitation_handler(provider)(None, params)  # type: ignore[arg-type]
    assert result == mcp_types.ElicitResult(action="accept")
    question = provider.seen[0].questions[0]
    assert question.header == "Open github.com"
    assert question.detail is not None
    assert question.detail.endswith("https://github.com/login/oauth?x=1")
    declined = await elicitation_handler(ScriptedProvider({"open-url": "Decline"}))(None, params)  # type: ignore[arg-type]
    assert declined == mcp_types.ElicitResult(action="decline")


async def test_a_provider_failure_reaches_the_server_as_an_internal_error() -> None:
    class Broken:
        async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            return AskUserQuestionAnswer(answers=[])

    params = mcp_types.ElicitRequestFormParams(message="m", requested_schema=BOOKING)
    result = await elicitation_handler(Broken())(None, params)  # type: ignore[arg-type]
    assert isinstance(result, mcp_types.ErrorData)
    assert result.code == mcp_types.INTERNAL_ERROR
    assert result.message.startswith("BAD_ANSWER: provider answer for question guests: missing")


class Booking(BaseModel):
    guests: int = Field(ge=1, le=8)
    breakfast: bool = False


async def book(ctx: MCPContext) -> str:
    outcome = await ctx.elicit("How many guests?", Booking)
    return outcome.model_dump_json()


async def test_a_real_server_elicitation_is_answered_through_the_service(ctx: Context) -> None:
    ctx.user_questions.register_provider(ScriptedProvider({"guests": "3", "breakfast": "Yes"}))
    server = MCPServer("hotel")
    server.add_tool(book)
    async with Client(
        server, mode="legacy", elicitation_callback=elicitation_handler(ctx.user_questions)
    ) as client:
        result = await client.call_tool("book", {})
    assert result.content[0].text == (  # type: ignore[union-attr]
        '{"action":"accept","data":{"guests":3,"breakfast":true}}'
    )


FIELDS: dict[str, Any] = BOOKING["properties"]  # type: ignore[assignment]
SIMPLE_BOOKING = {  # BOOKING without the number and the email
    "type": "object",
    "properties": {key: FIELDS[key] for key in ("guests", "breakfast", "room", "extras")},
    "required": ["guests", "room"],
}


async def book_raw(ctx: MCPContext) -> str:
    """A server asking with a raw requestedSchema, reporting the content exactly as it came."""
    result = await ctx.session.elicit_form(
        "Book the hotel", SIMPLE_BOOKING, related_request_id=ctx.request_context.request_id
    )
    return json.dumps({"action": result.action, "content": result.content})


async def test_with_forms_a_whole_form_goes_to_the_provider_and_its_typed_value_comes_back() -> (
    None
):
    value = {"guests": 3, "breakfast": False, "room": "twn", "extras": ["spa"]}

    def person(request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        (question,) = request.questions
        return AskUserQuestionAnswer(
            answers=[AskUserQuestionAnswerItem(id=question.id, selected=[], value=value)]
        )

    provider = ScriptedProvider(person)
    server = MCPServer("hotel")
    server.add_tool(book_raw)
    async with Client(
        server, mode="legacy", elicitation_callback=elicitation_handler(provider, forms=True)
    ) as client:
        result = await client.call_tool("book_raw", {})
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == {"action": "accept", "content": value}
    assert '"guests": 3,' in text  # an integer, not "3"
    (question,) = provider.seen[0].questions
    assert question.question == "Book the hotel"
    assert question.schema_ == SIMPLE_BOOKING


async def test_with_forms_a_value_breaking_the_form_is_never_sent_and_a_skip_declines() -> None:
    params = mcp_types.ElicitRequestFormParams(message="m", requested_schema=SIMPLE_BOOKING)

    def answering(value: dict[str, Any] | None) -> ScriptedProvider:
        item = AskUserQuestionAnswerItem(id="form", selected=[], value=value)
        return ScriptedProvider(lambda request: AskUserQuestionAnswer(answers=[item]))

    wrong = await elicitation_handler(answering({"guests": 9, "room": "twn"}), forms=True)(
        None,  # type: ignore[arg-type]
        params,
    )
    assert isinstance(wrong, mcp_types.ErrorData)
    assert wrong.message.endswith("value.guests: must be at most 8")
    skipped = await elicitation_handler(answering(None), forms=True)(None, params)  # type: ignore[arg-type]
    assert skipped == mcp_types.ElicitResult(action="decline")
