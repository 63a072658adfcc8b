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
import re
import time
from collections.abc import Iterable, Sequence

import anyio

from user_questions.types import AskUserQuestionItem

__all__ = [
    "FENCED_MAX_CHARACTERS",
    "RENDER_BUDGET",
    "fenced_html",
    "plain_html",
    "render_details",
    "render_markdown",
    "rendered_details",
]

RENDER_BUDGET = 0.5
"""Seconds the details of one request may take to render (waiting for a worker included); a
detail not rendered by then is shown as plain text."""

FENCED_MAX_CHARACTERS = 32_768
"""The longest detail `fenced_html` renders on the event loop (an approval card shows at most
20,000 characters of a call); a longer one goes to the worker thread like any markdown."""

_FENCED = re.compile(r"(`{3,})([A-Za-z0-9_+-]*)\n(.*)\n\1", re.DOTALL)
"""A detail that is one fenced code block and nothing else, as `approvals.fenced` writes it (an
approval card's command): its fence, its language and its text."""
_BACKTICKS = re.compile(r"`+")
_CODE_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


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


def fenced_html(text: str) -> str | None:
    """The HTML markdown-it makes of `text` when `text` is a single fenced code block of at most
    `FENCED_MAX_CHARACTERS`, with no backtick run inside as long as its fence (so no line of it
    can close the block), no carriage return and no NUL; else `None`. Such a detail (every
    approval card's command) costs microseconds, so it is rendered without a worker thread."""
    if len(text) > FENCED_MAX_CHARACTERS or "\r" in text or "\0" in text:
        return None
    block = _FENCED.fullmatch(text)
    if block is None:
        return None
    fence, language, code = block.groups()
    if any(len(run) >= len(fence) for run in _BACKTICKS.findall(code)):
        return None
    attribute = f' class="language-{language}"' if language else ""
    return f"<pre><code{attribute}>{code.translate(_CODE_ESCAPES)}\n</code></pre>\n"


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
    `RENDER_BUDGET`: the event loop never waits on markdown. Details that are all single
    fenced blocks (an approval card's) are rendered on the loop by `fenced_html`: the hop to a
    thread and back would cost more than they do."""
    fast = {q.id: fenced_html(q.detail) for q in questions if q.detail is not None}
    if all(rendered is not None for rendered in fast.values()):
        return {id: rendered for id, rendered in fast.items() if rendered is not None}
    deadline = time.monotonic() + RENDER_BUDGET

    def render() -> dict[str, str]:
        return rendered_details(questions, deadline=deadline)

    return await anyio.to_thread.run_sync(render, limiter=limiter)
