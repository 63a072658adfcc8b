"""The catalogs and how a surface picks its language (docs/translating.md): the pinned choices
of `Accept-Language` and the shell's variables, every message in every language with its
placeholders, the compiled `.mo` files matching their `.po`, and no visible English left outside
the catalog in the page and the terminal."""

from __future__ import annotations

import ast
import importlib.util
import re
import string
from pathlib import Path
from types import ModuleType

import pytest

from user_questions._languages import (
    LANGUAGES,
    from_accept_language,
    from_environment,
    gettext,
    html_tag,
    messages_of,
    ngettext,
    speaking,
)

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "src" / "user_questions" / "host" / "web" / "static"
PACKAGE = ROOT / "src" / "user_questions"
PROVIDERS = PACKAGE / "providers"


def _messages_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("messages", ROOT / "scripts" / "messages.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("ko-KR,ko;q=0.9", "ko"),
        ("zh-CN", "zh_Hans"),
        ("zh-Hans", "zh_Hans"),
        ("zh", "zh_Hans"),
        ("ja-JP", "ja"),
        ("en-US,en;q=0.9", "en"),
        ("fr-FR,fr;q=0.9", "en"),
        ("zh-TW", "en"),
        ("fr;q=1, ja;q=0.5, ko;q=0.8", "ko"),
        ("ko;q=0, ja", "ja"),
        ("", "en"),
        (None, "en"),
        ("ko;q=banana", "en"),
    ],
)
def test_the_page_language_follows_accept_language(header: str | None, language: str) -> None:
    assert from_accept_language(header) == language


def test_a_page_says_zh_hans_in_its_html_lang() -> None:
    assert [html_tag(language) for language in LANGUAGES] == ["en", "ko", "zh-Hans", "ja"]


@pytest.mark.parametrize(
    ("environment", "language"),
    [
        ({"LANG": "ko_KR.UTF-8"}, "ko"),
        ({"UQ_LANG": "ja", "LC_ALL": "ko_KR.UTF-8"}, "ja"),
        ({"LC_ALL": "zh_CN.UTF-8", "LANG": "ja_JP.UTF-8"}, "zh_Hans"),
        ({"LC_MESSAGES": "ja_JP", "LANG": "ko_KR.UTF-8"}, "ja"),
        ({"UQ_LANG": "", "LANG": "ko_KR.UTF-8"}, "ko"),
        ({"LC_ALL": "C", "LANG": "ko_KR.UTF-8"}, "en"),
        ({}, "en"),
    ],
)
def test_the_terminal_language_follows_the_first_variable_set(
    environment: dict[str, str], language: str
) -> None:
    assert from_environment(environment) == language


def test_speaking_a_language_translates_and_nests() -> None:
    with speaking("ko"):
        assert gettext("Skip") == "건너뛰기"
        with speaking("ja"):
            assert gettext("Skip") == "スキップ"
        assert ngettext("{count} request waiting", "{count} requests waiting", 5) == (
            "대기 중인 요청 {count}개"
        )
    with speaking("en"):
        assert gettext("Skip") == "Skip"
        assert ngettext("{count} request waiting", "{count} requests waiting", 1) == (
            "{count} request waiting"
        )


def test_every_message_has_every_language_and_the_mo_files_match() -> None:
    assert _messages_script().problems() == []


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _markup(text: str) -> list[str]:
    return sorted(re.findall(r"</?\w+>", text))


def test_translations_keep_the_placeholders_and_the_markup_of_their_id() -> None:
    english = messages_of("en") or {}
    pot = _messages_script().template()
    wrong = []
    for language in LANGUAGES[1:]:
        catalog = messages_of(language)
        for message in pot:
            if not message.id:
                continue
            source = message.id if isinstance(message.id, str) else message.id[0]
            texts = catalog[source]
            if isinstance(texts, str):
                if _fields(texts) != _fields(source) or _markup(texts) != _markup(source):
                    wrong.append(f"{language}: {source!r} -> {texts!r}")
                continue
            # A counted message's forms may name the count where the English singular does not.
            named = _fields(source) | _fields(message.id[1])
            for text in texts:
                if not _fields(source) <= _fields(text) <= named:
                    wrong.append(f"{language}: {source!r} -> {text!r}")
    assert wrong == []
    assert english == {} or "Skip" in english


