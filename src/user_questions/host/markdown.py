"""Markdown from models to HTML that is safe to put in the page.

Level 8: imports markdown-it-py and `types`. A question's `detail` (a plan, above all) is written
by a model, so it is untrusted: raw HTML is disabled (`<script>` and `<img onerror>` come out as
text), links may only point to `http`, `https` and `mailto` addresses and open in a new tab
without the page as referrer, and images are not rendered at all, so a plan can make the browser
fetch nothing. The page's Content-Security-Policy is the second line of defence.

`rendered_details(questions)` is what the page, `GET /api/pending` and `GET /api/history` carry
as `rendered`: each question's detail as HTML, by question id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from user_questions.types import AskUserQuestionItem

__all__ = ["SAFE_LINK_SCHEMES", "render_markdown", "rendered_details"]

SAFE_LINK_SCHEMES = ("http:", "https:", "mailto:")
"""The only link targets kept; any other link is left as plain text."""


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


def _parser() -> MarkdownIt:
    parser = _SafeMarkdown("commonmark", {"html": False}).enable(["table", "strikethrough"])
    parser.disable("image")
    render_rule: Any = _link_open
    parser.add_render_rule("link_open", render_rule)
    return parser


_PARSER = _parser()


def render_markdown(text: str) -> str:
    """`text` as HTML with raw HTML disabled and links made safe."""
    html: str = _PARSER.render(text)
    return html


def rendered_details(questions: Iterable[AskUserQuestionItem]) -> dict[str, str]:
    """The safe HTML of each question's `detail`, by question id (questions without one are
    left out)."""
    return {q.id: render_markdown(q.detail) for q in questions if q.detail is not None}
