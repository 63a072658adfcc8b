"""Markdown from models to HTML that is safe to put in the page, rendered once, within a budget.

Level 8: imports markdown-it-py, anyio and `types`. A question's `detail` (a plan, above all) is
written by a model, so it is untrusted: raw HTML is disabled (`<script>` and `<img onerror>` come
out as text), links may only point to `http`, `https` and `mailto` addresses and open in a new
tab without the page as referrer, and images are not rendered at all, so a plan can make the
browser fetch nothing. The page's Content-Security-Policy is the second line of defence.

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
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import anyio
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.ruler import Ruler
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from user_questions.types import AskUserQuestionItem

__all__ = [
    "RENDER_BUDGET",
    "SAFE_LINK_SCHEMES",
    "plain_html",
    "render_details",
    "render_markdown",
    "rendered_details",
]

SAFE_LINK_SCHEMES = ("http:", "https:", "mailto:")
"""The only link targets kept; any other link is left as plain text."""
RENDER_BUDGET = 0.5
"""Seconds the details of one request may take to render (waiting for a worker included); a
detail not rendered by then is shown as plain text."""


class _OutOfTime(Exception):
    """Raised inside the parser once the render's deadline has passed."""


_deadline = threading.local()
"""`.at`: the `time.monotonic()` deadline of the render running in this thread."""


class _SafeMarkdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        return url.strip().lower().startswith(SAFE_LINK_SCHEMES)


def _link_open(
    renderer: RendererHTML,
    tokens: Sequence[Token],
    index: int,
    options: OptionsDict,
    env: EnvType,
) -> str:
    tokens[index].attrSet("target", "_blank")
    tokens[index].attrSet("rel", "noopener noreferrer nofollow")
    return renderer.renderToken(tokens, index, options, env)


def _on_time(rule: Callable[..., Any]) -> Callable[..., Any]:
    """`rule`, refusing to run once this thread's render is past its deadline."""

    def checked(*args: Any) -> Any:
        if time.monotonic() > getattr(_deadline, "at", math.inf):
            raise _OutOfTime
        return rule(*args)

    return checked


def _parser() -> MarkdownIt:
    parser = _SafeMarkdown("commonmark", {"html": False}).enable(["table", "strikethrough"])
    parser.disable("image")
    render_rule: Any = _link_open
    parser.add_render_rule("link_open", render_rule)
    rulers: list[Ruler[Any]] = [
        parser.core.ruler,
        parser.block.ruler,
        parser.inline.ruler,
        parser.inline.ruler2,
    ]
    for ruler in rulers:
        for rule in list(ruler.__rules__):
            ruler.at(rule.name, _on_time(rule.fn), {"alt": rule.alt})
    return parser


_PARSER = _parser()


def plain_html(text: str) -> str:
    """`text` as it is, escaped: what a detail that could not be rendered in time shows."""
    return f'<pre class="plain">{html.escape(text, quote=False)}</pre>\n'


def render_markdown(text: str, *, deadline: float = math.inf) -> str:
    """`text` as HTML with raw HTML disabled and links made safe; `plain_html(text)` when the
    `time.monotonic()` `deadline` passes first."""
    _deadline.at = deadline
    try:
        rendered: str = _PARSER.render(text)
    except _OutOfTime:
        return plain_html(text)
    finally:
        _deadline.at = math.inf
    return rendered


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
