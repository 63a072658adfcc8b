"""`NtfyNotifier`: questions to ntfy with buttons that answer them, replaced once they settle.

A `--notify` URL of ntfy (`ntfy://topic`, `ntfy://host:port/topic` for plain http, `ntfys://host/
topic`, with a user and password or `?auth=token`) is read by apprise exactly as apprise reads it
(so the URL means what its documentation says), but sent here, to ntfy's HTTP API: apprise's ntfy
service takes its action buttons from the URL (the same buttons on every message) and cannot
replace a message, and each question needs buttons of its own and its message replaced when it
settles. Each message is POSTed to `<server>/<topic>` in ntfy's documented publishing form: the
body is the message, and its parameters are ntfy's `X-` headers (text outside ASCII in RFC 2047's
encoded words, which ntfy reads):

- `X-Title` and the body: the text of `message.message_of`, as every service gets it;
- `X-Click`: the question's link (`/q/<rpcId>`);
- `X-Actions`: for a request one tap can answer (`taps.one_tap_options`: an approval's allow and
  deny, a plan review's approve, or a single-select question's options), up to three `http`
  actions (`NTFY_MAX_ACTIONS`, ntfy's limit) as ntfy's JSON array, each labelled with its option
  (at most `NTFY_LABEL_CHARS`, else the message has no buttons) and `POST`ing to the option's
  answer link, which answers once, as the link page's button does (`link_pages.py`), and clears
  the notification. The message then lists no answer links in its text;
- `X-Sequence-ID`: one per request (`uq-` and its push topic): when the request settles, the
  host publishes how it ended under the same sequence id, which replaces the question's
  notification on the phone (a server that predates sequence ids shows it as a message of its
  own);
- `X-Priority` and `X-Tags`, when the URL sets them.

Deliveries are retried with backoff (`posting.Poster`). A log line names the server only: the
topic, like the credentials, is a secret.
"""

from __future__ import annotations

import base64
import contextlib
import email.header
import json
import logging
from typing import Any

from user_questions.host.gate.public_url import PublicUrl
from user_questions.host.notify.apprise import AppriseNotifier, check_apprise_url
from user_questions.host.notify.events import EVENT_PENDING, EVENT_WAITING, HostEvent
from user_questions.host.notify.links import AnswerLinks, check_channel
from user_questions.host.notify.message import PersonLanguage, hosts_language, message_of
from user_questions.host.notify.notifier import QUEUE_CAPACITY, Notifier
from user_questions.host.notify.posting import Poster
from user_questions.host.notify.push_message import topic_of
from user_questions.host.notify.taps import one_tap_options

__all__ = [
    "NTFY_CONCURRENCY",
    "NTFY_LABEL_CHARS",
    "NTFY_MAX_ACTIONS",
    "NTFY_SCHEMES",
    "NTFY_TIMEOUT",
    "NTFY_TRIES",
    "NtfyNotifier",
    "service_notifier",
]

NTFY_SCHEMES = frozenset({"ntfy", "ntfys"})
"""The `--notify` URL schemes sent by `NtfyNotifier`."""
NTFY_MAX_ACTIONS = 3
"""ntfy shows at most three buttons; a question with more options gets none."""
NTFY_LABEL_CHARS = 40
"""The longest option label put on a button; a question with a longer one gets none."""
NTFY_TRIES = 4
NTFY_TIMEOUT = 15.0
NTFY_CONCURRENCY = 4
logger = logging.getLogger("user_questions.host.notify")

_PRIORITIES = {"min": 1, "low": 2, "default": 3, "high": 4, "max": 5}


def service_notifier(
    url: str,
    *,
    address: PublicUrl,
    links: AnswerLinks | None,
    settled: bool = False,
    person: str | None = None,
    language: PersonLanguage = hosts_language,
) -> Notifier:
    """The notifier of a `--notify` URL: `NtfyNotifier` for ntfy (which replaces each
    question's message once it settles, whatever `settled` says), `AppriseNotifier` else; a
    `person`'s in their `language`.

    Raises:
        UserQuestionError: `BAD_NOTIFIER`, as `apprise.check_apprise_url`.
    """
    if url.partition("://")[0].lower() in NTFY_SCHEMES:
        return NtfyNotifier(url, address=address, links=links, person=person, language=language)
    return AppriseNotifier(
        url, address=address, links=links, settled=settled, person=person, language=language
    )


