"""`uq demo`: a host on a temporary store, with a demo agent asking through it.

The agent is a real one: a `Context` with the service and the model-facing tools, whose provider is
the host's in-process provider, so what a model would read is what gets printed. It asks a batch (a
single-select with a recommended option, a multi-select, a free-text question), then a plan review
through `exit_plan_mode`, prints each result, and starts over, until the demo is stopped with Ctrl-C
or SIGTERM. It opens nothing by itself: open the printed URL.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from user_questions import tool_ask_user, tool_exit_plan_mode
from user_questions.agents import Agent, AgentRegistry
from user_questions.cli._serve import fail
from user_questions.context import Context
from user_questions.errors import UserQuestionError
from user_questions.host.config import HostConfig
from user_questions.host.hub import Hub
from user_questions.host.in_process import HostProvider
from user_questions.host.server import serve
from user_questions.service import UserQuestionService
from user_questions.tools import ToolRegistry

__all__ = ["BATCH", "PLAN", "demo", "demo_agent"]

BATCH: dict[str, Any] = {
    "questions": [
        {
            "id": "package-manager",
            "header": "Tooling",
            "question": "Which package manager should the new service use?",
            "options": [
                {
                    "label": "uv (Recommended)",
                    "description": "Fast installs, a lockfile, and it manages Python versions.",
                },
                {"label": "pip + venv", "description": "Nothing new to learn; no lockfile."},
                {"label": "Poetry", "description": "Mature, but slower to resolve."},
            ],
        },
        {
            "id": "checks",
            "header": "CI",
            "question": "Which checks should run on every pull request?",
            "multi_select": True,
            "options": [
                {"label": "Unit tests", "description": "About a minute."},
                {"label": "Type checking", "description": "mypy --strict."},
                {"label": "Lint", "description": "ruff check and ruff format."},
                {"label": "Browser tests", "description": "About six minutes on CI."},
            ],
        },
        {
            "id": "service-name",
            "header": "Naming",
            "question": "What should the service be called?",
        },
    ]
}
"""What the demo agent asks first, as a model would call `ask_user_question`."""

PLAN = """\
## Add rate limiting to the public API

1. Add a token-bucket limiter keyed by API key, **100 requests per minute** by default.
2. Answer `429 Too Many Requests` with a `Retry-After` header when a bucket is empty.
3. Keep the buckets in Redis, so that every API node shares them.

| Endpoint | Limit per minute |
|---|---|
| `GET /search` | 60 |
| everything else | 100 |

```python
limiter = TokenBucket(rate=100, per=60)
```

Rollout: behind the `rate_limit` flag, on for 5% of keys first. \
See [RFC 6585](https://www.rfc-editor.org/rfc/rfc6585) for the status code.
"""
"""The plan the demo agent submits through `exit_plan_mode`."""


def demo(*, host: str = "127.0.0.1", port: int = 0) -> None:
    """Run a host on a temporary store with a demo agent asking through it.

    Parameters
    ----------
    host
        Address to listen on; loopback by default.
    port
        Port to listen on; 0 (the default) picks a free one. The printed URL has it.
    """
    with tempfile.TemporaryDirectory(prefix="uq-demo-") as folder:
        try:
            serve(
                HostConfig(store=Path(folder) / "host.db", host=host, port=port, tasks=[demo_agent])
            )
        except UserQuestionError as error:
            fail("demo", error.message, 1)


async def demo_agent(hub: Hub) -> None:
    """Ask the demo batch and the plan review, print what comes back, and start over."""
    ctx = Context()
    for plugin in (AgentRegistry, UserQuestionService, ToolRegistry):
        ctx.plugin(plugin)
    ctx.plugin(tool_ask_user)
    ctx.plugin(tool_exit_plan_mode)
    ctx.user_questions.register_provider(HostProvider(hub, "demo"))
    agent = Agent(id="demo-agent", name="Demo agent")
    ctx.agents.enter(agent)
    round_number = 1
    while True:
        for name, arguments in (("ask_user_question", BATCH), ("exit_plan_mode", {"plan": PLAN})):
            result = await ctx.tools.execute(name, arguments, agent=agent)
            print(f"[round {round_number}] {name} -> {result.content[0]['text']}", flush=True)
        round_number += 1
