"""Fuzzing the model-facing tool: whatever arguments a model sends `ask_user_question`, as JSON
text or parsed, the result is one the model can read, a failure carries its code, and the tool
still asks a real question afterwards."""

from __future__ import annotations

import contextlib
import json

import anyio
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.oracle import check_tool_result, fail
from tests.fuzz.profiles import fuzz_settings
from tests.fuzz.strategies import Probe, tool_probes
from user_questions import (
    AgentRegistry,
    AskUserQuestionRequest,
    Context,
    ScriptedProvider,
    ToolRegistry,
    ToolResult,
    UserQuestionService,
    tool_ask_user,
)

REAL = {"questions": [{"id": "ok", "question": "Still there?", "options": [{"label": "yes"}]}]}


def _typed(request: AskUserQuestionRequest) -> dict[str, str]:
    """A person who answers every question by typing `typed`."""
    return {question.id: "typed" for question in request.questions}


def _context() -> Context:
    ctx = Context()
    for plugin in (AgentRegistry, UserQuestionService, ToolRegistry, tool_ask_user):
        ctx.plugin(plugin)
    ctx.user_questions.register_provider(ScriptedProvider(_typed))
    return ctx


async def _execute(ctx: Context, arguments: object) -> ToolResult:
    with anyio.fail_after(10):
        return await ctx.tools.execute("ask_user_question", arguments)


def test_every_tool_call_gets_a_result_the_model_can_read_with_a_code() -> None:
    ctx = _context()

    @fuzz_settings()
    @given(tool_probes(), st.booleans())
    def each(probe: Probe, parsed: bool) -> None:
        arguments: object = probe.data
        if parsed and isinstance(probe.data, str):
            # A harness that parsed the model's JSON itself, with the standard library: lone
            # surrogates and NaN get through to the tool, nesting within Python's own limit.
            with contextlib.suppress(ValueError, RecursionError):
                arguments = json.loads(probe.data)
                # What JSON text would have been refused for is now the tool's to find, or to
                # drop (unknown keys): only the promises every result keeps are checked.
                probe = Probe(probe.label, probe.data, accepted=probe.accepted)
        check_tool_result(probe, anyio.run(_execute, ctx, arguments))
        real = anyio.run(_execute, ctx, REAL)
        if real.text != '{"answers":[{"id":"ok","selected":[],"custom":"typed"}]}':
            fail("host-down", f"a real call then got {real.text}")

    each()
