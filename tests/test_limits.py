"""Check 7 of `ask()`: the limits of a request and the characters text may hold, after the seam's
own checks and before a provider is called, the same through the service and the tool; the
answer's typed text; and tool schemas that stay valid for OpenAI's strict mode."""

from __future__ import annotations

import json
from typing import Any

import pytest

from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionRequest,
    Context,
    ErrorCode,
    PlanReviewIntent,
    ScriptedProvider,
    UserQuestionError,
    tool_ask_user,
    tool_exit_plan_mode,
)
from user_questions.limits import (
    MAX_CUSTOM_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_DETAIL_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS_PER_QUESTION,
    MAX_QUESTION_ID_LENGTH,
    MAX_QUESTION_LENGTH,
    MAX_QUESTIONS_PER_REQUEST,
)

pytestmark = pytest.mark.anyio


def question(**fields: Any) -> AskUserQuestionItem:
    return AskUserQuestionItem.model_validate({"id": "q", "question": "Which?", **fields})


def options(count: int, **fields: Any) -> list[dict[str, Any]]:
    return [{"label": f"option {index}", **fields} for index in range(count)]


async def refusal(ctx: Context, *questions: AskUserQuestionItem) -> UserQuestionError:
    """The error of asking `questions`: check 7 comes before the provider is needed (check 8)."""
    with pytest.raises(UserQuestionError) as caught:
        await ctx.user_questions.ask(AskUserQuestionRequest(list(questions)))
    return caught.value


LIMITS = [
    ("id", MAX_QUESTION_ID_LENGTH, "questions[0].id"),
    ("header", MAX_HEADER_LENGTH, "questions[0].header"),
    ("question", MAX_QUESTION_LENGTH, "questions[0].question"),
    ("detail", MAX_DETAIL_LENGTH, "questions[0].detail"),
]


@pytest.mark.parametrize(("field", "limit", "path"), LIMITS)
async def test_a_text_at_its_limit_is_asked_and_one_character_more_is_refused(
    ctx: Context, field: str, limit: int, path: str
) -> None:
    ctx.user_questions.register_provider(
        ScriptedProvider(lambda request: {request.questions[0].id: "fine"})
    )
    at_limit = question(**{field: "x" * limit})
    answer = await ctx.user_questions.ask(AskUserQuestionRequest([at_limit]))
    assert answer.answers[0].id == at_limit.id
    error = await refusal(ctx, question(**{field: "x" * (limit + 1)}))
    assert error.code == ErrorCode.LIMIT_EXCEEDED
    assert error.message == (
        f'property "{path}" is {limit + 1} characters long; at most {limit} are allowed'
    )


async def test_options_have_a_count_and_their_labels_and_descriptions_have_lengths(
    ctx: Context,
) -> None:
    many = await refusal(ctx, question(options=options(MAX_OPTIONS_PER_QUESTION + 1)))
    assert (many.code, many.message) == (
        ErrorCode.LIMIT_EXCEEDED,
        f'property "questions[0].options" holds {MAX_OPTIONS_PER_QUESTION + 1} options; '
        f"at most {MAX_OPTIONS_PER_QUESTION} are allowed",
    )
    labels = [{"label": "fine"}, {"label": "x" * (MAX_LABEL_LENGTH + 1)}]
    long_label = await refusal(ctx, question(options=labels))
    assert long_label.message.startswith('property "questions[0].options[1].label" is 1001 ')
    described = [{"label": "a", "description": "x" * (MAX_DESCRIPTION_LENGTH + 1)}]
    long_description = await refusal(ctx, question(), question(id="r", options=described))
    assert long_description.message.startswith(
        'property "questions[1].options[0].description" is 10001 characters long'
    )


async def test_more_than_32_questions_are_too_many_for_the_service_too(ctx: Context) -> None:
    questions = [question(id=f"q{index}") for index in range(MAX_QUESTIONS_PER_REQUEST + 1)]
    error = await refusal(ctx, *questions)
    assert (error.code, error.message) == (
        ErrorCode.TOO_MANY_QUESTIONS,
        f"a request holds at most {MAX_QUESTIONS_PER_REQUEST} questions, got 33",
    )


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"id": "a\x00b"}, "questions[0].id"),
        ({"question": "Which\udc80?"}, "questions[0].question"),
        ({"header": "\x00"}, "questions[0].header"),
        ({"detail": "plan \ud800"}, "questions[0].detail"),
        ({"options": [{"label": "ok"}, {"label": "b\x00d"}]}, "questions[0].options[1].label"),
        (
            {"options": [{"label": "ok", "description": "\udfff"}]},
            "questions[0].options[0].description",
        ),
    ],
)
async def test_a_nul_or_a_lone_surrogate_in_any_text_is_refused_naming_the_property(
    ctx: Context, fields: dict[str, Any], path: str
) -> None:
    error = await refusal(ctx, question(**fields))
    assert error.code == ErrorCode.BAD_QUESTION
    assert error.message.startswith(f'property "{path}" holds a ')