# -- no visible English outside the catalog ------------------------------------------------------
#
# "Visible" means what a person reads or hears from a screen reader:
# - in the pages' HTML, every text node and every `aria-label`, `placeholder`, `title` or `alt`
#   value outside <script>, <style> and <title> (the product's name, `user-questions`, is a name);
# - in the pages' modules, a string literal given as an element's `text`, `title`, `placeholder`
#   or `aria-label`, as a `button(...)`'s label, to `setStatus(...)`/`showError(...)`, or assigned
#   to `textContent` (each literal of the assigned expression);
# - in the terminal's modules, a string constant holding two English words apart, except
#   docstrings, `__all__`, `__repr__`, prompt_toolkit and rich style names (`class:hint`, `bold
#   cyan`), and the messages of exceptions (errors are stable English for agents and logs, with
#   stable codes: docs/translating.md).
# A bare string child of an element (`h("p", {}, "words")`) is not caught by the scan: the
# modules write such text through `text:` or `t(...)`.
# Modules whose words are not translated yet are listed below; the test fails when one of them is
# translated, so that the list only shrinks.

NOT_YET_TRANSLATED: set[str] = set()
VISIBLE_JS = re.compile(
    r"""(?:\b(?:text|title|placeholder)|"aria-label")\s*:\s*(?P<a>"[^"]*"|`[^`]*`)"""
    r"""|\b(?:button|setStatus|showError)\(\s*(?P<b>"[^"]*"|`[^`]*`)"""
    r"""|\.textContent\s*=\s*(?P<c>[^;]*)"""
)
_LITERAL = re.compile(r'"[^"]*"|`[^`]*`')
_INTERPOLATION = re.compile(r"\$\{[^}]*\}")


def _english_in_js(source: str) -> list[str]:
    """The visible literals with a word in them (what `${...}` fills in is not the literal's)."""
    found = []
    for match in VISIBLE_JS.finditer(source):
        visible = next(group for group in match.groups() if group is not None)
        for literal in _LITERAL.findall(re.sub(r"\bt(?:n)?\((?:[^()]|\([^()]*\))*\)", "", visible)):
            if re.search("[A-Za-z]{2,}", _INTERPOLATION.sub("", literal)):
                found.append(literal)
    return found


_HTML_HIDDEN = re.compile(r"<(script|style|title)\b.*?</\1>", re.DOTALL)
_HTML_MESSAGE = re.compile(r"\{\{.+?\}\}", re.DOTALL)
_HTML_ATTRIBUTE = re.compile(r'\b(?:aria-label|placeholder|title|alt)="([^"]*)"')
PRODUCT = "user-questions"


def _english_in_html(source: str) -> list[str]:
    text = _HTML_MESSAGE.sub("", _HTML_HIDDEN.sub("", source))
    found = [value for value in _HTML_ATTRIBUTE.findall(text) if re.search("[A-Za-z]", value)]
    for node in re.findall(r">([^<>]+)<", text):
        if re.search("[A-Za-z]", node) and node.strip() != PRODUCT:
            found.append(node.strip())
    return found


@pytest.mark.parametrize("page", sorted(path.name for path in STATIC.glob("*.html")))
def test_a_page_shows_no_english_outside_the_catalog(page: str) -> None:
    assert _english_in_html((STATIC / page).read_text(encoding="utf-8")) == []


def test_the_html_scan_finds_english_left_outside_the_catalog() -> None:
    assert _english_in_html('<p title="Hello">{{Inbox}} <b>Skip</b></p>') == ["Hello", "Skip"]


@pytest.mark.parametrize("module", sorted(path.name for path in STATIC.glob("*.js")))
def test_a_module_shows_no_english_outside_the_catalog(module: str) -> None:
    found = _english_in_js((STATIC / module).read_text(encoding="utf-8"))
    if module in NOT_YET_TRANSLATED:
        assert found, f"{module} is translated now: take it off NOT_YET_TRANSLATED"
    else:
        assert found == []


def test_every_message_the_modules_ask_for_is_in_the_catalog() -> None:
    """A `t("...")` hidden from the extractor (inside a template literal, say) would stay
    English in every language."""
    pot = _messages_script().template()
    ids = {message.id if isinstance(message.id, str) else message.id[0] for message in pot}
    asked = {
        match.group(1)
        for path in STATIC.glob("*.js")
        for match in re.finditer(r'\btn?\("((?:[^"\\]|\\.)*)"', path.read_text(encoding="utf-8"))
    }
    assert asked - ids == set()


