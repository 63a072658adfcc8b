"""A batch of questions as one ACP elicitation form, and the client's result back as an answer.

Prints: {"answers":[{"id":"db","selected":[],"custom":"SQLite"},
{"id":"name","selected":[],"custom":"shop"}]}
"""

from __future__ import annotations

import json

from user_questions import AskUserQuestionItem, AskUserQuestionOption
from user_questions.bridges.acp import answer_from_elicitation, questions_to_elicitation

QUESTIONS = [
    AskUserQuestionItem(
        id="db",
        question="Which database?",
        options=[AskUserQuestionOption(label="PostgreSQL"), AskUserQuestionOption(label="MySQL")],
    ),
    AskUserQuestionItem(id="name", question="Project name?"),
]

params = {"sessionId": "sess-1", **questions_to_elicitation(QUESTIONS)}
# The agent sends `params` as `elicitation/create`; the client's user picks "Other" and types:
response = {
    "action": "accept",
    "content": {"db": "__other__", "db.other": "SQLite", "name": "shop"},
}
print(answer_from_elicitation(QUESTIONS, response).model_dump_json())
print(json.dumps(params["requestedSchema"]["properties"]["db"], ensure_ascii=False))
