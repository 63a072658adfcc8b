"""What a notification says: a host event as a title and a plain-text body people can read.

A message names who asks (the session and where its asker runs), the header and the first question,
its options, the link that opens the inbox on the question and, when the request can be answered in
one tap, a signed answer link per option (`notify.links`). A settled notice says how the request
ended.

Everything a model wrote (questions, labels, sessions, origins) is made one line without control
characters and cut to a length, and the body is plain text: a service that renders markdown or
HTML is given text, so a question can never turn into a link or markup of its own.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from user_questions._languages import N_, format_number, ngettext, speaking
from user_questions._languages import gettext as _
from user_questions.frames import Origin
from user_questions.host.gate.public_url import PublicUrl
from user_questions.host.notify.events import EVENT_PENDING, EVENT_WAITING, HostEvent
from user_questions.host.notify.links import AnswerLinks, answerable_options
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem

__all__ = [
    "MAX_LISTED_OPTIONS",
    "MAX_TEXT_CHARS",
    "Message",
    "PersonLanguage",
    "asker_line",
    "hosts_language",
    "message_of",
    "one_line",
]

MAX_TEXT_CHARS = 300
"""Characters of a question, a label or a description in a message; longer is cut with `…`."""
MAX_LISTED_OPTIONS = 10
"""Options listed in a message; the rest are counted."""

PersonLanguage = Callable[[], str | None]
"""Reads a person's own language when a message is written (it may change while their notifier
runs); `None`: the host's."""


def hosts_language() -> str | None:
    """The language of the host's own notifiers (`--notify`): none of a person's."""
    return None


_ENDINGS = {
    Outcome.ANSWERED: N_("Answered"),
    Outcome.DISMISSED: N_("Dismissed"),
    Outcome.WITHDRAWN: N_("Withdrawn by its agent"),
    Outcome.TIMED_OUT: N_("Timed out"),
}
_SURFACES = {
    Surface.WEB: N_("in the web page"),
    Surface.TERMINAL: N_("in a terminal"),
    Surface.EDITOR: N_("in an editor"),
    Surface.LINK: N_("through an answer link"),
    Surface.API: N_("through the API"),
    Surface.PUSH: N_("from a push notification"),
}


@dataclass(frozen=True, slots=True)
class Message:
    """A notification: a one-line title and a plain-text body."""

    title: str
    body: str


def message_of(
    event: HostEvent,
    address: PublicUrl,
    links: AnswerLinks | None,
    channel: str,
    person: str | None = None,
    language: str | None = None,
) -> Message:
    """The message for `event`: a question waiting (with its links to `address`, and answer
    links signed by `links` for `channel` when it has any, answering as `person` when it is
    theirs), or how it ended; in `language` (`None`: the host's)."""
    with speaking(language):
        return _message(event, address, links, channel, person)


def _message(
    event: HostEvent,
    address: PublicUrl,
    links: AnswerLinks | None,
    channel: str,
    person: str | None,
) -> Message:
    questions = [AskUserQuestionItem.model_validate(question) for question in event.questions]
    first = questions[0]
    lines = [_question_line(first)]
    if event.type == EVENT_WAITING:
        count = event.waiting or 1
        lines[0] = _("The latest: {question}").format(question=lines[0])
        lines.append(_("From {asker}").format(asker=asker_line(event.session_id, event.origin)))
        lines.append(_("Open the inbox: {link}").format(link=address.link("")))
        waiting = ngettext(
            "{count} more question is waiting", "{count} more questions are waiting", count
        )
        return Message(waiting.format(count=format_number(count)), "\n".join(lines))
    if event.type == EVENT_PENDING:
        session = one_line(event.session_id, 60)
        lines += [f"  {index}. {text}" for index, text in enumerate(_options(first), 1)]
        lines += _more(questions)
        lines.append(_("From {asker}").format(asker=asker_line(event.session_id, event.origin)))
        lines += _answer_links(event.rpc_id, questions, address, links, channel, person)
        lines.append(_("Open it: {link}").format(link=address.question_link(event.rpc_id)))
        return Message(_("Question from {session}").format(session=session), "\n".join(lines))
    assert event.outcome is not None
    ending = _(_ENDINGS[event.outcome])
    lines += _more(questions)
    if event.outcome == Outcome.ANSWERED and event.answer is not None:
        lines.append(f"{ending}: {_answer_text(event.answer)}")
    else:
        lines.append(f"{ending}.")
    how = [_("by {name}").format(name=one_line(event.by, 60))] if event.by else []
    if event.via in _SURFACES:
        how.append(_(_SURFACES[event.via]))
    if event.channel:
        how.append(f"({event.channel})")
    if how:
        lines.append(" ".join(how).capitalize())
    lines.append(_("Asked by {asker}").format(asker=asker_line(event.session_id, event.origin)))
    return Message(f"{ending}: {one_line(first.question, 80)}", "\n".join(lines))


