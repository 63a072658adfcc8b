"""The page in Korean, Simplified Chinese and Japanese, as a browser set to that language gets
it (`Accept-Language`): `<html lang>`, the inbox, a card, the history and the rules page in its
words, screenshots of each in test-results/web, and no text spilling out of its box."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.web.conftest import RESULTS, Asker, Host, Inbox, OpenInbox, answer_of


@dataclass(frozen=True)
class Language:
    locale: str
    """What the browser is set to: Playwright sends it as `Accept-Language`."""
    tag: str
    """What `<html lang>` says."""
    waiting: str
    submit: str
    skip: str
    count: str
    answered: str
    rules: str
    question: str
    options: tuple[str, str]


LANGUAGES = [
    Language(
        "ko-KR", "ko", "질문을 기다리는 중", "보내기", "건너뛰기", "대기 중인 요청 1개",
        "답변함", "규칙", "어느 데이터베이스를 쓸까요?", ("PostgreSQL (Recommended)", "SQLite"),
    ),
    Language(
        "zh-CN", "zh-Hans", "正在等待问题", "提交", "跳过", "1 个请求等待中",
        "已回答", "规则", "服务应该使用哪个数据库？", ("PostgreSQL (Recommended)", "SQLite"),
    ),
    Language(
        "ja-JP", "ja", "質問を待っています", "送信", "スキップ", "待機中のリクエスト 1 件",
        "回答済み", "ルール", "サービスはどのデータベースを使うべきですか？",
        ("PostgreSQL (Recommended)", "SQLite"),
    ),
]  # fmt: skip

OVERFLOWING = """(root) => {
  const spilled = [];
  for (const element of root.querySelectorAll("*")) {
    const style = getComputedStyle(element);
    const box = element.getBoundingClientRect();
    const cut = style.textOverflow === "ellipsis";  // shortened on purpose, the whole in a title
    if (style.display === "inline" || box.width <= 1 || cut || element.closest("pre, code")) {
      continue;
    }
    const text = [...element.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const wider = element.scrollWidth > element.clientWidth + 1;
    const outside = box.right > document.documentElement.clientWidth + 1;
    if (text && (wider || outside)) spilled.push(element.outerHTML.slice(0, 120));
  }
  return spilled;
}"""
"""Every element whose own text is wider than its box, or reaches past the page's right edge
(code blocks scroll, and text cut with an ellipsis is shortened on purpose)."""


def open_page(inbox: Inbox, host: Host, path: str) -> Page:
    """Another page of the host in the inbox's browser (the same language, its cookie)."""
    inbox.page.goto(f"{host.base}/{path}")
    return inbox.page


def overflowing(page: Page) -> list[str]:
    spilled: list[str] = page.evaluate(OVERFLOWING, page.locator("body").element_handle())
    return spilled


def shoot(page: Page, name: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=RESULTS / name, full_page=True, animations="disabled")


def question(language: Language) -> dict[str, Any]:
    return {
        "id": "db",
        "header": "DB",
        "question": language.question,
        "options": [{"label": label} for label in language.options],
    }


@pytest.mark.parametrize("language", LANGUAGES, ids=[language.tag for language in LANGUAGES])
@pytest.mark.parametrize(
    "viewport",
    [{"width": 1000, "height": 900}, {"width": 375, "height": 740}],
    ids=["desktop", "phone"],
)
def test_the_inbox_a_card_the_history_and_the_rules_speak_the_browsers_language(
    open_inbox: OpenInbox,
    asker: Asker,
    host: Host,
    session: str,
    language: Language,
    viewport: dict[str, int],
) -> None:
    width = viewport["width"]
    inbox = open_inbox(locale=language.locale, viewport=viewport)
    page = inbox.page
    expect(page.locator("html")).to_have_attribute("lang", language.tag)
    expect(page.get_by_role("heading", name=language.waiting)).to_be_visible()
    assert overflowing(page) == []
    shoot(page, f"inbox-{language.tag}-{width}.png")

    asked = asker.ask(session, [question(language)])
    card = inbox.card(session)
    expect(card.get_by_role("button", name=language.submit)).to_be_visible()
    expect(card.get_by_role("button", name=language.skip)).to_be_visible()
    expect(page.locator("#count")).to_have_text(language.count)
    assert overflowing(page) == []
    shoot(page, f"card-{language.tag}-{width}.png")
    card.get_by_role("radio", name="SQLite").check()
    card.get_by_role("button", name=language.submit).click()
    assert answer_of(asked) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}

    history = open_page(inbox, host, "history")
    expect(history.locator("html")).to_have_attribute("lang", language.tag)
    entry = history.locator(".entry", has_text=session)
    expect(entry.locator(".outcome")).to_have_text(language.answered)
    assert overflowing(history) == []
    shoot(history, f"history-{language.tag}-{width}.png")

    rules = open_page(inbox, host, "rules")
    expect(rules.get_by_role("heading", name=language.rules, exact=True)).to_be_visible()
    assert overflowing(rules) == []
    shoot(rules, f"rules-{language.tag}-{width}.png")


def test_a_browser_in_another_language_gets_the_english_page(open_inbox: OpenInbox) -> None:
    inbox = open_inbox(locale="fr-FR")
    expect(inbox.page.locator("html")).to_have_attribute("lang", "en")
    expect(inbox.page.get_by_role("heading", name="Waiting for questions")).to_be_visible()
