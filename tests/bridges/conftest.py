"""Helpers for the bridge tests: batches of questions and their valid answers, for hypothesis;
the agent CLIs' hook events of `fixtures/`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
)

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`$XDG_STATE_HOME` in the test's own folder: the notes a Claude Code hook keeps for an
    allowed call's `PostToolUse` (`_hooks.allowed_notes`) never reach the real home."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path


def hook_event(client: str, name: str) -> dict[str, Any]:
    """The `event` of the hook event fixture `fixtures/<client>/<name>.json`."""
    document = json.loads((FIXTURES / client / f"{name}.json").read_text(encoding="utf-8"))
    found: dict[str, Any] = document["event"]
    return found


_words = st.text(alphabet="abcdefghij XYZ-é", min_size=1, max_size=12).map(str.strip).filter(bool)


@st.composite
def questions(draw: Any) -> list[AskUserQuestionItem]:
    """A valid batch: unique ids without dots, unique labels, a mix of kinds."""
    ids = draw(
        st.lists(
            st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    batch = []
    for question_id in ids:
        labels = draw(st.lists(_words, max_size=4, unique=True))
        options = [
            AskUserQuestionOption(label=label, description=draw(st.none() | _words))
            for label in labels
        ]
        batch.append(
            AskUserQuestionItem(
                id=question_id,
                question=draw(_words),
                header=draw(st.none() | _words),
                detail=draw(st.none() | _words),
                options=options or None,
                multi_select=draw(st.none() | st.booleans()) if options else None,
            )
        )
    return batch


@st.composite
def answered(draw: Any) -> tuple[list[AskUserQuestionItem], AskUserQuestionAnswer]:
    """A batch and one valid answer to it: choices, custom text, skips."""
    batch = draw(questions())
    items = []
    for question in batch:
        labels = [option.label for option in question.options or ()]
        custom = draw(st.none() | _words)
        if not labels:
            items.append(AskUserQuestionAnswerItem(id=question.id, selected=[], custom=custom))
        elif question.multi_select:
            chosen = draw(st.lists(st.sampled_from(labels), unique=True))
            chosen.sort(key=labels.index)
            items.append(AskUserQuestionAnswerItem(id=question.id, selected=chosen, custom=custom))
        elif custom is not None:
            items.append(AskUserQuestionAnswerItem(id=question.id, selected=[], custom=custom))
        else:
            chosen = draw(st.lists(st.sampled_from(labels), max_size=1))
            items.append(AskUserQuestionAnswerItem(id=question.id, selected=chosen))
    return batch, AskUserQuestionAnswer(answers=items)
