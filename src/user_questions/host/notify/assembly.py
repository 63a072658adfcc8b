"""The notifiers a host runs, made from its configuration once its store is open.

The flags were checked when the `HostConfig` was made; what is made here needs the open store
(the webhook secret and the answer-link key are kept in it, read only when needed) and the
address people reach the host at (the links name it). `create_app` runs the result as one host
task, so a Python caller of `serve()` gets the same notifications as `uq serve`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.gate.public_url import PublicUrl
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import HostTask
from user_questions.host.notify.command import CommandNotifier
from user_questions.host.notify.links import AnswerLinks, answer_link_secret
from user_questions.host.notify.notifier import Notifier, notifying
from user_questions.host.notify.ntfy import service_notifier
from user_questions.host.notify.personal import personal_notifying
from user_questions.host.notify.push_keys import PushKeys, contact_of
from user_questions.host.notify.web_push import WebPush, web_push_notifying
from user_questions.host.notify.webhook import WebhookNotifier, webhook_secret
from user_questions.host.stores import Store

__all__ = ["Notifications", "Notifying", "check_addressed", "notifications", "pushing_installed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Notifications:
    """What a host is asked to tell, and whom (the notify part of `HostConfig`)."""

    services: Sequence[str] = ()
    """apprise URLs: messages with a link to the question and one-tap answer links."""
    settled: bool = False
    """Whether `services` are told how each question ended too."""
    links_lifetime: timedelta | None = None
    """How long an answer link works; `None`: the messages carry none."""
    webhooks: Sequence[str] = ()
    """URLs that get every event as signed JSON."""
    commands: Sequence[str] = ()
    """Command lines run for every event, with its JSON on stdin."""
    secret: str | None = None
    """The webhooks' signing secret; `None`: the stored one, or a new one (kept)."""
    push_private: bool = False
    """Whether Web Push messages are content-free (the worker fetches the card)."""

    def __bool__(self) -> bool:
        return bool(self.services or self.webhooks or self.commands)


@dataclass(frozen=True, slots=True)
class Notifying:
    """The host tasks that run a host's notifiers, and the links their messages carry."""

    tasks: list[HostTask]
    links: AnswerLinks | None
    push: WebPush | None
    """Web Push, for its endpoints; `None` without pywebpush (the `notify` extra)."""


async def notifications(
    asked: Notifications, store: Store, address: PublicUrl | None, tokens: Tokens
) -> Notifying:
    """The notifiers `asked` for, each person's own (`personal.py`) and Web Push (when
    pywebpush is installed), linking to `address`, with the secrets read from `store`. Without
    an address only the notifiers that link to nothing run (webhooks, commands, Web Push).

    Raises:
        UserQuestionError: as `check_addressed`.
    """
    check_addressed(asked, address)
    links = None
    if address is not None and asked.links_lifetime is not None:
        links = AnswerLinks(await answer_link_secret(store), lifetime=asked.links_lifetime)
    notifiers: list[Notifier] = []
    if asked.services and address is not None:
        notifiers += [
            service_notifier(url, address=address, links=links, settled=asked.settled)
            for url in asked.services
        ]
    notifiers += [CommandNotifier(command) for command in asked.commands]
    if asked.webhooks:
        key = await webhook_secret(store, asked.secret)
        notifiers += [WebhookNotifier(url, secret=key) for url in asked.webhooks]
    tasks = [notifying(notifiers)] if notifiers else []
    if address is not None:
        tasks.append(personal_notifying(tokens, address, links, settled=asked.settled))
    push = None
    if pushing_installed():
        keys = await PushKeys.load(store, contact_of(None if address is None else address.origin))
        push = WebPush(keys, store, tokens, private=asked.push_private)
        tasks.append(web_push_notifying(push))
    return Notifying(tasks, links, push)


def check_addressed(asked: Notifications, address: PublicUrl | None) -> None:
    """Refuse apprise services without the address their messages link to.

    Raises:
        UserQuestionError: `BAD_REQUEST` when `asked` has services and `address` is `None`.
    """
    if asked.services and address is None:
        raise UserQuestionError(
            "notifications link to the host: give the public URL people reach it at, or run it "
            "with serve(), which knows the address it listens on",
            ErrorCode.BAD_REQUEST,
        )


def pushing_installed() -> bool:
    """Whether pywebpush (the `notify` extra) is there for Web Push."""
    return importlib.util.find_spec("pywebpush") is not None
