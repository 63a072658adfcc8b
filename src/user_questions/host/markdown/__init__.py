"""Markdown from models to HTML that is safe to put in the page, rendered once, within a budget.

The parser (`_parser`, on markdown-it-py) is imported once a first detail is rendered. A question's
`detail` (a plan, above all) is written by a model, so it is untrusted: raw HTML is disabled
(`<script>` and `<img onerror>` come out as text), links may only point to `http`, `https` and
`mailto` addresses (`_parser.SAFE_LINK_SCHEMES`) and open in a new tab without the page as referrer,
and images are not rendered at all, so a plan can make the browser fetch nothing. The page's
Content-Security-Policy is the second line of defence.

Some texts take markdown-it seconds to parse (`"[" * 100_000`: unclosed link labels). So a
request's details are rendered once, when the host first stores it (`render_details`), in a
worker thread, within `RENDER_BUDGET` seconds for the whole request: every rule of the parser
checks the deadline, and a detail that is not done by then is shown as its plain text, escaped,
in a `<pre>`. The result is stored with the request (`StoredQuestion.rendered`): the pages,
`GET /api/pending` and `GET /api/history` carry it as `rendered`, each question's detail as HTML
by question id, and never render it again.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Iterable, Sequence

import anyio

from user_questions.types import AskUserQuestionItem

__all__ = [
    "RENDER_BUDGET",
    "plain_html",
    "render_details",
    "render_markdown",
    "rendered_details",
]

RENDER_BUDGET = 0.5
"""Seconds the details of one request may take to render (waiting for a worker included); a
detail not rendered by then is shown as plain text."""


def plain_html(text: str) -> str:
    """`text` as it is, escaped: what a detail that could not be rendered in time shows."""
    return f'<pre class="plain">{html.escape(text, quote=False)}</pre>\n'


def render_markdown(text: str, *, deadline: float = math.inf) -> str:
    """`text` as HTML with raw HTML disabled and links made safe; `plain_html(text)` when the
    `time.monotonic()` `deadline` passes first."""
    # markdown-it is loaded with the first detail rendered: a host that shows none never pays
    # for it, and a host's start does not wait for it.
    from user_questions.host.markdown._parser import render

    rendered = render(text, deadline)
    return plain_html(text) if rendered is None else rendered


def rendered_details(
    questions: Iterable[AskUserQuestionItem], *, deadline: float = math.inf
) -> dict[str, str]:
    """The safe HTML of each question's `detail`, by question id (questions without one are
    left out), each rendered unless `deadline` has passed."""
    return {
        q.id: render_markdown(q.detail, deadline=deadline)
        for q in questions
        if q.detail is not None
    }


async def render_details(
    questions: Sequence[AskUserQuestionItem], limiter: anyio.CapacityLimiter
) -> dict[str, str]:
    """`rendered_details(questions)` in a worker thread (one of `limiter`'s), within
    `RENDER_BUDGET`: the event loop never waits on markdown."""
    if all(question.detail is None for question in questions):
        return {}
    deadline = time.monotonic() + RENDER_BUDGET

    def render() -> dict[str, str]:
        return rendered_details(questions, deadline=deadline)

    return await anyio.to_thread.run_sync(render, limiter=limiter)
