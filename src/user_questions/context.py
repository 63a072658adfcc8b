"""`Context`: the kernel's context with this package's services typed for the checker.

The kernel (`kernel.Context`) is generic: it reaches a service by name and imports none, so it
sits below the services it carries. This subclass, at the level that knows them, adds nothing at
run time but the names the type checker reads: `ctx.user_questions`, `ctx.agents`, `ctx.tools`.
A child plugin's context is of its parent's class, so every context of an app made with
`Context()` is typed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from user_questions import kernel

if TYPE_CHECKING:
    from user_questions.agents import AgentRegistry
    from user_questions.service import UserQuestionService
    from user_questions.tools import ToolRegistry

__all__ = ["Context"]


class Context(kernel.Context):
    """The handle a plugin works through; `Context()` makes a new, empty app."""

    __slots__ = ()

    if TYPE_CHECKING:
        user_questions: UserQuestionService
        agents: AgentRegistry
        tools: ToolRegistry
