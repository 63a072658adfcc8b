"""Which of the catalogs' languages a person reads, from what their browser or their shell says.

A language is named by its catalog's code (`en`, `ko`, `zh_Hans`, `ja`: gettext's spelling, the
name of its folder under `locales/`) and shown to a browser as a BCP 47 tag (`zh-Hans`). A tag the
catalogs do not hold falls back to English, the language every message id is written in."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "from_accept_language",
    "from_environment",
    "html_tag",
    "language_of_tag",
]

LANGUAGES: tuple[str, ...] = ("en", "ko", "zh_Hans", "ja")
"""The languages the catalogs hold, by their catalog codes."""
DEFAULT_LANGUAGE = "en"
"""The language of the message ids themselves, and of anyone whose language is not held."""
ENVIRONMENT_VARIABLES: tuple[str, ...] = ("UQ_LANG", "LC_ALL", "LC_MESSAGES", "LANG")
"""Where the terminal looks, first set first: this project's own, then POSIX's order."""

_ZH_HANT = frozenset({"hant", "tw", "hk", "mo"})


def language_of_tag(tag: str) -> str | None:
    """The held language a BCP 47 tag or a POSIX locale (`ko-KR`, `zh_CN.UTF-8`, `ja`, `zh_Hans`)
    names, or `None` for one the catalogs do not hold (Traditional Chinese among them)."""
    bare = tag.split(".", 1)[0].split("@", 1)[0].strip().replace("_", "-").lower()
    primary, *rest = bare.split("-") if bare else [""]
    if primary == "zh":
        return None if _ZH_HANT & set(rest) else "zh_Hans"
    if primary in ("en", "ko", "ja"):
        return primary
    return None


def from_accept_language(header: str | None) -> str:
    """The held language a browser prefers most (`Accept-Language`, weights honoured, ties in
    the header's order); English when it names none."""
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate((header or "").split(",")):
        tag, _, params = part.strip().partition(";")
        weight = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        language = language_of_tag(tag)
        if language is not None and weight > 0:
            ranked.append((-weight, index, language))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE


def from_environment(environ: Mapping[str, str]) -> str:
    """The terminal's language: the first of `UQ_LANG`, `LC_ALL`, `LC_MESSAGES`, `LANG` that is
    set and not empty decides (as POSIX's order does); English when it names no held language
    (`C`, `POSIX`) or none is set."""
    for name in ENVIRONMENT_VARIABLES:
        value = environ.get(name, "")
        if value:
            return language_of_tag(value) or DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


def html_tag(language: str) -> str:
    """The BCP 47 tag a page's `<html lang>` says for a held language (`zh_Hans` is `zh-Hans`)."""
    return language.replace("_", "-")
