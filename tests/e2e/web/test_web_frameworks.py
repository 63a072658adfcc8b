"""Framework agents answered in Chromium: a Pydantic AI approval, an Agents SDK question, an
Agent Inbox interrupt of a LangGraph graph, and a dismissal.

The agents run in this process on the portal's event loop, asking through `connect()` to the
module's `uq serve`; the person clicks in a real page.
"""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent as AgentsSdkAgent
from agents import Runner
from agents.testing import ModelStep, ScriptedModel, function_call
from anyio.from_thread import BlockingPortal
from playwright.sync_api import expect
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.e2e.web.conftest import ANSWER_SECONDS, Host, OpenInbox
from tests.integrations.frameworks import EVERYTHING, graph_of, inbox_node, no_tracing, reports  # noqa: F401
from user_questions import UserQuestionError, connect
from user_questions.integrations.langgraph import forward_interrupts
from user_questions.integrations.openai_agents import ask_user_tool
from user_questions.integrations.pydantic_ai import approve_deferred

pytestmark = pytest.mark.usefixtures("no_tracing")


def deletes(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last: Any = messages[-1].parts[-1]
    if last.part_kind == "user-prompt":
        call = ToolCallPart("run_shell", {"command": "rm -rf build/"}, "call-1")
        return ModelResponse(parts=[call])
    return ModelResponse(parts=[TextPart(f"tool said: {last.content}")])


def shell_agent() -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(FunctionModel(deletes), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def run_shell(command: str) -> str:
        return f"ran {command}"

    return agent


async def approve_and_resume(host: Host, session: str) -> str:
    agent = shell_agent()
    paused = await agent.run("clean the build")
    assert isinstance(paused.output, DeferredToolRequests)
    async with connect(host.url, session=session) as asker:
        results = await approve_deferred(paused.output, asker)
    resumed = await agent.run(message_history=paused.all_messages(), deferred_tool_results=results)
    output: str = resumed.output
    return output


def test_a_pydantic_ai_approval_is_allowed_in_the_browser(
    portal: BlockingPortal, host: Host, open_inbox: OpenInbox, session: str
) -> None:
    inbox = open_inbox()
    done = portal.start_task_soon(approve_and_resume, host, session)
    card = inbox.card(session)
    expect(card).to_contain_text("Allow the agent to run run_shell: rm -rf build/?")
    # The call itself in the detail (a code block, or plain text when the render budget ran out).
    expect(card.locator(".detail")).to_contain_text("rm -rf build/")
    card.locator(".option", has_text="Allow").first.click()  # not "Allow and don't ask again"
    card.get_by_role("button", name="Submit").click()
    assert done.result(timeout=ANSWER_SECONDS) == "tool said: ran rm -rf build/"


def test_a_pydantic_ai_approval_dismissed_in_the_browser_approves_nothing(
    portal: BlockingPortal, host: Host, open_inbox: OpenInbox, session: str
) -> None:
    inbox = open_inbox()
    done = portal.start_task_soon(approve_and_resume, host, session)
    card = inbox.card(session)
    card.get_by_role("button", name="Dismiss").click()
    error = done.exception(timeout=ANSWER_SECONDS)
    assert isinstance(error, UserQuestionError)
    assert error.code == "ASK_CANCELLED"


async def ask_with_the_agents_sdk(host: Host, session: str) -> Any:
    arguments = {
        "questions": [
            {
                "id": "features",
                "header": "Scope",
                "question": "Which features ship first?",
                "options": [
                    {"label": "Auth", "description": None},
                    {"label": "Billing", "description": None},
                    {"label": "Search", "description": None},
                ],
                "multi_select": True,
            }
        ]
    }
    model = ScriptedModel(
        [[function_call("ask_user_question", arguments, call_id="c1")], ModelStep.respond(reports)]
    )
    async with connect(host.url, session=session) as asker:
        agent = AgentsSdkAgent(name="Planner", model=model, tools=[ask_user_tool(asker)])
        result = await Runner.run(agent, "plan the release")
    return result.final_output


def test_an_agents_sdk_question_is_answered_in_the_browser(
    portal: BlockingPortal, host: Host, open_inbox: OpenInbox, session: str
) -> None:
    inbox = open_inbox()
    done = portal.start_task_soon(ask_with_the_agents_sdk, host, session)
    card = inbox.card(session)
    card.get_by_role("checkbox", name="Search").check()
    card.get_by_role("checkbox", name="Auth").check()
    card.get_by_role("button", name="Submit").click()
    assert done.result(timeout=ANSWER_SECONDS) == (
        'tool said: {"answers":[{"id":"features","selected":["Auth","Search"]}]}'
    )


async def forward_the_inbox_interrupt(
    host: Host, session: str, allow: dict[str, bool] = EVERYTHING
) -> Any:
    graph = graph_of(inbox_node(allow))
    config = {"configurable": {"thread_id": session}}
    await graph.ainvoke({}, config)
    async with connect(host.url, session=session) as asker:
        snapshot = await forward_interrupts(graph, config, asker)
    return snapshot.values


def test_an_agent_inbox_interrupt_is_accepted_in_the_browser(
    portal: BlockingPortal, host: Host, open_inbox: OpenInbox, session: str
) -> None:
    inbox = open_inbox()
    done = portal.start_task_soon(forward_the_inbox_interrupt, host, session)
    card = inbox.card(session)
    expect(card.locator(".detail strong")).to_have_text("weekly report")
    card.locator(".option", has_text="Accept").click()
    card.get_by_role("button", name="Submit").click()
    assert done.result(timeout=ANSWER_SECONDS) == {"response": {"type": "accept", "args": None}}


def test_an_agent_inbox_interrupt_is_edited_in_the_browser(
    portal: BlockingPortal, host: Host, open_inbox: OpenInbox, session: str
) -> None:
    inbox = open_inbox()
    editable = {**EVERYTHING, "allow_edit": True}
    done = portal.start_task_soon(forward_the_inbox_interrupt, host, session, editable)
    card = inbox.card(session)
    card.get_by_role("button", name="Edit and allow").click()
    arguments = card.get_by_role("textbox", name="The call’s arguments, as JSON")
    arguments.fill('{"to": "team@example.com"}')
    expect(card.locator(".diff ins")).to_contain_text("team@example.com")
    card.get_by_role("button", name="Allow with changes").click()
    assert done.result(timeout=ANSWER_SECONDS) == {
        "response": {
            "type": "edit",
            "args": {"action": "send_email", "args": {"to": "team@example.com"}},
        }
    }
