"""The public surface is a visible decision, and the core imports no extra."""

from __future__ import annotations

import json
import subprocess
import sys

import user_questions


def test_the_root_exports_exactly_the_spec_surface() -> None:
    assert sorted(user_questions.__all__) == [
        "AbortController",
        "AbortError",
        "AbortSignal",
        "Agent",
        "AgentRegistry",
        "AskUserQuestionAnswer",
        "AskUserQuestionAnswerItem",
        "AskUserQuestionIntent",
        "AskUserQuestionItem",
        "AskUserQuestionOption",
        "AskUserQuestionRequest",
        "Context",
        "ErrorCode",
        "Fiber",
        "HarnessError",
        "PlanReviewIntent",
        "ScriptedProvider",
        "Service",
        "Tool",
        "ToolArgsError",
        "ToolCall",
        "ToolRegistry",
        "ToolResult",
        "UserQuestionError",
        "UserQuestionProvider",
        "UserQuestionService",
        "__version__",
        "connect",
    ]
    for name in user_questions.__all__:
        assert hasattr(user_questions, name), name


def test_plugin_modules_and_presentation_are_importable_from_the_package() -> None:
    from user_questions import presentation, tool_ask_user, tool_exit_plan_mode

    assert tool_ask_user.name == "tool-ask-user"
    assert tool_ask_user.inject == ["tools", "user_questions"]
    assert tool_exit_plan_mode.inject == ["tools", "user_questions"]
    assert callable(presentation.plan_review_of)


def test_importing_the_package_loads_only_pydantic_and_anyio() -> None:
    code = "import json, sys, user_questions; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
        ).stdout
    )
    extras = ("starlette", "uvicorn", "questionary", "rich", "mcp", "psycopg", "cyclopts", "httpx")
    assert [m for m in loaded if m.split(".")[0] in extras] == []


def test_every_public_module_lists_what_it_defines() -> None:
    import importlib

    for name in (
        "types",
        "errors",
        "abort",
        "kernel",
        "agents",
        "service",
        "tools",
        "presentation",
        "asker",
    ):
        module = importlib.import_module(f"user_questions.{name}")
        for exported in module.__all__:
            assert hasattr(module, exported), f"{name}.{exported}"
