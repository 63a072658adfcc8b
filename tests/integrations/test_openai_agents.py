"""OpenAI Agents SDK: `ask_user_tool` and `resolve_interruptions`, with the SDK's own
`ScriptedModel` (no network) and a `ScriptedProvider` as the person."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agents import Agent, Runner, function_tool
from agents.testing import ModelStep, ScriptedModel, function_call

from tests.integrations.frameworks import no_tracing, reports, together, tool_failures  # noqa: F401
from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    ErrorCode,
    ScriptedProvider,
    UserQuestionError,
    connect,
)
from user_questions.approvals import ALLOW, ALLOW_ALWAYS, DENY
from user_questions.integrations.openai_agents import ask_user_tool, resolve_interruptions
from user_questions.tool_ask_user import DESCRIPTION

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_tracing")]

# What a model in strict mode sends: every property present, optional ones null.
STRICT_ARGUMENTS = {
    "questions": [
        {
            "id": "pkg",
            "question": "Which package manager?",
            "header": None,
            "options": [
                {"label": "uv", "description": None},
                {"label": "pip", "description": None},
            ],
            "multi_select": None,
        }
    ]
}


async def test_the_model_sees_the_responses_shape_and_reads_our_answer_text() -> None:
    model = ScriptedModel(
        [
            [function_call("ask_user_question", STRICT_ARGUMENTS, call_id="c1")],
            ModelStep.respond(reports),
        ]
    )
    async with connect(provider=ScriptedProvider({"pkg": "pip"})) as asker:
        tool = ask_user_tool(asker)
        result = await Runner.run(Agent(name="Assistant", model=model, tools=[tool]), "set up")
        assert tool.params_json_schema == asker.tool.to_responses()["parameters"]
    assert result.final_output == 'tool said: {"answers":[{"id":"pkg","selected":["pip"]}]}'
    assert (tool.name, tool.description, tool.strict_json_schema) == (
        "ask_user_question",
        DESCRIPTION,
        True,
    )
    model.assert_complete()


@pytest.mark.parametrize(("provider", "seconds", "text"), tool_failures("pkg"))
async def test_a_dismissal_or_a_timeout_is_our_error_text_for_the_model(
    provider: ScriptedProvider, seconds: float | None, text: str
) -> None:
    model = ScriptedModel(
        [
            [function_call("ask_user_question", STRICT_ARGUMENTS, call_id="c1")],
            ModelStep.respond(reports),
        ]
    )
    async with connect(provider=provider) as asker:
        tool = ask_user_tool(asker, question_timeout=seconds)
        with anyio.fail_after(10):
            result = await Runner.run(Agent(name="Assistant", model=model, tools=[tool]), "go")
    assert result.final_output == f"tool said: {text}"


deleted: list[str] = []


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    deleted.append(path)
    return f"deleted {path}"


def file_agent(calls: int = 1) -> Agent[Any]:
    steps: list[Any] = [
        [
            function_call("delete_file", {"path": f"notes-{n}.txt"}, call_id=f"d{n}")
            for n in range(calls)
        ],
        ModelStep.respond(reports),
    ]
    return Agent(name="Janitor", model=ScriptedModel(steps), tools=[delete_file])


@pytest.mark.parametrize(
    ("scripted", "output"),
    [
        (ALLOW, "tool said: deleted notes-0.txt"),
        (DENY, "tool said: The user denied this delete_file call."),
        ("keep it", "tool said: The user denied this delete_file call and said: keep it"),
    ],
    ids=["allow", "deny", "reason"],
)
async def test_an_approval_interruption_becomes_a_card_and_the_decision_is_applied(
    scripted: str, output: str
) -> None:
    deleted.clear()
    agent = file_agent()
    paused = await Runner.run(agent, "clean up")
    assert len(paused.interruptions) == 1
    human = ScriptedProvider({"approval": scripted})
    async with connect(provider=human) as asker:
        state = await resolve_interruptions(paused, asker)
    (card,) = human.seen[0].questions
    assert card.question == "Allow Janitor to run delete_file: notes-0.txt?"
    assert [option.label for option in card.options or ()] == [ALLOW, ALLOW_ALWAYS, DENY]
    resumed = await Runner.run(agent, state)
    assert resumed.final_output == output
    assert deleted == (["notes-0.txt"] if scripted == ALLOW else [])


async def test_several_interruptions_are_asked_at_once_each_on_its_own_card() -> None:
    deleted.clear()
    agent = file_agent(calls=2)
    paused = await Runner.run(agent, "clean up")
    person, shown = together(
        2,
        lambda request: {"approval": ALLOW if "notes-0" in request.questions[0].question else DENY},
    )
    async with connect(provider=ScriptedProvider(person)) as asker:
        with anyio.fail_after(10):
            state = await resolve_interruptions(paused, asker)
    await Runner.run(agent, state)
    assert deleted == ["notes-0.txt"]
    assert len(shown) == 2


async def test_a_dismissed_card_raises_and_applies_nothing() -> None:
    paused = await Runner.run(file_agent(), "clean up")
    async with connect(provider=ScriptedProvider({})) as asker:
        with pytest.raises(UserQuestionError) as dismissed:
            await resolve_interruptions(paused, asker)
    assert dismissed.value.code == ErrorCode.ASK_CANCELLED


async def test_allow_and_dont_ask_again_approves_the_later_calls_of_the_run() -> None:
    deleted.clear()
    steps: list[Any] = [
        [function_call("delete_file", {"path": "a.txt"}, call_id="d1")],
        [function_call("delete_file", {"path": "b.txt"}, call_id="d2")],
        ModelStep.respond(reports),
    ]
    agent = Agent(name="Janitor", model=ScriptedModel(steps), tools=[delete_file])
    paused = await Runner.run(agent, "clean up")
    human = ScriptedProvider({"approval": ALLOW_ALWAYS})
    async with connect(provider=human) as asker:
        state = await resolve_interruptions(paused, asker)
    resumed = await Runner.run(agent, state)
    assert resumed.interruptions == []
    assert deleted == ["a.txt", "b.txt"]
    assert len(human.seen) == 1


async def test_a_note_beside_a_denial_is_read_and_beside_an_allow_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    deleted.clear()
    agent = file_agent(calls=2)
    paused = await Runner.run(agent, "clean up")
    answers = {
        "d0": AskUserQuestionAnswerItem(id="approval", selected=[ALLOW], note="back it up first"),
        "d1": AskUserQuestionAnswerItem(id="approval", selected=[DENY], note="it is shared"),
    }

    def person(request: Any) -> AskUserQuestionAnswer:
        call = "d0" if "notes-0" in request.questions[0].question else "d1"
        return AskUserQuestionAnswer(answers=[answers[call]])

    async with connect(provider=ScriptedProvider(person)) as asker:
        with caplog.at_level("WARNING", logger="user_questions.integrations.openai_agents"):
            state = await resolve_interruptions(paused, asker)
    assert [record.getMessage() for record in caplog.records] == [
        "The user allowed this delete_file call and noted: back it up first"
    ]
    await Runner.run(agent, state)
    assert deleted == ["notes-0.txt"]
    rejected = state.to_json()
    assert "The user denied this delete_file call and said: it is shared" in str(rejected)
