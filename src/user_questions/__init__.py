"""user-questions: let AI agents ask a human structured questions and wait for the answer.

The core surface, importable with only pydantic and anyio installed. Surfaces that need an extra
are imported from their modules: `user_questions.providers.terminal`, `user_questions.host`,
`user_questions.providers.remote`, `user_questions.bridges.*`, `user_questions.integrations.*`.
`connect()` imports the `web` extra only when it connects to a host.
"""

from user_questions._version import __version__
from user_questions.abort import AbortController, AbortSignal
from user_questions.agents import Agent, AgentRegistry
from user_questions.asker import connect
from user_questions.errors import (
    AbortError,
    ErrorCode,
    HarnessError,
    ToolArgsError,
    UserQuestionError,
)
from user_questions.kernel import Context, Fiber, Service
from user_questions.providers.scripted import ScriptedProvider
from user_questions.service import AskUserQuestionRequest, UserQuestionProvider, UserQuestionService
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
