"""The model-facing `ask_user_question` tool: schema, exact result texts, failures, unloading."""

from __future__ import annotations

import json
from typing import Any

import pytest

from user_questions import (
    AbortController,
    Agent,
    Context,
    ScriptedProvider,
    tool_ask_user,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def tools_ctx(ctx: Context) -> Context:
    ctx.plugin(tool_ask_user)
    return ctx


def test_the_tool_has_the_spec_name_description_and_schema(tools_ctx: Context) -> None:
    tool = tools_ctx.tools.get("ask_user_question")
    assert tool is not None
    assert tool.description == (
        "Ask the user a concise question when you need confirmation, a choice, or missing "
        "information before proceeding. Send one or more questions, each with a stable id that "
        "will be echoed in the answer."
    )
    params = tool.parameters
    assert params["required"] == ["questions"]
    questions = params["properties"]["questions"]
    assert questions["type"] == "array"
    assert "minItems" not in questions
    assert questions["description"] == "Questions to ask the user before continuing."
    item = questions["items"]
    assert item["additionalProperties"] is True
    assert item["required"] == ["id", "question"]
    assert {k: v["description"] for k, v in item["properties"].items()} == {
        "id": "Stable id for this question; echoed in the answer.",
        "question": "The specific question to ask the user.",
        "header": 'Optional short heading for the question, such as "Confirm" or "Choose Mode".',
        "options": "Optional choices to show the user. If you recommend one, put it first and "
        'append "(Recommended)" to that label.',
        "multi_select": "Whether the user may select more than one option. Defaults to false.",
    }
    option = item["properties"]["options"]["items"]
    assert option["required"] == ["label"]
    assert option["additionalProperties"] is True
    assert option["properties"]["label"]["description"] == "Short user-facing option label."
    assert option["properties"]["description"]["description"] == (
        "One sentence explaining the tradeoff or impact."
    )
    assert item["properties"]["multi_select"]["type"] == "boolean"


async def test_the_success_text_is_compact_json_in_id_selected_custom_order(
    tools_ctx: Context,
) -> None:
    tools_ctx.user_questions.register_provider(
        ScriptedProvider(
            {
                "targets": {"selected": ["docs", "tests"], "custom": "release notes"},
                "notes": "ship today",
            }
        )
    )
    result = await tools_ctx.tools.execute(
        "ask_user_question",
        {
            "questions": [
                {
                    "id": "targets",
                    "question": "What should the release include?",
                    "multi_select": True,
                    "options": [{"label": "tests"}, {"label": "docs"}],
                },
                {"id": "notes", "question": "Anything else?"},
            ]
        },
    )
    assert result.text == (
        '{"answers":[{"id":"targets","selected":["tests","docs"],"custom":"release notes"},'
        '{"id":"notes","selected":[],"custom":"ship today"}]}'
    )
    assert result.value == json.loads(result.text)


async def test_a_single_choice_answer_text(tools_ctx: Context) -> None:
    tools_ctx.user_questions.register_provider(ScriptedProvider({"pkg": "pnpm"}))
    result = await tools_ctx.tools.execute(
        "ask_user_question",
        {"questions": [{"id": "pkg", "question": "Which?", "options": [{"label": "pnpm"}]}]},
    )
    assert result.text == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'


async def test_non_ascii_is_kept_in_the_result_text(tools_ctx: Context) -> None:
    tools_ctx.user_questions.register_provider(ScriptedProvider({"größe": "日本語で"}))
    result = await tools_ctx.tools.execute(
        "ask_user_question", {"questions": [{"id": "größe", "question": "?"}]}
    )
    assert result.text == '{"answers":[{"id":"größe","selected":[],"custom":"日本語で"}]}'


async def test_only_documented_fields_reach_the_service(tools_ctx: Context) -> None:
    provider = ScriptedProvider({"plan": "Approve"})
    tools_ctx.user_questions.register_provider(provider)
    result = await tools_ctx.tools.execute(
        "ask_user_question",
        {
            "questions": [
                {
                    "id": "plan",
                    "question": "Approve?",
                    "header": "Plan",
                    "detail": "smuggled plan",
                    "intent": {"kind": "plan-review", "approve": "Nope"},
                    "options": [{"label": "Approve", "description": "Go", "color": "red"}],
                    "multi_select": False,
                    "priority": "high",
                }
            ]
        },
    )
    assert not result.is_error
    sent = provider.seen[0].questions[0]
    assert sent.model_dump(mode="json") == {
        "id": "plan",
        "question": "Approve?",
        "header": "Plan",
        "options": [{"label": "Approve", "description": "Go"}],
        "multiSelect": False,
    }


def _checks(**choice: object) -> dict[str, Any]:
    """Arguments asking one multi-select-able question, with `choice` added to it."""
    options = [{"label": "Lint"}, {"label": "Tests"}]
    return {"questions": [{"id": "checks", "question": "Which?", "options": options, **choice}]}


@pytest.mark.parametrize(
    "choice",
    [{"multiSelect": True}, {"multi_select": True, "multiSelect": True}],
)
async def test_the_camel_case_multi_select_spelling_makes_a_multi_select_question(
    tools_ctx: Context, choice: dict[str, object]
) -> None:
    provider = ScriptedProvider({"checks": ["Lint", "Tests"]})
    tools_ctx.user_questions.register_provider(provider)
    result = await tools_ctx.tools.execute("ask_user_question", _checks(**choice))
    assert result.text == '{"answers":[{"id":"checks","selected":["Lint","Tests"]}]}'
    assert provider.seen[0].questions[0].multi_select is True


async def test_a_null_camel_case_multi_select_is_left_out(tools_ctx: Context) -> None:
    provider = ScriptedProvider({"checks": "Lint"})
    tools_ctx.user_questions.register_provider(provider)
    result = await tools_ctx.tools.execute("ask_user_question", _checks(multiSelect=None))
    assert not result.is_error
    assert provider.seen[0].questions[0].multi_select is None


@pytest.mark.parametrize(
    ("choice", "text"),
    [
        (
            {"multi_select": False, "multiSelect": True},
            'Error: invalid arguments: "questions[0].multi_select" is false but '
            '"questions[0].multiSelect" is true; send multi_select only',
        ),
        (
            {"multi_select": True, "multiSelect": False},
            'Error: invalid arguments: "questions[0].multi_select" is true but '
            '"questions[0].multiSelect" is false; send multi_select only',
        ),
        (
            {"multiSelect": "yes"},
            'Error: invalid arguments: property "questions[0].multiSelect" must be a boolean, '
            "got string",
        ),
    ],
)
async def test_a_camel_case_multi_select_that_disagrees_or_is_no_boolean_is_refused(
    tools_ctx: Context, choice: dict[str, object], text: str
) -> None:
    provider = ScriptedProvider({"checks": "Lint"})
    tools_ctx.user_questions.register_provider(provider)
    result = await tools_ctx.tools.execute("ask_user_question", _checks(**choice))
    assert result.text == text
    assert result.error is not None
    assert result.error["info"] == {"name": "ToolArgsError", "code": "INVALID_ARGS"}
    assert provider.seen == []


async def test_the_executing_agent_and_signal_reach_the_provider(tools_ctx: Context) -> None:
    provider = ScriptedProvider({"a": "yes"})
    tools_ctx.user_questions.register_provider(provider)
    agent = Agent(id="main")
    tools_ctx.agents.enter(agent)
    signal = AbortController().signal
    await tools_ctx.tools.execute(
        "ask_user_question",
        {"questions": [{"id": "a", "question": "?"}]},
        agent=agent,
        signal=signal,
    )
    assert provider.seen[0].agent is agent
    assert provider.seen[0].signal is signal


@pytest.mark.parametrize(
    ("setup", "args", "text", "code"),
    [
        (
            "none",
            {"questions": [{"id": "a", "question": "?"}]},
            "Error: no user-questions provider is registered",
            "NO_PROVIDER",
        ),
        (
            "provider",
            {"questions": []},
            "Error: ask_user_question requires at least one question",
            "EMPTY_QUESTIONS",
        ),
        (
            "provider",
            {"questions": [{"id": "a", "question": "?"}, {"id": "a", "question": "?"}]},
            'Error: question id "a" appears more than once; ids must be unique within a request',
            "BAD_QUESTION",
        ),
        (
            "provider",
            {"questions": [{"id": "zz", "question": "?"}]},
            "Error: the user cancelled ask_user_question",
            "ASK_CANCELLED",
        ),
    ],
)
async def test_failures_reach_the_model_with_name_and_code(
    tools_ctx: Context, setup: str, args: dict[str, Any], text: str, code: str
) -> None:
    if setup == "provider":
        tools_ctx.user_questions.register_provider(ScriptedProvider({"a": "x"}))
    result = await tools_ctx.tools.execute("ask_user_question", args)
    assert result.is_error
    assert result.text == text
    assert result.error is not None
    assert result.error["info"] == {"name": "UserQuestionError", "code": code}


async def test_a_delegated_agent_gets_delegated_caller(tools_ctx: Context) -> None:
    tools_ctx.user_questions.register_provider(ScriptedProvider({"a": "x"}))
    root, child = Agent(id="root"), Agent(id="child")
    tools_ctx.agents.enter(root)
    tools_ctx.agents.enter(child, owner=root)
    result = await tools_ctx.tools.execute(
        "ask_user_question", {"questions": [{"id": "a", "question": "?"}]}, agent=child
    )
    assert result.error is not None
    assert result.error["info"]["code"] == "DELEGATED_CALLER"


async def test_wrong_argument_types_are_one_clear_line(tools_ctx: Context) -> None:
    result = await tools_ctx.tools.execute("ask_user_question", {"questions": "pick one"})
    assert (
        result.text == 'Error: invalid arguments: property "questions" must be an array, got string'
    )
    result = await tools_ctx.tools.execute(
        "ask_user_question",
        {"questions": [{"id": "a", "question": "?", "options": [{"label": 1}]}]},
    )
    assert result.text == (
        'Error: invalid arguments: property "questions[0].options[0].label" must be a string, '
        "got integer"
    )
    result = await tools_ctx.tools.execute("ask_user_question", {"questions": [{"question": "?"}]})
    assert result.text == 'Error: invalid arguments: missing required property "questions[0].id"'


async def test_the_tool_waits_for_its_services_and_goes_with_them() -> None:
    from user_questions import ToolRegistry, UserQuestionService

    ctx = Context()
    ctx.plugin(tool_ask_user)
    tools = ctx.plugin(ToolRegistry)
    assert ctx.tools.get("ask_user_question") is None
    service = ctx.plugin(UserQuestionService)
    assert ctx.tools.get("ask_user_question") is not None
    service.dispose()
    assert ctx.tools.get("ask_user_question") is None
    ctx.plugin(UserQuestionService)
    assert ctx.tools.get("ask_user_question") is not None
    tools.dispose()
    ctx.plugin(ToolRegistry)
    assert ctx.tools.get("ask_user_question") is not None


async def test_unloading_the_plugin_unregisters_the_tool(ctx: Context) -> None:
    fiber = ctx.plugin(tool_ask_user)
    fiber.dispose()
    assert ctx.tools.get("ask_user_question") is None


async def test_openai_export_of_ask_user_question_is_strict_and_answers_with_nulls(
    tools_ctx: Context,
) -> None:
    tool = tools_ctx.tools.get("ask_user_question")
    assert tool is not None
    exported = json.dumps(tool.to_openai())
    assert "oneOf" not in exported
    tools_ctx.user_questions.register_provider(ScriptedProvider({"a": "yes"}))
    strict_style = {
        "questions": [
            {"id": "a", "question": "?", "header": None, "options": None, "multi_select": None}
        ]
    }
    result = await tools_ctx.tools.execute("ask_user_question", strict_style)
    assert result.text == '{"answers":[{"id":"a","selected":[],"custom":"yes"}]}'


async def test_a_note_beside_the_choice_reaches_the_model_in_the_result(
    tools_ctx: Context,
) -> None:
    tools_ctx.user_questions.register_provider(
        ScriptedProvider({"pkg": {"selected": ["pnpm"], "note": "and pin the version"}})
    )
    result = await tools_ctx.tools.execute(
        "ask_user_question",
        {"questions": [{"id": "pkg", "question": "Which?", "options": [{"label": "pnpm"}]}]},
    )
    assert result.text == (
        '{"answers":[{"id":"pkg","selected":["pnpm"],"note":"and pin the version"}]}'
    )
