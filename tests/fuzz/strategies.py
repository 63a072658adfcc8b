"""What the fuzzers send: random JSON, and valid frames broken in one place at a time.

Each input is a `Probe`: the bytes or text sent, the class of malformation it belongs to (for
reports), and what the host must do with it when that is certain (refuse it, with which code).
Classes: `random-json`, `wrong-type`, `missing`, `deep`, `surrogate`, `nul`, `huge-number`,
`duplicate-key`, `not-json`, `not-utf-8`, `oversize-field`, `oversize-frame`, `valid`.

Frames that address a pending request name it `@target@`: the harness puts a pending request's
rpcId there before sending, so answers reach the answer checks rather than stopping at
`not-pending`. Frames that make a request name it `@fresh@`: the harness puts an rpcId never
used before there.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from user_questions.frames import MAX_FRAME_BYTES
from user_questions.limits import (
    MAX_DETAIL_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS_PER_QUESTION,
    MAX_QUESTION_ID_LENGTH,
)

__all__ = [
    "FRESH",
    "TARGET",
    "TARGET_QUESTIONS",
    "Probe",
    "asker_probes",
    "channel_probes",
    "page_probes",
    "tool_probes",
]

FRESH = "@fresh@"
"""Stands for an rpcId never used before."""
TARGET = "@target@"
"""Stands for the rpcId of a pending request in a page's frame."""
TARGET_QUESTIONS: list[dict[str, Any]] = [
    {"id": "pick", "question": "Which one?", "options": [{"label": "a"}, {"label": "b"}]},
    {
        "id": "many",
        "question": "Which ones?",
        "multiSelect": True,
        "options": [{"label": "x"}, {"label": "y"}],
    },
    {"id": "free", "question": "Anything else?", "detail": "**bold** [link](https://a.example)"},
]
"""The questions of every target request."""

_ANSWER = {
    "answers": [
        {"id": "pick", "selected": ["a"]},
        {"id": "many", "selected": ["x", "y"]},
        {"id": "free", "selected": [], "custom": "typed"},
    ]
}
_QUESTION = {
    "id": "q",
    "header": "Head",
    "question": "Which?",
    "detail": "# Plan\n\n1. one",
    "options": [{"label": "a", "description": "first"}, {"label": "b"}],
}
_PLAN = {
    "id": "plan",
    "question": "Approve?",
    "detail": "the plan",
    "options": [{"label": "Approve"}, {"label": "Keep planning"}],
    "intent": {"kind": "plan-review", "approve": "Approve"},
}


@dataclass(frozen=True)
class Probe:
    """One input and what the host must make of it."""

    label: str
    """The class of malformation, for reports."""
    data: str | bytes
    """What is sent: JSON text, or bytes (a binary WebSocket frame, a raw HTTP body)."""
    refused: bool = False
    """It must not be accepted: no `ask/pending`, no accepted receipt, no answer."""
    code: str | None = None
    """The error code it must get, when that is certain."""
    too_large: bool = False
    """It is over `MAX_FRAME_BYTES`: the socket is closed with 1009, a body gets 413."""
    accepted: bool = False
    """It must be accepted: an ask is pending, an answer or dismissal settles its request."""

    def __repr__(self) -> str:
        """Short enough to print: hypothesis shows a failing input, and an oversize frame's
        megabyte would bury the failure under a warning about its own length."""
        data = self.data if len(self.data) <= _REPR_DATA else self.data[:_REPR_DATA]
        cut = "" if data is self.data else f"... ({len(self.data)} in all)"
        return (
            f"Probe({self.label!r}, {data!r}{cut}, refused={self.refused}, code={self.code!r},"
            f" too_large={self.too_large}, accepted={self.accepted})"
        )


_REPR_DATA = 300
"""How much of a probe's data its repr shows."""


# -- values ---------------------------------------------------------------------------------

_ODD_TEXT = ["\ud800", "a\udfffb", "\udc00\ud800", "\x00", "nul\x00", "😀", "\u2028", "", " "]
_TEXT = st.one_of(st.text(max_size=20), st.sampled_from(_ODD_TEXT))
_NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)
_SCALARS = st.one_of(st.none(), st.booleans(), _NUMBERS, _TEXT)
JSON_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(_TEXT, children, max_size=4)
    ),
    max_leaves=12,
)
"""Any JSON value, lone surrogates and NULs included in its strings."""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)  # a lone surrogate travels as its escape


