"""The pages behind answer links: look at the answer a link gives, then send it.

`GET /a/<link>` only shows the request's question (its detail as the HTML rendered when the request
was stored) and the option the link chooses, with a "Send this answer" button: link previewers, mail
scanners and prefetchers open links, and they must never answer. `POST /a/<link>` (the button, a
form on that page) answers as the page would, through `Hub.respond` and its checks, recorded as
settled `via` `link` through the link's channel. Both need no token, since the signed link is the
permission (`notify.links`); the POST passes the origin check like every other. So that the browser
sends the page's origin with its form (under `no-referrer` it sends `Origin: null`), the page
relaxes the host's referrer policy to `same-origin`: the link, which is in its address, still never
leaves the host in a `Referer`.

Every refusal is the same page with the same status: a link that is altered, forged, expired,
already used, or whose request is settled or unknown, or a host started with
`--answer-links off`. It says nothing about which, so a guessed or stolen link teaches nothing.
The link's signature is checked before anything is read from the store. The pages are
server-rendered HTML without script, under the host's Content-Security-Policy.

The pages speak the language of the link's person when the link names one who has one (their
token's `lang`), else the browser's (`Accept-Language`), as the inbox does (docs/translating.md).

The confirmation's form carries the digest of the card it shows (docs/audit.md), and the answer
sends it back: when the card changed between the two, the answer is refused (`bad-response`) with
a page that says so. A POST without one (a page shown before digests existed) answers the card as
stored.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from urllib.parse import parse_qs, quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from user_questions._languages import (
    current_language,
    from_accept_language,
    gettext,
    html_tag,
    speaking,
)
from user_questions.host.gate.roles import may_answer, viewer
from user_questions.host.gate.roles import sees as seen
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import Hub
from user_questions.host.notify.links import AnswerLinks, Grant, answerable_options
from user_questions.host.notify.message import asker_line
from user_questions.host.notify.taps import one_tap_answer
from user_questions.host.stores import QuestionStore, StoredQuestion
from user_questions.outcomes import Surface
from user_questions.types import AskUserQuestionOption

__all__ = ["REFUSED_STATUS", "answer_link"]

REFUSED_STATUS = 410
"""The status of every refusal: the link cannot be used (any more)."""
_HEADERS = {"cache-control": "no-store", "x-robots-tag": "noindex, nofollow"}


async def answer_link(request: Request) -> Response:
    """`GET /a/<link>`: the answer the link gives, to confirm; `POST`: send it."""
    language = from_accept_language(request.headers.get("accept-language"))
    with speaking(language):
        return await _answer_link(request, language)


async def _answer_link(request: Request, language: str) -> Response:
    links: AnswerLinks | None = request.app.state.answer_links
    grant = None if links is None else links.verify(request.path_params["link"])
    if grant is None:
        return _refused()
    store: QuestionStore = request.app.state.store
    record = await store.get(grant.rpc_id)
    option = None if record is None else _option(record, grant)
    if record is None or option is None:
        return _refused()
    sees = None
    if grant.person is not None:
        # A person's link answers as them only while their token may answer this request.
        tokens: Tokens = request.app.state.tokens
        identity = tokens.named(grant.person)
        if identity is None or not may_answer(identity) or not seen(identity, record):
            return _refused()
        sees = viewer(identity)
        if identity.lang is not None:
            language = identity.lang
    with speaking(language):
        return await _confirm_or_send(request, grant, record, option, sees)


async def _confirm_or_send(
    request: Request,
    grant: Grant,
    record: StoredQuestion,
    option: AskUserQuestionOption,
    sees: Callable[[StoredQuestion], bool] | None,
) -> Response:
    """The confirmation page (`GET`) or the answer sent and its page (`POST`), in the language
    being spoken."""
    if request.method == "GET":
        return _page(gettext("Send this answer?"), _confirmation(record, option), 200)
    hub: Hub = request.app.state.hub
    receipt = await hub.respond(
        one_tap_answer(record, grant.option, _shown_digest(await request.body())),
        via=Surface.LINK,
        by=grant.person,
        channel=grant.channel,
        sees=sees,
    )
    if receipt.reason == "bad-response":
        return _changed()
    if not receipt.accepted:
        return _refused()
    return _page(gettext("Answer sent"), _sent(record, option), 200)


def _option(record: StoredQuestion, grant: Grant) -> AskUserQuestionOption | None:
    """The option the grant chooses, while its request is pending and still answerable so."""
    if not record.pending or grant.question != 0:
        return None
    if grant.option not in answerable_options(record.questions):
        return None
    options = record.questions[0].options or []
    return options[grant.option]


def _shown_digest(body: bytes) -> str | None:
    """The card digest the confirmation's form sent back (its last `digest` field), if any."""
    values = parse_qs(body.decode("ascii", "replace")).get("digest")
    return values[-1] if values else None


