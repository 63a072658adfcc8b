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

The confirmation's form carries the digest of the card it shows (docs/audit.md), and the answer
sends it back: when the card changed between the two, the answer is refused (`bad-response`) with
a page that says so. A POST without one (a page shown before digests existed) answers the card as
stored.
"""

from __future__ import annotations

from html import escape
from urllib.parse import parse_qs, quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

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
    if request.method == "GET":
        return _page("Send this answer?", _confirmation(record, option), 200)
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
    return _page("Answer sent", _sent(record, option), 200)


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
    return f"""<p class="from">From {escape(asker_line(record.session_id, record.origin))}</p>
{header}<h1>{escape(question.question)}</h1>
{detail}<p class="chosen-intro">Your answer:</p>
{_option_html(option)}
<form method="post">
  <input type="hidden" name="digest" value="{record.card}">
  <button type="submit" class="primary">Send this answer</button>
</form>
<p class="other">Another answer?
<a href="../q/{_path(record.rpc_id)}">Open it in the inbox</a></p>"""


def _sent(record: StoredQuestion, option: AskUserQuestionOption) -> str:
    question = record.questions[0]
    return f"""<h1>Answer sent</h1>
<p>{escape(question.question)}</p>
{_option_html(option)}
<p class="other">The agent has your answer. <a href="../">Open the inbox</a></p>"""


def _option_html(option: AskUserQuestionOption) -> str:
    description = (
        f'<span class="description">{escape(option.description)}</span>'
        if option.description
        else ""
    )
    return f'<p class="chosen"><strong>{escape(option.label)}</strong>{description}</p>'


def _changed() -> Response:
    body = """<h1>Not sent: the card changed since it was shown</h1>
<p>What you were asked to confirm is no longer what the host holds.</p>
<p class="other"><a href="../">Open the inbox</a> to see the question as it is now.</p>"""
    return _page("Card changed", body, 409)


def _refused() -> Response:
    body = """<h1>This link cannot be used</h1>
<p>It may have expired or been used already, or its question may have been answered elsewhere.</p>
<p class="other"><a href="../">Open the inbox</a> to see what is waiting.</p>"""
    return _page("Link not usable", body, REFUSED_STATUS)


def _page(title: str, main: str, status: int) -> Response:
    html = f"""<!doctype html>
<html lang="en">
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
    return HTMLResponse(html, status_code=status, headers=_HEADERS)


def _path(rpc_id: str) -> str:
    return escape(quote(rpc_id, safe=""))
