"""The compiled catalogs, read with the standard library's `gettext`, and the language a piece of
code speaks in now.

Every surface writes its words as English message ids through `gettext`/`ngettext` of this
module; which catalog answers is the language of the current context (`speaking`), so that a host
can render one card in Korean for one person and in Japanese for the next without passing a
translator down every call. Outside any `speaking` block the language is the process's own:
`UQ_LANG`, `LC_ALL`, `LC_MESSAGES`, `LANG` (a terminal's person)."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from user_questions._languages.tags import DEFAULT_LANGUAGE, LANGUAGES, from_environment

TYPE_CHECKING = False  # `typing.TYPE_CHECKING` without importing `typing` (mypy knows the name)
if TYPE_CHECKING:
    import gettext as _gettext

__all__ = [
    "LOCALES_DIR",
    "N_",
    "current_language",
    "format_number",
    "gettext",
    "messages_of",
    "ngettext",
    "speaking",
    "translations",
]

LOCALES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "locales")
"""`locales/<language>/LC_MESSAGES/messages.mo`: the compiled catalogs, shipped as package data."""
DOMAIN = "messages"

_speaking: ContextVar[str | None] = ContextVar("user_questions_language", default=None)


@functools.cache
def translations(language: str) -> _gettext.NullTranslations:
    """The compiled catalog of a held language; English (and a language without a compiled
    catalog in a broken install) speaks the message ids themselves.

    The standard library's `gettext` is imported here, not with the module (which spells
    `LOCALES_DIR` without `pathlib` too): `uq hook`'s quick path marks its words with `N_` and
    mostly shows none of them."""
    import gettext as _gettext

    if language not in LANGUAGES or language == DEFAULT_LANGUAGE:
        return _gettext.NullTranslations()
    return _gettext.translation(DOMAIN, LOCALES_DIR, languages=[language], fallback=True)


def current_language() -> str:
    """The language of this context: the innermost `speaking`, else the process's environment."""
    return _speaking.get() or from_environment(os.environ)


@contextmanager
def speaking(language: str | None) -> Iterator[None]:
    """Speak `language` inside the block (`None` keeps the surrounding one): a person's own
    language for their card, the browser's for its page."""
    if language is None:
        yield
        return
    reset = _speaking.set(language)
    try:
        yield
    finally:
        _speaking.reset(reset)


def N_(message: str) -> str:
    """`message` itself, marked for the catalog: a constant written here is translated where it
    is shown, with `gettext(CONSTANT)`."""
    return message


def gettext(message: str) -> str:
    """`message` in the current language."""
    return translations(current_language()).gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of `singular`/`plural` that `count` takes in the current language (the catalog's
    own plural rule: Korean, Chinese and Japanese have one form, English two)."""
    return translations(current_language()).ngettext(singular, plural, count)


def format_number(number: int) -> str:
    """A number as a message shows it: every held language groups thousands with a comma
    (`3,000`, as CLDR writes English, Korean, Chinese and Japanese), as the page's
    `formatNumber` does."""
    return f"{number:,}"


def messages_of(language: str) -> dict[str, str | list[str]]:
    """A language's catalog as the page reads it: a message id to its text, or for a message
    with plural forms (keyed by its singular id) the list of its forms in the catalog's order."""
    catalog: dict[str | tuple[str, int], str] = getattr(translations(language), "_catalog", {})
    plurals: dict[str, dict[int, str]] = {}
    messages: dict[str, str | list[str]] = {}
    for key, text in catalog.items():
        if isinstance(key, tuple):
            plurals.setdefault(key[0], {})[key[1]] = text
        elif key:
            messages[key] = text
    for singular, forms in plurals.items():
        messages[singular] = [forms[index] for index in sorted(forms)]
    return messages
