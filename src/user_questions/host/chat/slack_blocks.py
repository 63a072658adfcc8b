"""A card as Slack Block Kit: mrkdwn sections with every text escaped, buttons, and the modals
that take typed text ("Other", a plan review's feedback) and a note beside the answer.

Slack's limits are kept here (`MAX_BLOCKS`, `SECTION_CHARACTERS`, `BUTTON_CHARACTERS`, ...): a
long text goes on over several sections, cut only at a line (or, for a line longer than a
section, inside it), and a fenced code block cut between two sections is closed and reopened.
A detail longer than `INLINE_SECTIONS` sections goes whole in messages of its own
(`detail_messages`), so Approve is never shown under a cut plan.
"""

from __future__ import annotations

import json
from typing import Any

from user_questions._languages import gettext, ngettext
from user_questions.host.chat.cards import (
    Card,
    WaitForNote,
    cut,
    detail_parts,
    ended_rows,
    ending_of,
)
from user_questions.host.stores import StoredQuestion

__all__ = [
    "BUTTON_CHARACTERS",
    "HEADER_CHARACTERS",
    "INLINE_SECTIONS",
    "MAX_BLOCKS",
    "MODAL_CALLBACK",
    "NOTE_CALLBACK",
    "NOTE_CHARACTERS",
    "SECTIONS_PER_MESSAGE",
    "SECTION_CHARACTERS",
    "card_blocks",
    "detail_apart",
    "detail_messages",
    "escape",
    "modal_view",
    "note_view",
    "sections",
    "settled_blocks",
]

MAX_BLOCKS = 50
"""Blocks in one message (Slack's)."""
SECTION_CHARACTERS = 3000
"""A section's text (Slack's)."""
HEADER_CHARACTERS = 150
"""A header block's plain text (Slack's)."""
BUTTON_CHARACTERS = 75
"""A button's text (Slack's)."""
BUTTONS_PER_ACTIONS = 25
"""Elements of one actions block (Slack's)."""
INLINE_SECTIONS = 5
"""A detail of more sections than this is sent in messages of its own."""
SECTIONS_PER_MESSAGE = 10
"""Sections of one message holding a detail apart (30,000 characters, under the 40,000 that
Slack keeps of a message)."""
MODAL_CALLBACK = "uq_text"
NOTE_CALLBACK = "uq_note"
NOTE_CHARACTERS = 3000
"""A plain-text input's `max_length` at most (Slack's): a note typed in Slack is shorter than the
host's `MAX_ANSWER_NOTE_LENGTH`."""
_DESCRIPTION_CHARACTERS = 300
_CODE = "```"


def escape(text: str) -> str:
    """`text` for mrkdwn: `&`, `<` and `>` as Slack's entities, so nothing in it is a link, a
    mention or a command."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def sections(mrkdwn: str, limit: int = SECTION_CHARACTERS) -> list[str]:
    """`mrkdwn` (escaped) in texts of at most `limit` characters, cut at lines; a code block
    cut is closed at the end of one text and reopened at the start of the next."""
    room = limit - 2 * (len(_CODE) + 1)
    texts: list[str] = []
    current: list[str] = []
    size = 0
    in_code = False
    opened_in_code = False

    def close() -> None:
        nonlocal current, size, opened_in_code
        if current:
            text = "\n".join(current)
            if opened_in_code:
                text = _CODE + "\n" + text
            if in_code:
                text += "\n" + _CODE
            texts.append(text)
        current, size, opened_in_code = [], 0, in_code

    for line in mrkdwn.split("\n"):
        for piece in _pieces(line, room):
            if size + len(piece) + 1 > room:
                close()
            current.append(piece)
            size += len(piece) + 1
        if line.lstrip().startswith(_CODE) and line.count(_CODE) % 2 == 1:
            in_code = not in_code
    close()
    return [text for text in texts if text.strip()] or ([mrkdwn] if mrkdwn.strip() else [])


def _pieces(line: str, room: int) -> list[str]:
    """`line` in pieces of at most `room` characters, never cut inside an entity (`&amp;`)."""
    pieces = []
    while len(line) > room:
        at = room
        entity = line.rfind("&", at - 5, at)
        if entity != -1 and ";" not in line[entity:at]:
            at = entity
        pieces.append(line[:at])
        line = line[at:]
    pieces.append(line)
    return pieces


def detail_mrkdwn(markdown: str) -> str:
    """A detail's Markdown as mrkdwn: fenced code as Slack's code blocks (which have no
    language), everything escaped."""
    parts = []
    for text, language in detail_parts(markdown):
        if language is None:
            parts.append(escape(text))
        else:
            parts.append(f"{_CODE}\n{escape(text.rstrip(chr(10)))}\n{_CODE}\n")
    return "".join(parts).strip()


def detail_apart(card: Card) -> bool:
    """Whether the card's detail is too long for its message and goes in messages of its own."""
    return card.detail is not None and len(sections(detail_mrkdwn(card.detail))) > INLINE_SECTIONS


def detail_messages(card: Card) -> list[list[dict[str, Any]]]:
    """The blocks of each message holding the card's whole detail, apart from the question."""
    texts = sections(detail_mrkdwn(card.detail or ""))
    return [
        [_section(text) for text in texts[at : at + SECTIONS_PER_MESSAGE]]
        for at in range(0, len(texts), SECTIONS_PER_MESSAGE)
    ]