def _paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every place in a document, its root aside."""
    found: list[tuple[str | int, ...]] = []
    if isinstance(value, dict | list):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            found.append((*path, key))
            found += _paths(item, (*path, key))
    return found


def _strings(value: Any) -> list[tuple[str | int, ...]]:
    """The places that hold a string."""
    return [path for path in _paths(value) if isinstance(_get(value, path), str)]


def _get(value: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _set(value: Any, path: tuple[str | int, ...], new: Any) -> None:
    _get(value, path[:-1])[path[-1]] = new


def _delete(value: Any, path: tuple[str | int, ...]) -> None:
    del _get(value, path[:-1])[path[-1]]


# -- broken frames --------------------------------------------------------------------------

Template = Callable[[], dict[str, Any]]
"""Makes a valid frame."""


def _ask() -> dict[str, Any]:
    questions = [copy.deepcopy(_QUESTION), {"id": "free", "question": "And?"}]
    return {"type": "ask", "rpcId": FRESH, "sessionId": "fuzz", "questions": questions}


def _ask_plan() -> dict[str, Any]:
    origin = {"client": "fuzz", "cwd": "/srv/fuzz"}
    return {**_ask(), "questions": [copy.deepcopy(_PLAN)], "origin": origin}


def _withdraw() -> dict[str, Any]:
    return {"type": "withdraw", "rpcId": FRESH, "reason": "timed-out"}


def _ping() -> dict[str, Any]:
    return {"type": "ping"}


def _answer() -> dict[str, Any]:
    value = {"sessionId": "fuzz", "answer": copy.deepcopy(_ANSWER)}
    return {"type": "client-response", "rpcId": TARGET, "result": {"ok": True, "value": value}}


def _dismiss() -> dict[str, Any]:
    error = {"code": "cancelled", "message": "dismissed"}
    return {"type": "client-response", "rpcId": TARGET, "result": {"ok": False, "error": error}}


_OVERSIZE: dict[str, tuple[Callable[[dict[str, Any], int], None], int, int]] = {
    "options": (
        lambda question, n: question.update(options=[{"label": str(i)} for i in range(n)]),
        MAX_OPTIONS_PER_QUESTION + 1,
        5_000,
    ),
    "label": (
        lambda question, n: question["options"][0].update(label="l" * n),
        MAX_LABEL_LENGTH + 1,
        20_000,
    ),
    "id": (lambda question, n: question.update(id="i" * n), MAX_QUESTION_ID_LENGTH + 1, 20_000),
    "detail": (
        lambda question, n: question.update(detail="[" * n),
        MAX_DETAIL_LENGTH + 1,
        300_000,
    ),
}
"""Fields of a question made too long or too many: (how, smallest oversize, largest)."""


_KINDS = [
    "valid",
    "wrong-type",
    "missing",
    "surrogate",
    "nul",
    "huge-number",
    "deep",
    "duplicate-key",
    "not-json",
    "not-utf-8",
    "oversize-frame",
]


@st.composite
def _broken(draw: st.DrawFn, templates: list[Template], oversize: list[str]) -> Probe:
    """A valid frame of `templates`, broken in one place (or not: `valid`); `oversize` names
    the question fields it may make too long or too many (`_OVERSIZE`)."""
    frame = draw(st.sampled_from(templates))()
    can_oversize = bool(oversize) and "questions" in frame
    kind = draw(st.sampled_from(_KINDS + (["oversize-field"] if can_oversize else [])))
    places = _paths(frame)
    if kind == "valid":
        accepted = frame.get("type", "ask") in ("ask", "client-response")
        return Probe(kind, _dumps(frame), accepted=accepted)
    if kind == "wrong-type":
        _set(frame, draw(st.sampled_from(places)), draw(JSON_VALUES))
        return Probe(kind, _dumps(frame))
    if kind == "missing":
        _delete(frame, draw(st.sampled_from(places)))
        return Probe(kind, _dumps(frame))
    if kind in ("surrogate", "nul"):
        place = draw(st.sampled_from(_strings(frame)))
        odd = "\ud800" if kind == "surrogate" else "\x00"
        text = _get(frame, place)
        at = draw(st.integers(0, len(text)))
        _set(frame, place, text[:at] + odd + text[at:])
        # A surrogate is never JSON's to carry; a NUL is refused where it would be kept.
        code = "BAD_REQUEST" if kind == "surrogate" else None
        return Probe(kind, _dumps(frame), refused=code is not None, code=code)
    if kind == "huge-number":
        _set(frame, draw(st.sampled_from(places)), "@huge@")
        huge = draw(st.sampled_from(["1" + "0" * 5_000, "1e999999", "-1e-999999", "9" * 4_301]))
        digits = huge.lstrip("-").isdigit()
        return Probe(
            kind,
            _dumps(frame).replace('"@huge@"', huge),
            refused=digits,
            code="BAD_REQUEST" if digits else None,
        )
    if kind == "deep":
        depth = draw(st.integers(65, 3_000))
        _set(frame, draw(st.sampled_from(places)), "@deep@")
        arrays, objects = "[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth
        nested = draw(st.sampled_from([arrays, objects]))
        return Probe(
            kind, _dumps(frame).replace('"@deep@"', nested), refused=True, code="BAD_REQUEST"
        )
    if kind == "duplicate-key":
        text = _dumps(frame)
        extra = draw(st.sampled_from(['"type": "ping"', '"rpcId": 5', '"type": "ask"']))
        return Probe(kind, "{" + extra + ", " + text[1:])
    if kind == "not-json":
        text = _dumps(frame)
        cut = draw(st.integers(0, len(text) - 1))
        broken = draw(st.sampled_from([text[:cut], text.replace('"', "'", 1), text + "}", "NaN"]))
        return Probe(kind, broken, refused=True, code="BAD_REQUEST")
    if kind == "not-utf-8":
        raw = _dumps(frame).encode() + draw(st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\xc3"]))
        return Probe(kind, raw, refused=True, code="BAD_REQUEST")
    if kind == "oversize-frame":
        frame["padding"] = "p" * (MAX_FRAME_BYTES + 1)
        return Probe(kind, _dumps(frame), refused=True, too_large=True)
    how, smallest, largest = _OVERSIZE[draw(st.sampled_from(oversize))]
    question = frame["questions"][0]
    question.pop("intent", None)  # its approve label must stay one of the options (check 5)
    how(question, draw(st.integers(smallest, largest)))
    return Probe(kind, _dumps(frame), refused=True, code="LIMIT_EXCEEDED")


_RANDOM = st.builds(lambda value: Probe("random-json", _dumps(value)), JSON_VALUES)


def asker_probes() -> st.SearchStrategy[Probe]:
    """Inputs for `/ws/ask`: random JSON, and asks, withdrawals and pings broken once."""
    return st.one_of(_RANDOM, _broken([_ask, _ask_plan, _withdraw, _ping], sorted(_OVERSIZE)))


def channel_probes(channel: str) -> st.SearchStrategy[Probe]:
    """The inputs for a channel: `ask` (`/ws/ask`), `page` (`/ws`) or `http` (`POST
    /api/respond`, which takes what a page sends)."""
    return asker_probes() if channel == "ask" else page_probes()


def page_probes() -> st.SearchStrategy[Probe]:
    """Inputs for `/ws` and `POST /api/respond`: random JSON, and answers and dismissals of a
    pending request broken once."""
    return st.one_of(_RANDOM, _broken([_answer, _dismiss, _ping], []))


def _tool_arguments() -> dict[str, Any]:
    question = {k: copy.deepcopy(v) for k, v in _QUESTION.items() if k != "detail"}
    return {"questions": [question, {"id": "free", "question": "And?"}]}


@st.composite
def _tool_probe(draw: st.DrawFn) -> Probe:
    # The tool drops a model's `detail`; it has no frame size (padding is an unknown key).
    probe = draw(_broken([_tool_arguments], ["options", "label", "id"]))
    if probe.too_large:
        return Probe(probe.label, probe.data)
    return probe


def tool_probes() -> st.SearchStrategy[Probe]:
    """Arguments for `ask_user_question`: random JSON, and valid arguments broken once (JSON
    text or bytes; the test also hands the tool the parsed document)."""
    return st.one_of(_RANDOM, _tool_probe())
