"""How many people must approve a call: an asker token's or a rule's `approvals` (a quorum).

A change process for production often asks two people, not one, to approve a change; an asker
token (`uq token add NAME --role asker --approvals 2`) or an allow rule (`uq rule add ...
--approvals 2`) says so, and its approval requests settle as allowed only once that many
distinct people chose the approving option for the same call (docs/rules.md).
"""

from __future__ import annotations

from user_questions.errors import ErrorCode, UserQuestionError

__all__ = ["MAX_APPROVALS", "parse_approvals"]

MAX_APPROVALS = 10
"""The largest quorum a token or rule may ask for: beyond it, nobody would reach it."""


def parse_approvals(given: str | int | None) -> int | None:
    """A quorum as given (`--approvals 2`, `"approvals": 2`); `None` when not given (a change
    keeps the one it has).

    Raises:
        UserQuestionError: `BAD_REQUEST` for anything but a whole number from 1 to
            `MAX_APPROVALS`.
    """
    if given is None:
        return None
    text = str(given).strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_APPROVALS:
        raise UserQuestionError(
            f"invalid approvals {given!r}: give how many people must approve each call, "
            f"a whole number from 1 to {MAX_APPROVALS}",
            ErrorCode.BAD_REQUEST,
        )
    return int(text)
