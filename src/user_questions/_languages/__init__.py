"""Every word the product shows a person, in that person's language: the catalogs (gettext,
compiled `.mo` files under `locales/`, read with the standard library alone) and how a surface
finds out which language its person reads (docs/translating.md)."""

from __future__ import annotations

from user_questions._languages.catalogs import (
    N_,
    current_language,
    format_number,
    gettext,
    messages_of,
    ngettext,
    speaking,
    translations,
)
from user_questions._languages.tags import (
    DEFAULT_LANGUAGE,
    LANGUAGES,
    from_accept_language,
    from_environment,
    html_tag,
    language_of_tag,
)

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "N_",
    "current_language",
    "format_number",
    "from_accept_language",
    "from_environment",
    "gettext",
    "html_tag",
    "language_of_tag",
    "messages_of",
    "ngettext",
    "speaking",
    "translations",
]