def _confirmation(record: StoredQuestion, option: AskUserQuestionOption) -> str:
    question = record.questions[0]
    header = f'<p class="header">{escape(question.header)}</p>' if question.header else ""
    rendered = record.rendered.get(question.id)  # rendered once, when the request was stored
    detail = f'<div class="detail">{rendered}</div>' if rendered else ""
    asker = gettext("From {asker}").format(
        asker=escape(asker_line(record.session_id, record.origin))
    )
    intro = gettext("Your answer:")
    send = gettext("Send this answer")
    other = gettext("Another answer?")
    open_it = gettext("Open it in the inbox")
    return f"""<p class="from">{asker}</p>
{header}<h1>{escape(question.question)}</h1>
{detail}<p class="chosen-intro">{intro}</p>
{_option_html(option)}
<form method="post">
  <input type="hidden" name="digest" value="{record.card}">
  <button type="submit" class="primary">{send}</button>
</form>
<p class="other">{other}
<a href="../q/{_path(record.rpc_id)}">{open_it}</a></p>"""


def _sent(record: StoredQuestion, option: AskUserQuestionOption) -> str:
    question = record.questions[0]
    sent = gettext("Answer sent")
    received = gettext("The agent has your answer.")
    inbox = gettext("Open the inbox")
    return f"""<h1>{sent}</h1>
<p>{escape(question.question)}</p>
{_option_html(option)}
<p class="other">{received} <a href="../">{inbox}</a></p>"""


def _option_html(option: AskUserQuestionOption) -> str:
    description = (
        f'<span class="description">{escape(option.description)}</span>'
        if option.description
        else ""
    )
    return f'<p class="chosen"><strong>{escape(option.label)}</strong>{description}</p>'


def _changed() -> Response:
    return _apology(
        gettext("Card changed"),
        gettext("Not sent: the card changed since it was shown"),
        gettext("What you were asked to confirm is no longer what the host holds."),
        gettext("<a>Open the inbox</a> to see the question as it is now."),
        409,
    )


def _refused() -> Response:
    return _apology(
        gettext("Link not usable"),
        gettext("This link cannot be used"),
        gettext(
            "It may have expired or been used already, "
            "or its question may have been answered elsewhere."
        ),
        gettext("<a>Open the inbox</a> to see what is waiting."),
        REFUSED_STATUS,
    )


def _apology(title: str, heading: str, explanation: str, onward: str, status: int) -> Response:
    """A page that sent nothing: what happened, and a way on to the inbox, whose link is the
    `<a>…</a>` of the translated `onward` sentence (each language orders its words)."""
    link = onward.replace("<a>", '<a href="../">', 1)
    body = f"""<h1>{heading}</h1>
<p>{explanation}</p>
<p class="other">{link}</p>"""
    return _page(title, body, status)


def _page(title: str, main: str, status: int) -> Response:
    language = html_tag(current_language())
    html = f"""<!doctype html>
<html lang="{language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="same-origin">
<meta name="robots" content="noindex, nofollow">
<title>{escape(title)} · user-questions</title>
<link rel="stylesheet" href="../static/app.css">
<link rel="stylesheet" href="../static/answer.css">
</head>
<body>
<main class="answer">
{main}
</main>
</body>
</html>
"""
    headers = {**_HEADERS, "content-language": language, "vary": "Accept-Language"}
    return HTMLResponse(html, status_code=status, headers=headers)


def _path(rpc_id: str) -> str:
    return escape(quote(rpc_id, safe=""))
