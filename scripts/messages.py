"""Keep the catalogs: every word a person sees, in every language (docs/translating.md).

    python scripts/messages.py update    extract the message ids into locales/messages.pot and
                                         merge them into each language's messages.po
    python scripts/messages.py compile   write each messages.mo from its messages.po
    python scripts/messages.py check     fail when the .pot, a .po or a .mo is out of date or a
                                         message has no translation (what the tests also check)

Needs Babel (the `dev` extra); the installed package reads the committed `.mo` files with the
standard library alone. Message ids come from one source, the code that shows them:
- Python: `_("...")`, `gettext("...")`, `ngettext("...", "...", n)` of `user_questions._languages`,
  and `N_("...")` for a constant translated where it is shown;
- the pages' modules: `t("...")` and `tn("...", "...", n)` of `static/i18n.js`;
- the pages' HTML: `{{...}}` (`host/web/pages.py` fills them in when it serves a page).
"""

from __future__ import annotations

import copy
import io
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "user_questions"
LOCALES = PACKAGE / "locales"
STATIC = PACKAGE / "host" / "web" / "static"
TEMPLATE = LOCALES / "messages.pot"
LANGUAGES = ("ko", "zh_Hans", "ja")
"""The translated languages (English is the message ids themselves, with its own catalog for
its plural forms)."""
ALL_LANGUAGES = ("en", *LANGUAGES)
PYTHON_KEYWORDS = {"_": None, "N_": None, "gettext": None, "ngettext": (1, 2)}
JS_KEYWORDS = {"t": None, "tn": (1, 2)}
FIXED_DATE = datetime(2026, 1, 1, tzinfo=UTC)
"""The date every catalog file says, so that a file changes only when its messages do."""
HTML_MESSAGE = re.compile(r"\{\{(.+?)\}\}", re.DOTALL)

Message = tuple[str | tuple[str, str], str, int]
"""A message id (or its singular and plural), the file it is in, its line."""


def extracted() -> Iterator[Message]:
    """Every message id the code shows, where it is."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, message, _comments, _context in extract_from_file(
            "python", path, keywords=PYTHON_KEYWORDS, comment_tags=(), strip_comment_tags=True
        ):
            yield message, _relative(path), line
    for path in sorted(STATIC.glob("*.js")):
        for line, message, _comments, _context in extract_from_file(
            "javascript", path, keywords=JS_KEYWORDS, comment_tags=(), strip_comment_tags=True
        ):
            yield message, _relative(path), line
    for path in sorted(STATIC.glob("*.html")):
        text = path.read_text(encoding="utf-8")
        for mark in HTML_MESSAGE.finditer(text):
            yield mark.group(1), _relative(path), text.count("\n", 0, mark.start()) + 1


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def template() -> Catalog:
    """The `.pot`: every message id, sorted, with where it is used."""
    catalog = Catalog(project="user-questions", fuzzy=False)
    for message, path, line in extracted():
        catalog.add(message, locations=[(path, line)], flags=_flags(message))
    return catalog


def _flags(message: str | tuple[str, str]) -> tuple[str, ...]:
    text = message if isinstance(message, str) else message[0]
    return ("python-brace-format",) if re.search(r"\{\w+\}", text) else ()


def serialized(catalog: Catalog) -> bytes:
    """A catalog as its file, without what would change when nothing a translator reads did:
    the dates, and the line numbers of the places a message is used (its files are kept)."""
    out = io.BytesIO()
    catalog.creation_date = catalog.revision_date = FIXED_DATE
    write_po(out, catalog, width=100, sort_output=True, ignore_obsolete=True, include_lineno=False)
    return out.getvalue()


def merged(language: str, pot: Catalog) -> Catalog:
    """A language's `.po` brought up to the template: new ids added untranslated, gone ones
    dropped; English translates each id to itself."""
    path = po_path(language)
    if path.is_file():
        with path.open("rb") as file:
            catalog = read_po(file, locale=_babel_locale(language))
    else:
        catalog = Catalog(locale=_babel_locale(language), project="user-questions")
    catalog.update(copy.deepcopy(pot), no_fuzzy_matching=True)
    catalog.fuzzy = False
    if language == "en":
        for message in catalog:
            if message.id and not _translated(message.string):
                message.string = message.id
    return catalog


def _babel_locale(language: str) -> str:
    return "zh_Hans_CN" if language == "zh_Hans" else language


def _translated(string: str | tuple[str, ...]) -> bool:
    return all(string) if isinstance(string, tuple) else bool(string)


def po_path(language: str) -> Path:
    return LOCALES / language / "LC_MESSAGES" / "messages.po"


def mo_bytes(po: Path) -> bytes:
    with po.open("rb") as file:
        catalog = read_po(file)
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def update() -> None:
    pot = template()
    TEMPLATE.parent.mkdir(parents=True, exist_ok=True)
    TEMPLATE.write_bytes(serialized(pot))
    for language in ALL_LANGUAGES:
        path = po_path(language)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(serialized(merged(language, pot)))


def compile_all() -> None:
    for language in ALL_LANGUAGES:
        po = po_path(language)
        po.with_suffix(".mo").write_bytes(mo_bytes(po))


def problems() -> list[str]:
    """What `check` fails on, one sentence each."""
    found = []
    pot = template()
    if not TEMPLATE.is_file() or TEMPLATE.read_bytes() != serialized(pot):
        found.append(f"{_relative(TEMPLATE)} is out of date: run `scripts/messages.py update`")
    for language in ALL_LANGUAGES:
        po = po_path(language)
        if not po.is_file():
            found.append(f"{_relative(po)} is missing")
            continue
        with po.open("rb") as file:
            catalog = read_po(file)
        ids = {message.id for message in catalog if message.id}
        wanted = {message.id for message in pot if message.id}
        for missing in sorted(map(str, wanted - ids)):
            found.append(f"{_relative(po)} lacks {missing!r}")
        for message in catalog:
            if message.id and not _translated(message.string):
                found.append(f"{_relative(po)} does not translate {message.id!r}")
            if message.id and message.fuzzy:
                found.append(f"{_relative(po)} marks {message.id!r} fuzzy")
        mo = po.with_suffix(".mo")
        if not mo.is_file() or mo.read_bytes() != mo_bytes(po):
            found.append(
                f"{_relative(mo)} does not match its .po: run `scripts/messages.py compile`"
            )
    return found


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) == 2 else ""
    if command == "update":
        update()
    elif command == "compile":
        compile_all()
    elif command == "check":
        found = problems()
        for problem in found:
            print(problem, file=sys.stderr)
        return 1 if found else 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
