"""The page's presentation.js gives the same results as user_questions.presentation.

The page cannot import Python, so it carries a JavaScript mirror of the three shared functions.
These tests run both on the same generated inputs in the real browser, so the two cannot drift.
The static files are served from the installed package (which also proves they ship with it).
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator
from importlib.resources import files
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Browser, Page, Route

from user_questions.presentation import (
    AnswerDraft,
    answer_from_drafts,
    parse_recommended_label,
    plan_review_of,
)
from user_questions.types import AskUserQuestionItem

ORIGIN = "http://page.test"
STATIC = files("user_questions.host.web").joinpath("static")
MIRROR = settings(max_examples=60, deadline=None)


def test_the_page_ships_as_package_data() -> None:
    modules = ("app", "card", "dom", "drafts", "plan-card", "presentation", "protocol")
    names = ["index.html", "app.css", "questions-card.js", *(f"{m}.js" for m in modules)]
    assert [name for name in names if not STATIC.joinpath(name).is_file()] == []


@pytest.fixture(scope="module")
def mirror(browser: Browser) -> Iterator[Page]:
    """A page that can import the static modules, without a host."""
    context = browser.new_context()
    page = context.new_page()

    def serve(route: Route) -> None:
        name = route.request.url.removeprefix(f"{ORIGIN}/static/")
        if route.request.url == f"{ORIGIN}/":
            route.fulfill(body="<!doctype html><title>mirror</title>", content_type="text/html")
        elif STATIC.joinpath(name).is_file():
            kind = "text/javascript" if name.endswith(".js") else mimetypes.guess_type(name)[0]
            route.fulfill(body=STATIC.joinpath(name).read_bytes(), content_type=kind)
        else:
            route.fulfill(status=404)

    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/")
    yield page
    context.close()


def call(page: Page, function: str, *args: Any) -> Any:
    """Call an export of presentation.js with JSON arguments."""
    script = "async ([name, args]) => (await import('/static/presentation.js'))[name](...args)"
    return page.evaluate(script, [function, list(args)])


FRAGMENTS = [
    "pnpm",
    "使用",
    " ",
    "\u3000",
    "\x1c",
    "\x85",
    "\ufeff",
    "\t",
    "\n",
    "(",
    ")",
    "（",
    "）",
    "Recommended",
    "recommended",
    "RECOMMENDED",
    "推荐",
    "推奨",
    "추천",
    "권장",
    "(Recommended)",
    "(推荐)",
    "（推荐）",
    "(추천)",
    "（권장）",
    "(推奨)",
    "first",
]
labels = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=2), max_size=6).map("".join)


@MIRROR
@given(st.lists(labels, min_size=1, max_size=20))
# Python and JavaScript disagree on whitespace (U+001C, U+0085, U+FEFF): the mirror must not.
@example(["pnpm\x1c(Recommended)", "pnpm\x85(推荐)", "pnpm\ufeff(Recommended)", "\x1c(推荐)"])
@example(["pnpm 사용 (추천)", "pnpm 사용（권장）", "pnpm を使う (推奨)", "(추천) pnpm", "a(권장 )"])
def test_parse_recommended_label_matches_python(mirror: Page, batch: list[str]) -> None:
    got = [call(mirror, "parseRecommendedLabel", label) for label in batch]
    assert got == [list(parse_recommended_label(label)) for label in batch]


KOREAN_AND_JAPANESE_MARKS = ["(추천)", "（추천）", "(권장)", " ( 권장 ) ", "(推奨)", "（推奨）"]


@pytest.mark.parametrize("mark", KOREAN_AND_JAPANESE_MARKS)
def test_the_page_recognises_the_korean_and_japanese_recommended_marks(
    mirror: Page, mark: str
) -> None:
    assert call(mirror, "parseRecommendedLabel", f"pnpm 사용{mark}") == ["pnpm 사용", True]


LABELS = ["Approve", "Keep planning", "Later"]
options = st.lists(st.sampled_from(LABELS), max_size=3, unique=True).map(
    lambda chosen: [{"label": label} for label in chosen]
)


@st.composite
def questions(draw: st.DrawFn) -> dict[str, Any]:
    question: dict[str, Any] = {"id": draw(st.sampled_from(["a", "b", "c"])), "question": "Q?"}
    if draw(st.booleans()):
        question["options"] = draw(options)
    if draw(st.booleans()):
        question["detail"] = draw(st.sampled_from(["", "the plan"]))
    if draw(st.booleans()):
        question["multiSelect"] = draw(st.booleans())
    if draw(st.booleans()):
        question["intent"] = {"kind": "plan-review", "approve": draw(st.sampled_from(LABELS))}
    return question


batches = st.lists(questions(), min_size=1, max_size=2)


@MIRROR
@given(batches)
def test_plan_review_of_matches_python(mirror: Page, batch: list[dict[str, Any]]) -> None:
    items = [AskUserQuestionItem.model_validate(question) for question in batch]
    assert call(mirror, "planReviewOf", batch) == plan_review_of(items)


def test_an_unknown_intent_kind_is_no_plan_review(mirror: Page) -> None:
    question = {
        "id": "a",
        "question": "Q?",
        "detail": "plan",
        "options": [{"label": "Approve"}],
        "intent": {"kind": "vote", "approve": "Approve"},
    }
    assert call(mirror, "planReviewOf", [question]) is None


customs = st.lists(st.sampled_from(["", " ", "\u3000", "\x1c", "\ufeff", "note", "\n"]), max_size=3)


@st.composite
def drafted(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    drafts: dict[str, dict[str, Any]] = {}
    for index in range(draw(st.integers(1, 3))):
        question: dict[str, Any] = {"id": f"q{index}", "question": "Q?", "options": draw(options)}
        if draw(st.booleans()):
            question["multiSelect"] = draw(st.booleans())
        batch.append(question)
        if draw(st.booleans()):
            pool = [*LABELS, "not an option"]
            drafts[question["id"]] = {
                "selected": draw(st.lists(st.sampled_from(pool), max_size=4)),
                "custom": "".join(draw(customs)),
                "skipped": draw(st.booleans()),
            }
    return batch, drafts


EDGES = ([{"id": "a", "question": "Q?", "options": []}], {"a": {"selected": [], "skipped": False}})


@MIRROR
@given(drafted())
@example((EDGES[0], {"a": {**EDGES[1]["a"], "custom": "\x1c\x85"}}))
@example((EDGES[0], {"a": {**EDGES[1]["a"], "custom": "\ufeff"}}))
def test_answer_from_drafts_matches_python(
    mirror: Page, case: tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]
) -> None:
    batch, drafts = case
    items = [AskUserQuestionItem.model_validate(question) for question in batch]
    expected = answer_from_drafts(
        items, {key: AnswerDraft(**value) for key, value in drafts.items()}
    )
    assert call(mirror, "answerFromDrafts", batch, drafts) == expected.model_dump(mode="json")
