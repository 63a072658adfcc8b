"""`ScriptedProvider`: answers from a script, for tests, CI and demos.

It is to this package what `httpx.MockTransport` is to httpx: a real provider whose human is a
mapping or a function. It fails closed: a question the script does not answer is a dismissal
(`ASK_CANCELLED`), never an invented choice or consent.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

import anyio

from user_questions._checks import cancelled_error
from user_questions.service import AskUserQuestionRequest
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
)

__all__ = ["ScriptedAnswer", "ScriptedProvider"]

ScriptedAnswer: TypeAlias = (
    str | Sequence[str] | Mapping[str, Any] | AskUserQuestionAnswerItem | None
)
"""How a script answers one question:

- `None`: the question is skipped (`{id, selected: []}`);
- a `str`: the option with that label, or custom text when no option has it;
- a list of `str`: those option labels;
- a mapping: the answer item's fields, such as `{"selected": ["a"], "custom": "b"}`;
- an `AskUserQuestionAnswerItem`: used as it is.
"""

Script: TypeAlias = (
    Mapping[str, ScriptedAnswer]
    | Callable[
        [AskUserQuestionRequest],
        AskUserQuestionAnswer
        | Mapping[str, ScriptedAnswer]
        | Awaitable[AskUserQuestionAnswer | Mapping[str, ScriptedAnswer]],
    ]
)


class ScriptedProvider:
    """A provider that answers from `answers`: a mapping of question id to `ScriptedAnswer`, or
    a function (sync or async) of the request returning such a mapping or a whole answer.

    `delay` seconds pass before each answer, as a human's would, so aborts and cancellations can
    be exercised; every request is kept in `seen`.
    """

    def __init__(self, answers: Script, *, delay: float = 0.0) -> None:
        self._answers = answers
        self._delay = delay
        self.seen: list[AskUserQuestionRequest] = []

    def __repr__(self) -> str:
        return f"<ScriptedProvider seen={len(self.seen)}>"

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        self.seen.append(request)
        if self._delay:
            await anyio.sleep(self._delay)
        script: Any = self._answers
        if callable(script):
            script = script(request)
            if inspect.isawaitable(script):
                script = await script
            if isinstance(script, AskUserQuestionAnswer):
                return script
        items = []
        for question in request.questions:
            if question.id not in script:
                raise cancelled_error()
            items.append(_item(question, script[question.id]))
        return AskUserQuestionAnswer(answers=items)


def _item(question: AskUserQuestionItem, scripted: ScriptedAnswer) -> AskUserQuestionAnswerItem:
    if isinstance(scripted, AskUserQuestionAnswerItem):
        return scripted
    if scripted is None:
        return AskUserQuestionAnswerItem(id=question.id, selected=[])
    if isinstance(scripted, str):
        if any(option.label == scripted for option in question.options or ()):
            return AskUserQuestionAnswerItem(id=question.id, selected=[scripted])
        return AskUserQuestionAnswerItem(id=question.id, selected=[], custom=scripted)
    if isinstance(scripted, Mapping):
        return AskUserQuestionAnswerItem.model_validate(
            {"selected": [], **scripted, "id": question.id}
        )
    return AskUserQuestionAnswerItem(id=question.id, selected=list(scripted))
