"""The answer a person builds in a chat message: taps on a keyboard that is no longer current
change nothing, a draft read back from the store is never trusted, Start over starts over; an
answered card shows the changed call and the note in its person's language."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from user_questions._languages import speaking
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.chat.cards import (
    Answered,
    Dismissed,
    Draft,
    WaitForNote,
    WaitForText,
    card_of,
    ended_rows,
    take_action,
    take_note,
    take_text,
)
from user_questions.host.chat.telegram import telegram_html
from user_questions.host.stores import StoredQuestion
from user_questions.limits import MAX_ANSWER_NOTE_LENGTH
from user_questions.outcomes import RequestState
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
)

QUESTIONS = (
    AskUserQuestionItem(
        id="a", question="First?", options=[AskUserQuestionOption(label="x"),
                                           AskUserQuestionOption(label="y")],
    ),
    AskUserQuestionItem(id="b", question="Second?", options=[AskUserQuestionOption(label="z")]),
)  # fmt: skip


def test_a_tap_on_the_keyboard_of_an_earlier_question_changes_nothing() -> None:
    draft = Draft()
    assert take_action(QUESTIONS, draft, "p0.1") is draft  # y, then on to the second
    assert draft.step == 1
    assert take_action(QUESTIONS, draft, "p0.0") is None  # the first question's keyboard
    assert take_action(QUESTIONS, draft, "p1.9") is None  # no such option
    assert take_action(QUESTIONS, draft, "s") is None  # not at the summary yet
    assert take_action(QUESTIONS, draft, "zz") is None
    assert draft.chosen == {"a": ["y"]}


def test_other_text_replaces_the_choice_and_the_summary_sends_or_starts_over() -> None:
    draft = Draft()
    take_action(QUESTIONS, draft, "p0.0")
    assert take_action(QUESTIONS, draft, "o1") == WaitForText("Second?")
    assert take_text(QUESTIONS, draft, "   ") is None  # nothing typed
    assert take_text(QUESTIONS, draft, "my own") is draft
    assert [row for row, _ in card_of(QUESTIONS, draft).summary] == ["First?", "Second?"]
    assert take_action(QUESTIONS, Draft.from_json(draft.to_json()), "r") == Draft()
    sent = take_action(QUESTIONS, draft, "s")
    assert isinstance(sent, Answered)
    assert sent.answer.model_dump(exclude_none=True) == {
        "answers": [{"id": "a", "selected": ["x"]}, {"id": "b", "selected": [], "custom": "my own"}]
    }
    assert isinstance(take_action(QUESTIONS, draft, "x"), Dismissed)


def test_a_draft_that_is_not_one_reads_as_a_fresh_draft() -> None:
    assert Draft.from_json("not json") == Draft()
    assert Draft.from_json('{"step": "two"}') == Draft()
    assert Draft.from_json("[1, 2]") == Draft()


def test_every_text_is_escaped_and_code_is_shown_as_code() -> None:
    question = AskUserQuestionItem(
        id="c", header="<b>h</b>", question="a & b",
        detail="run:\n```sh\nrm -rf <dir>\n```\n<i>no</i>",
        options=[AskUserQuestionOption(label="Go (Recommended)", description="<x>")],
    )  # fmt: skip
    text = telegram_html(card_of([question], Draft()))
    assert text.startswith("<b>&lt;b&gt;h&lt;/b&gt;</b>\n\na &amp; b")
    assert '<pre><code class="language-sh">rm -rf &lt;dir&gt;\n</code></pre>' in text
    assert "&lt;i&gt;no&lt;/i&gt;" in text
    assert "1. <b>Go</b> ⭐ <i>recommended</i>\n    &lt;x&gt;" in text


def test_an_answered_card_shows_the_changed_call_and_the_note_in_its_persons_language() -> None:
    item = AskUserQuestionAnswerItem(
        id="a", selected=["x"], edited={"command": "ls"}, note="only once"
    )
    record = StoredQuestion(
        rpc_id="r1",
        session_id="s",
        questions=QUESTIONS[:1],
        asked_at=datetime(2026, 1, 2, tzinfo=UTC),
        state=RequestState.ANSWERED,
        answer=AskUserQuestionAnswer(answers=[item]),
    )
    with speaking("en"):
        assert ended_rows(record) == [
            ("First?", 'x (changed to {"command":"ls"}) (note: only once)')
        ]
    with speaking("ja"):
        assert ended_rows(record) == [
            ("First?", 'x （{"command":"ls"} に変更） （メモ：only once）')
        ]
    with speaking("ko"):
        assert ended_rows(record)[0][1] == 'x ({"command":"ls"}(으)로 변경) (메모: only once)'


def test_a_note_is_kept_on_the_question_shown_and_on_the_summary_on_the_first() -> None:
    draft = Draft()
    assert take_note(QUESTIONS, draft, "  mind the cache  ") is draft
    assert card_of(QUESTIONS, draft).note == "mind the cache"
    take_action(QUESTIONS, draft, "p0.0")
    assert card_of(QUESTIONS, draft).note is None  # the second question has none
    assert take_action(QUESTIONS, draft, "n0") is None  # the first question's button
    assert take_action(QUESTIONS, draft, "n1") == WaitForNote("Second?", "b", "")
    take_note(QUESTIONS, draft, "later", "b")
    take_action(QUESTIONS, draft, "p1.0")
    assert card_of(QUESTIONS, draft).summary == [
        ("First?", "x (note: mind the cache)"),
        ("Second?", "z (note: later)"),
    ]
    take_note(QUESTIONS, draft, "on the first")  # on the summary: the first question's
    take_note(QUESTIONS, draft, "   ", "b")  # blank: the note goes
    read_back = Draft.from_json(draft.to_json())
    assert read_back.notes == {"a": "on the first"}
    sent = take_action(QUESTIONS, read_back, "s")
    assert isinstance(sent, Answered)
    assert sent.answer.model_dump(exclude_none=True) == {
        "answers": [
            {"id": "a", "selected": ["x"], "note": "on the first"},
            {"id": "b", "selected": ["z"]},
        ]
    }


def test_a_note_the_host_would_refuse_raises_its_error_and_a_form_takes_none() -> None:
    with pytest.raises(UserQuestionError) as raised:
        take_note(QUESTIONS, Draft(), "x" * (MAX_ANSWER_NOTE_LENGTH + 1))
    assert raised.value.code == ErrorCode.BAD_ANSWER
    assert f"at most {MAX_ANSWER_NOTE_LENGTH} are allowed" in raised.value.message
    form = AskUserQuestionItem(
        id="f", question="Who?", schema={"type": "object", "properties": {"n": {"type": "string"}}}
    )
    assert take_note([form], Draft(), "hello") is None
    assert take_note(QUESTIONS, Draft(), "hello", "no-such-question") is None
    assert card_of([form], Draft()).note_button is None
    assert take_action([form], Draft(), "n0") is None
