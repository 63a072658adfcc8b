"""MCP bridge (extra `mcp`): our questions through MCP, MCP elicitations through our providers.

Three directions, each in a private module re-exported here:

- `create_server(ctx)` (`_mcp_server`): an MCP server exposing the tools of `ctx.tools`, such as
  `ask_user_question`, with the same schema, result text and errors; `uq mcp` runs it.
- `ElicitationProvider(ctx)` and `QuestionForm(questions)` (`_mcp_provider`): code inside an MCP
  tool call asks the client's user through form elicitation, in flight (protocol <= 2025-11-25)
  or through `Resolve`/`Elicit` input-required rounds (2026-07-28).
- `elicitation_handler(provider)` (`_mcp_handler`): a harness acting as an MCP client answers a
  server's elicitation requests with any of our providers.

See `docs/bridges/mcp.md` for which to use when, and what each side cannot carry.
"""

from __future__ import annotations

try:
    import mcp  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised by hand on a core-only install
    raise ImportError(
        "user_questions.bridges.mcp needs the MCP SDK: pip install 'user-questions[mcp]'"
    ) from error

from user_questions.bridges._form_fields import MAX_ATTEMPTS, MAX_FIELDS
from user_questions.bridges._mcp_handler import elicitation_handler
from user_questions.bridges._mcp_provider import ElicitationProvider, QuestionForm
from user_questions.bridges._mcp_server import PROGRESS_INTERVAL, create_server

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_FIELDS",
    "PROGRESS_INTERVAL",
    "ElicitationProvider",
    "QuestionForm",
    "create_server",
    "elicitation_handler",
]
