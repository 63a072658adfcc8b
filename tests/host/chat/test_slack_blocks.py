"""A card as Slack Block Kit keeps within Slack's limits however long its texts: sections of at
most 3000 characters cut at lines, code blocks closed and reopened across a cut, entities never
cut, at most 50 blocks with every option's button, and every text escaped."""

from __future__ import annotations

from user_questions.host.chat.cards import Draft, card_of
from user_questions.host.chat.slack_blocks import (
    BUTTON_CHARACTERS,
    MAX_BLOCKS,
    SECTION_CHARACTERS,
    card_blocks,
    detail_apart,
    detail_messages,
    escape,
    sections,
)
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption


def test_a_long_text_is_cut_at_lines_and_a_code_block_is_reopened() -> None:
    lines = ["```"] + [f"line {n} &amp; more" for n in range(400)] + ["```", "after"]
    texts = sections("\n".join(lines))
    assert len(texts) > 1
    assert all(len(text) <= SECTION_CHARACTERS for text in texts)
    assert all(text.count("```") % 2 == 0 for text in texts)  # every cut block is closed
    assert texts[1].startswith("```\nline")
    kept = [line for text in texts for line in text.split("\n") if line != "```"]
    assert kept == [line for line in lines if line != "```"]  # nothing lost, in order


def test_a_line_longer_than_a_section_is_cut_but_never_inside_an_entity() -> None:
    texts = sections(escape("&" * 2000))  # 10,000 characters of `&amp;`
    assert all(len(text) <= SECTION_CHARACTERS for text in texts)
    assert all(text.replace("&amp;", "") == "" for text in texts)
    assert "".join(texts) == "&amp;" * 2000


def test_sixty_four_long_options_fit_fifty_blocks_and_every_button_is_there() -> None:
    options = [
        AskUserQuestionOption(label=f"option {n} " + "x" * 200, description="d" * 2000)
        for n in range(64)
    ]
    question = AskUserQuestionItem(id="q", question="Which?", options=options)
    blocks = card_blocks("ref", card_of([question], Draft()))
    assert len(blocks) <= MAX_BLOCKS
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert len(buttons) == 64 + 3  # each option, Other, Dismiss, Add a note
    assert all(len(b["text"]["text"]) <= BUTTON_CHARACTERS for b in buttons)
    assert len({b["action_id"] for b in buttons}) == len(buttons)
    sections_ = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert all(len(text) <= SECTION_CHARACTERS for text in sections_)


def test_a_detail_too_long_for_the_message_goes_apart_whole() -> None:
    detail = "\n".join(f"step <{n}>" for n in range(5000))
    question = AskUserQuestionItem(
        id="p", question="Plan?", detail=detail, options=[AskUserQuestionOption(label="Approve")]
    )
    card = card_of([question], Draft())
    assert detail_apart(card)
    messages = detail_messages(card)
    assert all(len(blocks) <= MAX_BLOCKS for blocks in messages)
    texts = [block["text"]["text"] for blocks in messages for block in blocks]
    assert "\n".join(texts) == escape(detail)
    shown = card_blocks("ref", card, apart=len(messages))
    assert "step" not in str(shown)
    assert f"the {len(messages)} messages just sent" in str(shown)
