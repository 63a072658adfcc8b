"""Markdown from models becomes HTML that cannot run script or fetch anything."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from user_questions.approvals import approval_question, fenced
from user_questions.host.markdown import (
    FENCED_MAX_CHARACTERS,
    fenced_html,
    render_details,
    render_markdown,
)
from user_questions.types import AskUserQuestionItem


def test_raw_html_comes_out_as_text() -> None:
    html = render_markdown("<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>")
    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_markdown_structure_is_rendered() -> None:
    html = render_markdown("# Plan\n\n1. **one**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n`code`")
    for fragment in ("<h1>Plan</h1>", "<strong>one</strong>", "<table>", "<code>code</code>"):
        assert fragment in html


def test_only_web_and_mail_links_are_kept_and_they_open_safely() -> None:
    html = render_markdown(
        "[web](https://example.com) [mail](mailto:a@example.com) "
        "[js](javascript:alert(1)) [JS](JaVaScRiPt:alert(1)) [data](data:text/html,x) [rel](x.md)"
    )
    assert html.count("<a ") == 2
    assert (
        '<a href="https://example.com" target="_blank" rel="noopener noreferrer nofollow">web</a>'
        in html
    )
    assert 'href="mailto:a@example.com"' in html
    assert "javascript:" not in html.replace("[js](javascript:alert(1))", "")


def test_images_are_never_fetched() -> None:
    html = render_markdown("![tracker](https://evil.example/pixel.png)")
    assert "<img" not in html


@given(
    st.text(alphabet=st.characters(blacklist_characters="\r\0"), max_size=200),
    st.sampled_from(["", "sh", "diff", "c++", "x_y-1"]),
)
def test_a_fenced_block_renders_on_the_loop_as_markdown_it_renders_it(
    text: str, language: str
) -> None:
    detail = fenced(text, language)
    assert fenced_html(detail) == render_markdown(detail)


@pytest.mark.parametrize(
    "detail",
    [
        "```sh\ngit status\n```\n\nand a paragraph",
        "```sh\nfirst\n```\n```sh\nsecond\n```",
        "```sh\nuntil a line of\n```\ncloses it\n```",
        "```sh\r\ngit status\r\n```",
        "```{.sh}\ngit status\n```",
        "[" * 256,
        "plain words",
        fenced("x" * FENCED_MAX_CHARACTERS, "sh"),
    ],
)
def test_any_other_detail_is_left_to_markdown_it(detail: str) -> None:
    assert fenced_html(detail) is None


@pytest.mark.anyio
async def test_an_approval_card_is_rendered_while_every_worker_is_busy() -> None:
    """A rule's decision never waits on markdown: the card's command needs no worker thread,
    while arbitrary markdown still goes to one."""
    card = approval_question("Bash", {"command": "rm -rf build && make <all>"}, agent="Claude")
    workers = anyio.CapacityLimiter(1)
    busy = object()
    await workers.acquire_on_behalf_of(busy)
    with anyio.fail_after(5):
        rendered = await render_details([card], workers)
    assert rendered == {card.id: render_markdown(card.detail or "")}
    plan = AskUserQuestionItem.model_validate(
        {"id": "plan", "question": "Go ahead?", "detail": "# Plan\n\n1. **build**"}
    )
    both: dict[str, str] = {}

    async def render_both() -> None:
        both.update(await render_details([card, plan], workers))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(render_both)
            await anyio.wait_all_tasks_blocked()
            assert workers.statistics().tasks_waiting == 1
            workers.release_on_behalf_of(busy)
    assert "<h1>Plan</h1>" in both["plan"]
