"""`AppriseNotifier`: tell people on ntfy, Slack, Telegram, Discord, Teams, Matrix, email and
every other service apprise knows, by URL, with links to the question and one-tap answers.

Needs apprise (the `notify` extra). One notifier per `uq serve --notify URL`: it sends each
`question/pending` event (and, with `settled=True`, each `question/settled`) as the readable message
`notify.message` writes, in plain text.

apprise is synchronous, so each message is sent in a thread of its own, through the queue of the
`Notifier` base: an ask never waits for a service, and a slow or dead one costs at most
`APPRISE_TIMEOUT` per event of its own queue. The threads are daemon threads, so a service that
hangs can neither hold up the host's exit nor the other notifiers. A message is sent once (add
`?retry=N` to the URL for apprise's own retries); a failure is one log line.

Service URLs hold secrets (tokens, passwords, private topics), so the notifier names its service
by its scheme and apprise's redacted host only (`target`), apprise's own log records are not
passed on, and what a failure line quotes from them has every part of the URL that apprise
redacts, or that is in its path or query, cut out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast
from urllib.parse import urlsplit

import anyio

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.public_url import PublicUrl
from user_questions.host.notify.events import EVENT_SETTLED, HostEvent
from user_questions.host.notify.links import AnswerLinks, check_channel
from user_questions.host.notify.message import PersonLanguage, hosts_language, message_of
from user_questions.host.notify.notifier import QUEUE_CAPACITY, Notifier

if TYPE_CHECKING:
    from apprise import Apprise

__all__ = [
    "APPRISE_CONCURRENCY",
    "APPRISE_TIMEOUT",
    "INSTALL_HINT",
    "AppriseNotifier",
    "check_apprise_url",
]

logger = logging.getLogger("user_questions.host.notify")

APPRISE_TIMEOUT = 30.0
"""Seconds one message may take to go out; longer counts as a failure (the thread is left to
finish on its own)."""
APPRISE_CONCURRENCY = 4
"""Requests one notifier sends at once; the events of one request always go one after the
other."""
INSTALL_HINT = "pip install 'user-questions[notify]'"

T = TypeVar("T")


def check_apprise_url(url: str) -> Apprise:
    """An apprise object that notifies the service at `url`.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` when apprise is not installed or cannot use the URL
            (the message names its scheme only: the rest may be secret).
    """
    try:
        import apprise
    except ImportError:
        raise UserQuestionError(
            f"--notify needs apprise: {INSTALL_HINT}", ErrorCode.BAD_NOTIFIER
        ) from None
    _quiet_apprise()
    asset = apprise.AppriseAsset(
        app_id="user-questions",
        app_desc="user-questions",
        async_mode=False,  # one service, sent in this notifier's own thread
        service_timeout=0,  # the notifier bounds each message (APPRISE_TIMEOUT)
    )
    service = apprise.Apprise.instantiate(url, asset=asset)
    if service is None:
        scheme = url.partition("://")[0][:20] if "://" in url else "?"
        raise UserQuestionError(
            f"a --notify URL apprise cannot use ({scheme}://…): see apprise's list of services "
            "and their URLs",
            ErrorCode.BAD_NOTIFIER,
        )
    notifier = apprise.Apprise(asset=asset)
    notifier.add(service)
    return notifier


class AppriseNotifier(Notifier):
    """Sends each question that becomes pending (and, with `settled`, each that ends) to the
    service at `url`, linking to the host at `address`; `links` signs one-tap answer links
    (`None`: no answer links); a `person`'s notifier signs links that answer as them.

    Raises:
        UserQuestionError: `BAD_NOTIFIER`, as `check_apprise_url`.
    """

    for_people = True

    def __init__(
        self,
        url: str,
        *,
        address: PublicUrl,
        links: AnswerLinks | None = None,
        settled: bool = False,
        person: str | None = None,
        language: PersonLanguage = hosts_language,
        timeout: float = APPRISE_TIMEOUT,
        concurrency: int = APPRISE_CONCURRENCY,
        capacity: int = QUEUE_CAPACITY,
    ) -> None:
        super().__init__(concurrency=concurrency, capacity=capacity)
        self._apprise = check_apprise_url(url)
        redacted = urlsplit(self._apprise.urls(privacy=True)[0])
        self.channel = check_channel(redacted.scheme.lower())
        """The channel answer links sent here record: the URL's scheme (`ntfy`, `mailto`)."""
        self.target = f"apprise {self.channel}://{redacted.hostname or ''}"
        self._secrets = _secrets_of(url, self.target)
        self._address = address
        self._links = links
        self._settled = settled
        self.person = person
        self._language = language
        """Whose own notifications these are (their answer links answer as them), or `None`
        for the host's (`--notify`)."""
        self._timeout = timeout

    def notify(self, event: HostEvent) -> None:
        """Queue `event`, unless it is a settlement and settled notices are off."""
        if event.type == EVENT_SETTLED and not self._settled:
            return
        super().notify(event)

    async def deliver(self, event: HostEvent) -> bool:
        message = message_of(
            event, self._address, self._links, self.channel, self.person, self._language()
        )
        problem = "took too long"
        with anyio.move_on_after(self._timeout):
            result = await _in_daemon_thread(
                lambda: self._apprise.notify(message.body, message.title, body_format="text")
            )
            if result:
                return True
            warnings = [entry.message for entry in result.logs() if entry.level != "DEBUG"]
            problem = "failed" + (f": {self._scrub(warnings[-1])}" if warnings else "")
        logger.warning("%s: %s of question %s %s", self.target, event.type, event.rpc_id, problem)
        return False

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "…")
        return text[:300]


async def _in_daemon_thread(function: Callable[[], T]) -> T:
    """`function()` in a daemon thread of its own, waited for without blocking the event loop.

    The thread hands its outcome back without waiting for the loop, so it always ends when
    `function` does. Cancelling the wait leaves the thread to finish by itself; being a daemon,
    it never holds up the process's exit. Needs the asyncio backend, as the host does.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(outcome: T | None, failure: BaseException | None) -> None:
        if done.done():
            return  # nobody waits any more
        if failure is not None:
            done.set_exception(failure)
        else:
            done.set_result(cast(T, outcome))

    def run() -> None:
        outcome, failure = None, None
        try:
            outcome = function()
        except Exception as error:
            failure = error
        with contextlib.suppress(RuntimeError):  # the event loop has closed
            loop.call_soon_threadsafe(settle, outcome, failure)

    threading.Thread(target=run, name="user-questions apprise", daemon=True).start()
    return await done


def _secrets_of(url: str, target: str) -> list[str]:
    """The parts of `url` a log line must not show: every word of its user, password, path and
    query, and of its host when apprise redacts it, longest first."""
    parts = urlsplit(url) if "://" in url else urlsplit("x://" + url)
    hidden = [parts.username, parts.password, parts.path, parts.query, parts.fragment]
    if (parts.hostname or "") not in target:
        hidden.append(parts.netloc)
    words = {word for text in hidden if text for word in re.split(r"[/?&=:@#,;]+", text)}
    words |= {text for text in hidden if text}
    return sorted((word for word in words if len(word) >= 3), key=len, reverse=True)


def _quiet_apprise() -> None:
    """apprise's log records may quote a service's secrets: keep them out of the host's log (the
    notifier logs its own line, with what it quotes scrubbed)."""
    apprise_logger = logging.getLogger("apprise")
    if apprise_logger.propagate:
        apprise_logger.propagate = False
        apprise_logger.addHandler(logging.NullHandler())