class NtfyNotifier(Notifier):
    """Publishes each question (with buttons where one tap answers it) to the topics of the
    ntfy URL `url`, and replaces it once it settles; see the module docstring.

    Raises:
        UserQuestionError: `BAD_NOTIFIER`, as `apprise.check_apprise_url`.
    """

    for_people = True

    def __init__(
        self,
        url: str,
        *,
        address: PublicUrl,
        links: AnswerLinks | None = None,
        person: str | None = None,
        language: PersonLanguage = hosts_language,
        tries: int = NTFY_TRIES,
        backoff: float = 1.0,
        timeout: float = NTFY_TIMEOUT,
        concurrency: int = NTFY_CONCURRENCY,
        capacity: int = QUEUE_CAPACITY,
    ) -> None:
        super().__init__(concurrency=concurrency, capacity=capacity)
        service: Any = check_apprise_url(url)[0]  # apprise's NotifyNtfy: how it reads the URL
        if service.mode == "cloud":
            self._root = service.cloud_notify_url.rstrip("/") + "/"
        else:
            port = f":{service.port}" if service.port else ""
            self._root = f"{'https' if service.secure else 'http'}://{service.host}{port}/"
        self.target = f"ntfy {self._root.split('://')[1].rstrip('/')}"
        self.channel = check_channel(url.partition("://")[0].lower())
        """The channel answer links sent here record: `ntfy` or `ntfys`, the URL's scheme."""
        self._topics: list[str] = list(service.topics)
        self._headers = {"content-type": "text/plain; charset=utf-8"}
        if service.auth == "token" and service.token:
            self._headers["authorization"] = f"Bearer {service.token}"
        elif service.user:
            pair = f"{service.user}:{service.password or ''}".encode()
            self._headers["authorization"] = "Basic " + base64.b64encode(pair).decode()
        if service.priority in _PRIORITIES and service.priority != "default":
            self._headers["x-priority"] = str(_PRIORITIES[service.priority])
        tags = getattr(service, "_NotifyNtfy__tags", None)  # apprise keeps them private
        if tags:
            self._headers["x-tags"] = _header_text(",".join(tags))
        self._address = address
        self._links = links
        self.person = person
        self._language = language
        """Whose own notifications these are (their buttons answer as them), or `None`."""
        self._poster = Poster(tries=tries, backoff=backoff, timeout=timeout)

    async def _start(self, stack: contextlib.AsyncExitStack) -> None:
        await stack.enter_async_context(self._poster)  # closed last: after the deliveries
        await super()._start(stack)

    async def deliver(self, event: HostEvent) -> bool:
        actions = self._actions(event) if event.type == EVENT_PENDING else []
        links = None if actions else self._links
        message = message_of(
            event, self._address, links, self.channel, self.person, self._language()
        )
        headers = {
            **self._headers,
            "x-title": _header_text(message.title),
            "x-click": self._address.question_link(event.rpc_id),
            "x-sequence-id": f"uq-{topic_of(event.rpc_id)}",
        }
        if event.type == EVENT_WAITING:  # the inbox, in a notification of its own
            headers["x-click"] = self._address.link("")
            headers["x-sequence-id"] = f"uq-{topic_of(event.id)}"
        if actions:
            headers["x-actions"] = _header_text(_json(actions).decode())
        delivered = True
        for topic in self._topics:
            posted = await self._poster.post(self._root + topic, message.body.encode(), headers)
            if not posted.ok:
                delivered = False
                tries = "try" if posted.attempts == 1 else "tries"
                logger.warning(
                    "%s: %s of question %s failed after %d %s (%s)",
                    self.target,
                    event.type,
                    event.rpc_id,
                    posted.attempts,
                    tries,
                    posted.failure,
                )
        return delivered

    def _actions(self, event: HostEvent) -> list[dict[str, Any]]:
        """The `http` actions of a pending request one tap answers; empty when it has none."""
        if self._links is None:
            return []
        record = event.record
        indexes = [] if record is None else one_tap_options(record)
        if record is None or not indexes or len(indexes) > NTFY_MAX_ACTIONS:
            return []
        options = record.questions[0].options or []
        labels = [options[index].label for index in indexes]
        if any(len(label) > NTFY_LABEL_CHARS for label in labels):
            return []
        actions = []
        for index, label in zip(indexes, labels, strict=True):
            grant = self._links.grant(event.rpc_id, 0, index, self.channel, self.person)
            url = self._address.link("a/" + self._links.sign(grant))
            actions.append(
                {"action": "http", "label": label, "url": url, "method": "POST", "clear": True}
            )
        return actions


def _json(message: list[dict[str, Any]]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def _header_text(text: str) -> str:
    """`text` as a header value: itself when ASCII without line breaks, else RFC 2047's
    base64 encoded words (ntfy decodes them; not every HTTP client sends UTF-8 in headers)."""
    if text.isascii() and "\r" not in text and "\n" not in text:
        return text
    return email.header.Header(text, "utf-8").encode(linesep=" ")
