"""Shared fixtures: a real kernel with the core services, and the anyio backend."""

from __future__ import annotations

import pytest

from tests.pg import pg_cluster, pg_url  # noqa: F401 - PostgreSQL fixtures, one server per session
from user_questions import AgentRegistry, Context, ToolRegistry, UserQuestionService


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def ctx() -> Context:
    """A fresh app with `ctx.agents`, `ctx.user_questions` and `ctx.tools`."""
    context = Context()
    context.plugin(AgentRegistry)
    context.plugin(UserQuestionService)
    context.plugin(ToolRegistry)
    return context
