"""What a Web Push message says: the JSON the service worker (`web/static/sw.js`) reads.

Three kinds, each a compact JSON object with `v` (1), `type`, `rpcId` and `tag` (one per request,
`uq-` and the request's topic, so a later message replaces the earlier one on the device):

- `question/pending`: `title`, `body` (the header and the question, one line each), `question`
  (the first question's text) and `choices` (`[{"option", "label"}]`, the options a button may
  answer with: `taps.one_tap_options`, at most `MAX_CHOICES`; the worker shows them only when
  the platform has that many buttons);
- `question/waiting`: the content-free message of `--push-private`: `title` ("A question is
  waiting") and nothing a model wrote; the worker fetches the card from the host;
- `question/settled`: `outcome`; the worker closes the request's notification.

Everything a model wrote is made one line without control characters and cut (`one_line`); the
whole message stays under `MAX_PAYLOAD_BYTES`, well inside what every push service carries (RFC
8291 promises 3,993 bytes of plain text), by cutting the texts further when it must.

The words a person reads are in `TEXTS`, one template each, so they can go into a catalog whole.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from user_questions._languages import N_, gettext
from user_questions.host.notify.message import one_line
from user_questions.host.notify.taps import one_tap_options
from user_questions.host.stores import StoredQuestion

__all__ = [
    "MAX_CHOICES",
    "MAX_PAYLOAD_BYTES",
    "PUSH_PENDING",
    "PUSH_SETTLED",
    "PUSH_WAITING",
    "TEXTS",
    "card_of",
    "payload_of",
    "topic_of",
]

PUSH_PENDING = "question/pending"
PUSH_WAITING = "question/waiting"
PUSH_SETTLED = "question/settled"
MAX_CHOICES = 4
"""Buttons a message may carry; a question with more opens the page (browsers show 2 to 4)."""
MAX_PAYLOAD_BYTES = 3000
"""The most a message's JSON takes, in UTF-8 bytes."""
TEXTS: Mapping[str, str] = {
    "pending_title": N_("Question from {session}"),
    "waiting_title": N_("A question is waiting"),
    "waiting_body": N_("Open it to see the question."),
}
"""Every word of a push message that is not the agent's, as a template: a catalog's message id,
written in the language spoken where the message is made (`gettext`)."""
_CUTS = ((300, 80), (120, 40), (60, 20))
"""The longest question and label, tried in turn until the message fits."""


def topic_of(rpc_id: str) -> str:
    """The request's push topic (RFC 8030 `Topic`: at most 32 URL-safe base64 characters), the
    same for its every message, so the push service keeps only the latest undelivered one."""
    digest = hashlib.sha256(rpc_id.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()[:32]


def payload_of(record: StoredQuestion, *, private: bool = False) -> bytes:
    """The push message for `record`: settled, pending, or (`private`) content-free pending."""
    head = {"v": 1, "rpcId": record.rpc_id, "tag": f"uq-{topic_of(record.rpc_id)}"}
    if not record.pending:
        return _encoded({**head, "type": PUSH_SETTLED, "outcome": str(record.outcome)})
    if private:
        return _encoded(
            {
                **head,
                "type": PUSH_WAITING,
                "title": gettext(TEXTS["waiting_title"]),
                "body": gettext(TEXTS["waiting_body"]),
            }
        )
    for question_chars, label_chars in _CUTS:
        data = _encoded({**head, **card_of(record, question_chars, label_chars)})
        if len(data) <= MAX_PAYLOAD_BYTES:
            return data
    return _encoded({**head, **card_of(record, 60, 20, choices=False)})


def card_of(
    record: StoredQuestion,
    question_chars: int = _CUTS[0][0],
    label_chars: int = _CUTS[0][1],
    *,
    choices: bool = True,
) -> dict[str, Any]:
    """The pending request as the worker shows it (also what it fetches in private mode)."""
    first = record.questions[0]
    question = one_line(first.question, question_chars)
    header = one_line(first.header, 60) if first.header else ""
    options = first.options or []
    taps = one_tap_options(record) if choices else []
    return {
        "type": PUSH_PENDING,
        "title": gettext(TEXTS["pending_title"]).format(session=one_line(record.session_id, 60)),
        "body": f"[{header}] {question}" if header else question,
        "question": question,
        "choices": [
            {"option": index, "label": one_line(options[index].label, label_chars)}
            for index in (taps if len(taps) <= MAX_CHOICES else [])
        ],
    }


def _encoded(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