def card_blocks(ref: str, card: Card, *, apart: int = 0) -> list[dict[str, Any]]:
    """The blocks of a message showing `card`, whose buttons carry `ref`; `apart`: the detail
    was sent in that many messages of its own, and the message says so instead of holding it."""
    top: list[dict[str, Any]] = []
    if card.header:
        top.append({"type": "header", "text": _plain(cut(card.header, HEADER_CHARACTERS))})
    top += [_section(text) for text in sections(f"*{escape(card.question)}*")]
    if card.detail is not None:
        if apart:
            note = ngettext(
                "The full text is too long for this message: it is in the message just sent.",
                "The full text is too long for this message: it is in the {count} messages just "
                "sent.",
                apart,
            ).format(count=apart)
            top.append({"type": "context", "elements": [{"type": "mrkdwn", "text": note}]})
        else:
            top += [_section(text) for text in sections(detail_mrkdwn(card.detail))]
    lines = []
    for number, line in enumerate(card.lines, 1):
        mark = "☑ " if line.chosen else ""
        text = f"{number}. {mark}*{escape(line.label)}*"
        if line.recommended:
            text += " ⭐ _" + escape(gettext("recommended")) + "_"
        if line.description:
            text += "\n      " + escape(cut(line.description, _DESCRIPTION_CHARACTERS))
        lines.append(text)
    lines += [f"*{escape(question)}*\n{escape(answer)}" for question, answer in card.summary]
    if card.note is not None:
        lines.append("_" + escape(gettext("Note: {note}").format(note=card.note)) + "_")
    middle = [_section(text) for text in sections("\n".join(lines))] if lines else []
    rows = list(card.buttons)
    if card.note_button is not None:
        rows.append([card.note_button])
    buttons = [
        {
            "type": "button",
            "text": _plain(cut(button.text, BUTTON_CHARACTERS)),
            "action_id": f"{ref}:{button.action}",
            "value": f"{ref}:{button.action}",
        }
        for row in rows
        for button in row
    ]
    actions = [
        {"type": "actions", "elements": buttons[at : at + BUTTONS_PER_ACTIONS]}
        for at in range(0, len(buttons), BUTTONS_PER_ACTIONS)
    ]
    if card.quorum is not None:
        top.append(
            {"type": "context", "elements": [{"type": "mrkdwn", "text": escape(card.quorum)}]}
        )
    room = MAX_BLOCKS - len(top) - len(actions)
    if len(middle) > room:  # dozens of long options: the buttons still hold every label
        middle = [*middle[: room - 1], _section("_… and more: each button holds its option._")]
    return [*top, *middle, *actions]


def settled_blocks(record: StoredQuestion) -> list[dict[str, Any]]:
    """The blocks a message of `record` is edited to once it settled: how, by whom, where, and
    no buttons."""
    rows = [f"*{escape(ending_of(record))}*"]
    for question, answer in ended_rows(record):
        rows.append(escape(question) + ("" if answer is None else f"\n→ {escape(answer)}"))
    return [_section(text) for text in sections("\n\n".join(rows))][:MAX_BLOCKS]


def modal_view(prompt: str, ref: str, channel: str) -> dict[str, Any]:
    """The modal asking for typed text; its private metadata names the message it answers."""
    field = {
        "type": "input",
        "block_id": "answer",
        "label": _plain(cut(prompt, 2000)),
        "element": {"type": "plain_text_input", "action_id": "text", "multiline": True},
    }
    metadata = {"ref": ref, "channel": channel}
    return _modal(MODAL_CALLBACK, metadata, gettext("Your answer"), gettext("Send"), field)


def note_view(asked: WaitForNote, ref: str, channel: str) -> dict[str, Any]:
    """The modal asking for the note on the question `asked` names, holding the note it has
    (left empty, it takes the note away); its private metadata names the message and the
    question."""
    element: dict[str, Any] = {
        "type": "plain_text_input",
        "action_id": "text",
        "multiline": True,
        "max_length": NOTE_CHARACTERS,
    }
    if asked.note:
        element["initial_value"] = cut(asked.note, NOTE_CHARACTERS)
    field = {
        "type": "input",
        "block_id": "note",
        "optional": True,
        "label": _plain(cut(asked.prompt, 2000)),
        "hint": _plain(gettext("Sent beside your answer when you choose it.")),
        "element": element,
    }
    metadata = {"ref": ref, "channel": channel, "question": asked.question}
    return _modal(NOTE_CALLBACK, metadata, gettext("Your note"), gettext("Keep"), field)


def _modal(
    callback: str, metadata: dict[str, str], title: str, submit: str, field: dict[str, Any]
) -> dict[str, Any]:
    """A modal of one input `field`, titled `title` (Slack: 24 characters at most)."""
    return {
        "type": "modal",
        "callback_id": callback,
        "private_metadata": json.dumps(metadata),
        "title": _plain(cut(title, 24)),
        "submit": _plain(cut(submit, 24)),
        "close": _plain(gettext("Cancel")),
        "blocks": [field],
    }


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": True}
