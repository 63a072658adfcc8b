"""ACP bridge (extra `acp`): ask an editor from a Python ACP agent, answer ACP agents from ours.

The Agent Client Protocol (protocol version 1, through the official SDK `agent-client-protocol`)
lets an agent ask its client's person through permission requests and form elicitations. Each
direction lives in a private module re-exported here:

- `AcpProvider(connection, session_id, capabilities=...)` (`_acp_provider`): a Python ACP agent
  asks the person at its editor: one form when the editor advertises form elicitation, else one
  permission request per single-select question.
- `acp_client_handlers(provider)` (`_acp_client`): a Python ACP client answers an agent's
  permission requests and form elicitations through any of our providers.
- `questions_to_elicitation` / `answer_from_elicitation` (`_acp_form`): the form as plain JSON,
  for an agent that speaks ACP through other means.

`uq acp -- AGENT...` puts an editor's agent's questions in the inbox too. See
`docs/bridges/acp.md` for what each direction can and cannot carry.
"""

from __future__ import annotations

try:
    import acp  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised by hand on a core-only install
    raise ImportError(
        "user_questions.bridges.acp needs the ACP SDK: pip install 'user-questions[acp]'"
    ) from error

from user_questions.bridges._acp_client import (
    MAX_RENDERED,
    AcpClientHandlers,
    AcpPrompt,
    EditorAnswer,
    acp_client_handlers,
    prompt_of_request,
)
from user_questions.bridges._acp_form import answer_from_elicitation, questions_to_elicitation
from user_questions.bridges._acp_provider import AcpProvider
from user_questions.bridges._form_fields import (
    MAX_ATTEMPTS,
    MAX_FIELDS,
    Filled,
    FormOutcome,
    fill_form,
)

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_FIELDS",
    "MAX_RENDERED",
    "AcpClientHandlers",
    "AcpPrompt",
    "AcpProvider",
    "EditorAnswer",
    "Filled",
    "FormOutcome",
    "acp_client_handlers",
    "answer_from_elicitation",
    "fill_form",
    "prompt_of_request",
    "questions_to_elicitation",
]
