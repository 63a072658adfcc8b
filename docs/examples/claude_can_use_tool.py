"""Answer Claude's AskUserQuestion through one of our providers.

With the Claude Agent SDK installed you pass the callback as
`ClaudeAgentOptions(can_use_tool=can_use_tool(provider))`; here the call the SDK would make is
made by hand. Prints: {"Which format?":"Summary","Which sections?":"Intro, Outro"}
"""

from __future__ import annotations

import json

import anyio

from user_questions import ScriptedProvider
from user_questions.bridges.claude import can_use_tool

INPUT = {
    "questions": [
        {
            "question": "Which format?",
            "header": "Format",
            "options": [{"label": "Summary"}, {"label": "Detailed"}],
            "multiSelect": False,
        },
        {
            "question": "Which sections?",
            "header": "Sections",
            "options": [{"label": "Intro"}, {"label": "Body"}, {"label": "Outro"}],
            "multiSelect": True,
        },
    ]
}


async def main() -> None:
    human = ScriptedProvider({"q1": "Summary", "q2": ["Intro", "Outro"]})
    result = await can_use_tool(human)("AskUserQuestion", INPUT, None)
    print(json.dumps(result.updated_input["answers"], separators=(",", ":")))


if __name__ == "__main__":
    anyio.run(main)