def asker_line(session_id: str, origin: Origin | None) -> str:
    """Who asks, on one line: `session (client · folder)`, either part of the origin optional."""
    session = one_line(session_id, 60)
    parts = [] if origin is None else [part for part in (origin.client, origin.cwd) if part]
    where = " · ".join(one_line(part, 120) for part in parts)
    return f"{session} ({where})" if where else session


def one_line(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Model-written `text` on one line, without control characters, cut to `limit`."""
    kept = "".join(" " if unicodedata.category(char)[0] == "C" else char for char in text)
    line = " ".join(kept.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _question_line(question: AskUserQuestionItem) -> str:
    text = one_line(question.question)
    return f"[{one_line(question.header, 60)}] {text}" if question.header else text


def _options(question: AskUserQuestionItem) -> list[str]:
    options = question.options or []
    listed = [
        one_line(option.label) + (f": {one_line(option.description)}" if option.description else "")
        for option in options[:MAX_LISTED_OPTIONS]
    ]
    if len(options) > MAX_LISTED_OPTIONS:
        more = len(options) - MAX_LISTED_OPTIONS
        listed.append(
            ngettext("(+{count} more option)", "(+{count} more options)", more).format(count=more)
        )
    return listed


def _more(questions: Sequence[AskUserQuestionItem]) -> list[str]:
    more = len(questions) - 1
    said = ngettext("(+{count} more question)", "(+{count} more questions)", more)
    return [said.format(count=more)] if more else []


def _answer_links(
    rpc_id: str,
    questions: Sequence[AskUserQuestionItem],
    address: PublicUrl,
    links: AnswerLinks | None,
    channel: str,
    person: str | None,
) -> list[str]:
    indexes = [] if links is None else answerable_options(questions)
    if links is None or not indexes:
        return []
    options = questions[0].options or []
    lines = ["", _("Answer in one tap:")]
    for index in indexes:
        signed = links.sign(links.grant(rpc_id, 0, index, channel, person))
        lines.append(f"  {one_line(options[index].label, 80)}: {address.link('a/' + signed)}")
    lines.append("")
    return lines


def _answer_text(answer: dict[str, object]) -> str:
    """The first question's answer: its labels and any typed text, a form filled in, a call
    changed, and the note beside it."""
    items = answer.get("answers")
    item = items[0] if isinstance(items, list) and items else {}
    if not isinstance(item, dict):
        return ""
    chosen = [str(label) for label in item.get("selected") or []]
    if item.get("custom"):
        chosen.append(f"“{item['custom']}”")
    if isinstance(item.get("value"), dict):
        chosen.append(_("the form filled in"))
    if isinstance(item.get("edited"), dict):
        chosen.append(_("with changes"))
    text = ", ".join(chosen) or _("(skipped)")
    if item.get("note"):
        text += " " + _("(note: {note})").format(note=f"“{item['note']}”")
    return one_line(text)
