"""The sizes a request and an answer may have, the same on every surface.

Constants only. `ask()` checks a request against them (its check 7, after the seam's own checks and
before a provider is called), so the model-facing tools, the service itself (and every in-process
provider), the asker protocol, `uq ask --request` and every bridge refuse the same request the same
way: `TOO_MANY_QUESTIONS` for the count, `LIMIT_EXCEEDED` for anything else, with a message naming
the property. An answer's typed text is checked with the answer (`BAD_ANSWER`). Each limit is far
above what models and people send; they exist so that one request can never hold more than a page, a
terminal or a store can show and keep.

Lengths count characters (code points). The limits of the host's transport (frame and body
bytes, ids, pending requests) are the host's (docs/host.md lists every limit in one table).
"""

from __future__ import annotations

__all__ = [
    "MAX_ANSWER_NOTE_LENGTH",
    "MAX_CUSTOM_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_DETAIL_LENGTH",
    "MAX_EDITED_LENGTH",
    "MAX_FORM_FIELDS",
    "MAX_HEADER_LENGTH",
    "MAX_LABEL_LENGTH",
    "MAX_OPTIONS_PER_QUESTION",
    "MAX_QUESTIONS_PER_REQUEST",
    "MAX_QUESTION_ID_LENGTH",
    "MAX_QUESTION_LENGTH",
]

MAX_QUESTIONS_PER_REQUEST = 32
"""Questions in one request; more is `TOO_MANY_QUESTIONS`."""
MAX_OPTIONS_PER_QUESTION = 64
"""Options of one question."""
MAX_QUESTION_ID_LENGTH = 256
"""Characters in a question's `id`."""
MAX_HEADER_LENGTH = 1_000
"""Characters in a question's `header`."""
MAX_QUESTION_LENGTH = 10_000
"""Characters in a question's `question`."""
MAX_DETAIL_LENGTH = 100_000
"""Characters in a question's `detail` (a plan under review, above all)."""
MAX_LABEL_LENGTH = 1_000
"""Characters in an option's `label` (and so in a selected label, and an intent's `approve`)."""
MAX_DESCRIPTION_LENGTH = 10_000
"""Characters in an option's `description`."""
MAX_CUSTOM_LENGTH = 100_000
"""Characters in an answer's `custom` text, and in a text a form's value holds; more is
`BAD_ANSWER`."""
MAX_ANSWER_NOTE_LENGTH = 4_000
"""Characters in an answer's `note`, the remark beside a choice; more is `BAD_ANSWER`."""
MAX_EDITED_LENGTH = 500_000
"""Characters in an answer's `edited` call, written as compact JSON: a changed call may be a
whole file's content, and still fits in one frame; more is `BAD_ANSWER`."""
MAX_FORM_FIELDS = 64
"""Fields of one question's form (`schema.properties`), as many as its options could be."""
