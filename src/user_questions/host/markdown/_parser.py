"""The markdown-it parser that `host/markdown` renders details with, loaded on first use.

Kept apart so that a host loads markdown-it (and builds the parser) only when a first detail is
rendered, not at every start. Raw HTML is disabled, links may only point to `SAFE_LINK_SCHEMES`
addresses and open in a new tab without the page as referrer, images are not rendered, and every
rule of the parser checks the render's deadline.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.ruler import Ruler
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

__all__ = ["SAFE_LINK_SCHEMES", "render"]

SAFE_LINK_SCHEMES = ("http:", "https:", "mailto:")
"""The only link targets kept; any other link is left as plain text."""


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


def render(text: str, deadline: float) -> str | None:
    """`text` as safe HTML, or `None` when the `time.monotonic()` `deadline` passed first."""
    _deadline.at = deadline
    try:
        rendered: str = _PARSER.render(text)
    except _OutOfTime:
        return None
    finally:
        _deadline.at = math.inf
    return rendered
