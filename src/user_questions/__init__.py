"""user-questions: let AI agents ask a human structured questions and wait for the answer.

The core surface, importable with only pydantic and anyio installed. Surfaces that need an extra
are imported from their modules: `user_questions.providers.terminal`, `user_questions.host`,
`user_questions.providers.remote`, `user_questions.bridges.*`, `user_questions.integrations.*`.
`connect()` imports the `web` extra only when it connects to a host.

The names below are loaded on first use (`_LAZY` says from where), so that `import
user_questions` costs nothing until one is needed: an agent CLI's hook (`uq hook`) runs on every
tool call and must decide in milliseconds whether the call is its own, before pydantic builds a
single model. `from user_questions import Context` works as it always did.
"""

from __future__ import annotations

import importlib

from user_questions._version import __version__

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

    from user_questions.abort import AbortController, AbortSignal
    from user_questions.agents import Agent, AgentRegistry
    from user_questions.asker import connect
    from user_questions.context import Context
    from user_questions.errors import (
        AbortError,
        ErrorCode,
        HarnessError,
        ToolArgsError,
        UserQuestionError,
    )
    from user_questions.kernel import Fiber, Service
    from user_questions.providers.scripted import ScriptedProvider
    from user_questions.service import (
        AskUserQuestionRequest,
        UserQuestionProvider,
        UserQuestionService,
    )
    from user_questions.tools import Tool, ToolCall, ToolRegistry, ToolResult
    from user_questions.types import (
        AskUserQuestionAnswer,
        AskUserQuestionAnswerItem,
        AskUserQuestionIntent,
        AskUserQuestionItem,
        AskUserQuestionOption,
        PlanReviewIntent,
    )

__all__ = [
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

_LAZY: dict[str, str] = {
    "AbortController": "user_questions.abort",
    "AbortSignal": "user_questions.abort",
    "Agent": "user_questions.agents",
    "connect": "user_questions.asker",
    "AgentRegistry": "user_questions.agents",
    "AbortError": "user_questions.errors",
    "ErrorCode": "user_questions.errors",
    "HarnessError": "user_questions.errors",
    "ToolArgsError": "user_questions.errors",
    "UserQuestionError": "user_questions.errors",
    "Context": "user_questions.context",
    "Fiber": "user_questions.kernel",
    "Service": "user_questions.kernel",
    "ScriptedProvider": "user_questions.providers.scripted",
    "AskUserQuestionRequest": "user_questions.service",
    "UserQuestionProvider": "user_questions.service",
    "UserQuestionService": "user_questions.service",
    "Tool": "user_questions.tools",
    "ToolCall": "user_questions.tools",
    "ToolRegistry": "user_questions.tools",
    "ToolResult": "user_questions.tools",
    "AskUserQuestionAnswer": "user_questions.types",
    "AskUserQuestionAnswerItem": "user_questions.types",
    "AskUserQuestionIntent": "user_questions.types",
    "AskUserQuestionItem": "user_questions.types",
    "AskUserQuestionOption": "user_questions.types",
    "PlanReviewIntent": "user_questions.types",
}
"""Each public name loaded on first use, and the module that defines it."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'user_questions' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
