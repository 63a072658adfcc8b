"""Durations and escalation steps as `uq` writes them everywhere: `30s`, `10m`, `2h`, `7d`;
`10m:@oncall`; `none` to take a timer away. Tokens' timers (a deadline, escalation steps, a
reminder period) are read here, beside the tokens; a rule's expiry reads its duration here too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.stores import Escalation

__all__ = [
    "NONE",
    "duration_text",
    "escalation_text",
    "parse_duration",
    "parse_escalation",
    "timer_seconds",
    "timer_steps",
]

NONE = "none"
"""Given for a token's deadline, reminder period or escalation steps: take them away."""
_DURATION = re.compile(r"(?P<count>[1-9][0-9]{0,6})(?P<unit>[smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """A duration written as `uq` writes them everywhere: `30s`, `10m`, `2h`, `7d`.

    Raises:
        UserQuestionError: `BAD_REQUEST` for anything else.
    """
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise UserQuestionError(
            f"invalid duration {text!r}: write a whole number and a unit, such as 30s, 10m, "
            "2h or 7d",
            ErrorCode.BAD_REQUEST,
        )
    return timedelta(seconds=int(found["count"]) * _UNITS[found["unit"]])


def timer_seconds(text: str | None) -> int | None:
    """A token's deadline or reminder period as given (`10m`) in seconds; `None` when not
    given (a change keeps the one it has), 0 for `none` (a change takes it away).

    Raises:
        UserQuestionError: `BAD_REQUEST` for a duration not written as `parse_duration` reads.
    """
    if text is None:
        return None
    if text.strip() == NONE:
        return 0
    return int(parse_duration(text).total_seconds())


def timer_steps(texts: Sequence[str] | None) -> list[Escalation] | None:
    """A token's escalation steps as given (`10m:@oncall`); `None` when not given, none at
    all for the one word `none`.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a step not written as `parse_escalation` reads.
    """
    if texts is None:
        return None
    if [text.strip() for text in texts] == [NONE]:
        return []
    return [parse_escalation(text) for text in texts]


def parse_escalation(text: str) -> Escalation:
    """An escalation step written `AFTER:TARGET` (`10m:@oncall`, `1h:admin`); the target is a
    person's name or `@group`, checked as a route is where it is kept (`tokens.check_grants`).

    Raises:
        UserQuestionError: `BAD_REQUEST` for a step not written so.
    """
    after, colon, to = text.strip().partition(":")
    if not colon or not to:
        raise UserQuestionError(
            f"invalid escalation step {text!r}: write AFTER:TARGET, such as 10m:@oncall or "
            "1h:admin",
            ErrorCode.BAD_REQUEST,
        )
    return Escalation(int(parse_duration(after).total_seconds()), to)


def duration_text(seconds: int) -> str:
    """`seconds` written as `parse_duration` reads them, in the largest whole unit (`10m`)."""
    unit, size = next((u, n) for u, n in reversed(_UNITS.items()) if seconds % n == 0)
    return f"{seconds // size}{unit}"


def escalation_text(step: Escalation) -> str:
    """`step` written as `parse_escalation` reads it (`10m:@oncall`)."""
    return f"{duration_text(step.after)}:{step.to}"