def test_the_js_scan_finds_english_left_outside_the_catalog() -> None:
    source = (
        'h("p", { text: "Hello" }); button(t("Keep"), "quiet"); x.textContent = `Hi ${name}`;'
        ' h("span", { text: `+${more}` }); y.textContent = n ? `asked ${n}` : t("Never");'
    )
    assert _english_in_js(source) == ['"Hello"', "`Hi ${name}`", "`asked ${n}`"]


TRANSLATING = {"_", "gettext", "ngettext", "N_"}
"""The calls whose strings are message ids (`user_questions._languages`)."""
STYLE_WORDS = {"ansicyan", "ansigreen", "bold", "reverse", "cyan", "dim", "green"}


def _english_in_python(source: str) -> list[str]:
    return [text for text in _shown_in_python(source) if _two_words(text)]


def _two_words(text: str) -> bool:
    words = re.findall(r"[A-Za-z]{2,}", text)
    styled = text.startswith("class:") or set(words) <= STYLE_WORDS
    return re.search(r"[A-Za-z]{2,}\s+[A-Za-z]{2,}", text) is not None and not styled


def _shown_in_python(source: str) -> list[str]:
    """The string constants of a module that are neither message ids nor docstrings, nor
    `__all__`, `__repr__` or the messages of exceptions."""
    tree = ast.parse(source)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skipped.add(id(node.value))  # docstrings, and the strings that document a name
        elif (
            (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in TRANSLATING
            )
            or (isinstance(node, ast.FunctionDef) and node.name == "__repr__")
            or (
                isinstance(node, ast.Raise | ast.Assign)
                and (
                    isinstance(node, ast.Raise)
                    or any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                )
            )
        ):
            skipped.update(id(each) for each in ast.walk(node))
    shown = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) not in skipped:
            # An f-string is one text, `{}` where it fills something in.
            parts = [part.value if isinstance(part, ast.Constant) else "{}" for part in node.values]
            shown.append("".join(str(part) for part in parts))
            skipped.update(id(part) for part in node.values)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skipped
        ):
            shown.append(node.value)
    return shown


@pytest.mark.parametrize(
    "module", sorted(path.name for path in PROVIDERS.glob("*.py") if "terminal" in path.name)
)
def test_the_terminal_shows_no_english_outside_the_catalog(module: str) -> None:
    found = _english_in_python((PROVIDERS / module).read_text(encoding="utf-8"))
    assert [text for text in found if text not in TERMINAL_NOT_SHOWN] == []


TERMINAL_NOT_SHOWN = {
    "pip install 'user-questions[terminal]'",  # a command line, the same in every language
}


CLI_TRANSLATED = ("cli/_pending.py", "cli/_answer.py")
"""The commands whose lines a person reads follow the terminal's language."""
CLI_ENGLISH = {
    "uq pending: cannot read request {}: {}",  # an error: stable English, as every error
    "{}; answer it on the host's page",
    "not recorded: {}",
    "the host refused the answer: {}",
    "uq answer: {}",  # the command's name before each line
    "dismissed at a terminal",  # the dismissal's message to the agent, not to a person
    "The host's token, or a named token. Default: the URL's, else $UQ_TOKEN.",  # --help
}


@pytest.mark.parametrize("module", CLI_TRANSLATED)
def test_the_commands_show_no_english_outside_the_catalog(module: str) -> None:
    found = _english_in_python((PACKAGE / module).read_text(encoding="utf-8"))
    assert [text for text in found if text not in CLI_ENGLISH] == []


HTML_IN_PYTHON = ("host/notify/link_pages.py",)
"""Modules that write a page's HTML themselves: the text between their tags is what a person
reads."""


@pytest.mark.parametrize("module", HTML_IN_PYTHON)
def test_the_pages_written_in_python_show_no_english_outside_the_catalog(module: str) -> None:
    source = (PACKAGE / module).read_text(encoding="utf-8")
    assert [found for text in _shown_in_python(source) for found in _english_in_html(text)] == []


def test_the_scan_of_html_in_python_finds_english_left_outside_the_catalog() -> None:
    source = "def f(x):\n    return f'<h1>{gettext(\"Sent\")}</h1><p>Sent {x}</p><b>{x}</b>'\n"
    shown = _shown_in_python(source)
    assert [found for text in shown for found in _english_in_html(text)] == ["Sent {}"]


def test_the_python_scan_finds_english_left_outside_the_catalog() -> None:
    source = 'def f():\n    """Doc string here."""\n    return _("Keep this") + "Not this one"\n'
    assert _english_in_python(source) == ["Not this one"]