async def test_the_seams_own_checks_come_first_in_their_order(ctx: Context) -> None:
    """A request that breaks check 6 and check 7 gets check 6's error, word for word."""
    oversized = options(MAX_OPTIONS_PER_QUESTION + 1)
    error = await refusal(ctx, question(options=oversized), question(options=oversized))
    assert (error.code, error.message) == (
        ErrorCode.BAD_QUESTION,
        'question id "q" appears more than once; ids must be unique within a request',
    )


async def test_a_repeated_label_among_many_options_is_found_and_named_as_before(
    ctx: Context,
) -> None:
    labels = [{"label": str(index)} for index in range(50_000)] + [{"label": "7"}]
    error = await refusal(ctx, question(options=labels))
    assert error.message == 'question q offers the option label "7" more than once'


class Typing:
    """A provider whose person types `custom` as the answer."""

    def __init__(self) -> None:
        self.custom = ""

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        item = AskUserQuestionAnswerItem(id="q", selected=[], custom=self.custom)
        return AskUserQuestionAnswer(answers=[item])


async def test_typed_text_has_a_limit_and_holds_no_nul(ctx: Context) -> None:
    ask = AskUserQuestionRequest([question()])
    typing = Typing()
    ctx.user_questions.register_provider(typing)
    typing.custom = "x" * MAX_CUSTOM_LENGTH
    assert (await ctx.user_questions.ask(ask)).answers[0].custom == typing.custom
    typing.custom = "x" * (MAX_CUSTOM_LENGTH + 1)
    with pytest.raises(UserQuestionError) as too_long:
        await ctx.user_questions.ask(ask)
    assert (too_long.value.code, too_long.value.message) == (
        ErrorCode.BAD_ANSWER,
        f"provider answer for question q: custom text is {MAX_CUSTOM_LENGTH + 1} characters "
        f"long; at most {MAX_CUSTOM_LENGTH} are allowed",
    )
    typing.custom = "nul\x00"
    with pytest.raises(UserQuestionError) as nul:
        await ctx.user_questions.ask(ask)
    assert nul.value.message == (
        "provider answer for question q: custom text holds a NUL character (U+0000)"
    )


async def test_the_tool_refuses_an_oversized_request_with_the_same_code(ctx: Context) -> None:
    ctx.plugin(tool_ask_user)
    ctx.plugin(tool_exit_plan_mode)
    ctx.user_questions.register_provider(ScriptedProvider({}))
    result = await ctx.tools.execute(
        "ask_user_question",
        {"questions": [{"id": "q", "question": "?", "options": options(1_000)}]},
    )
    assert result.is_error
    assert result.error is not None
    assert result.error["info"] == {"name": "UserQuestionError", "code": "LIMIT_EXCEEDED"}
    assert result.text.startswith('Error: property "questions[0].options" holds 1000 options')
    plan = await ctx.tools.execute("exit_plan_mode", {"plan": "x" * (MAX_DETAIL_LENGTH + 1)})
    assert plan.error is not None
    assert plan.error["info"]["code"] == "LIMIT_EXCEEDED"


async def test_an_intent_names_an_option_so_its_label_has_the_labels_limit(ctx: Context) -> None:
    label = "x" * (MAX_LABEL_LENGTH + 1)
    plan = question(
        detail="the plan",
        options=[{"label": label}],
        intent=PlanReviewIntent(approve=label).model_dump(),
    )
    error = await refusal(ctx, plan)
    assert error.message.startswith('property "questions[0].options[0].label" is 1001 ')


_STRICT_REFUSED = frozenset(
    {"minLength", "maxLength", "pattern", "format", "minItems", "maxItems", "oneOf", "allOf"}
)


def _keywords(schema: Any) -> set[str]:
    if isinstance(schema, list):
        return set().union(*(_keywords(item) for item in schema))
    if not isinstance(schema, dict):
        return set()
    found = set(schema) - {"properties"}
    for key, value in schema.items():
        nested = value.values() if key == "properties" else [value]
        found |= set().union(*(_keywords(item) for item in nested))
    return found


def test_the_exported_tool_schemas_stay_valid_for_openai_strict_mode(ctx: Context) -> None:
    ctx.plugin(tool_ask_user)
    ctx.plugin(tool_exit_plan_mode)
    for tool in ctx.tools.list():
        for exported in (tool.to_openai()["function"]["parameters"], tool.to_responses()):
            assert not _keywords(exported) & _STRICT_REFUSED, json.dumps(exported)
        assert tool.to_openai()["function"]["strict"] is True
