"""Markdown from models becomes HTML that cannot run script or fetch anything."""

from __future__ import annotations

from user_questions.host.markdown import render_markdown


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
