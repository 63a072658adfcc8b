"""The notification flags of `uq serve`: services, webhooks and commands told of every question.

`notifications` turns `--notify`, `--notify-settled`, `--answer-links`, `--notify-webhook`,
`--notify-command` and `--notify-secret` into the host task that runs the notifiers and the answer
links it signs (docs/notify.md). Every flag is checked before the host listens, so a bad one is a
one-line error (`BAD_NOTIFIER`, exit status 2). The webhook secret and the answer-link key are read
from (or kept in) the store only when they are needed. The notifiers are made once the host is bound
(`server.AddressedTasks`), since their links name the address it is reached at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from user_questions.host.app import HostTask
from user_questions.host.gate.public_url import PublicUrl
from user_questions.host.notify.apprise import AppriseNotifier, check_apprise_url
from user_questions.host.notify.command import CommandNotifier
from user_questions.host.notify.links import AnswerLinks, answer_link_secret, lifetime
from user_questions.host.notify.notifier import Notifier, notifying
from user_questions.host.notify.webhook import (
    WebhookNotifier,
    check_secret,
    check_webhook,
    webhook_secret,
)
from user_questions.host.stores import open_store

__all__ = ["Notifications", "notifications", "stored_secret"]


@dataclass(frozen=True, slots=True)
class Notifications:
    """What the notification flags ask of `uq serve`."""

    services: Sequence[str] = ()
    """apprise URLs (`--notify`)."""
    settled: bool = False
    """Whether services are told of settlements too (`--notify-settled`)."""
    links: AnswerLinks | None = None
    """Signs and checks the answer links services carry; `None` with `--answer-links off`."""
    others: Sequence[Notifier] = ()
    """The command and webhook notifiers, which link to nothing."""

    def tasks(self, address: PublicUrl) -> list[HostTask]:
        """The host task that runs every notifier, linking to `address`, or none."""
        notifiers: list[Notifier] = [
            AppriseNotifier(url, address=address, links=self.links, settled=self.settled)
            for url in self.services
        ]
        notifiers += self.others
        return [notifying(notifiers)] if notifiers else []


def notifications(
    store: str,
    *,
    services: Sequence[str] = (),
    settled: bool = False,
    answer_links: str = "on",
    webhooks: Sequence[str] = (),
    commands: Sequence[str] = (),
    secret: str | None = None,
) -> Notifications:
    """Check the notification flags and read what they need from `store`.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` for a service URL, webhook URL, command line, secret
            or answer-link lifetime that cannot be used; the store's errors when a secret has
            to be read from it.
    """
    if secret is not None:
        check_secret(secret)
    links_lifetime = lifetime(answer_links)
    for url in services:
        check_apprise_url(url)
    others: list[Notifier] = [CommandNotifier(command) for command in commands]
    if webhooks:
        for url in webhooks:  # every URL is checked before the store is opened for the secret
            check_webhook(url)
        key = anyio.run(stored_secret, store, secret)
        others += [WebhookNotifier(url, secret=key) for url in webhooks]
    links = None
    if services and links_lifetime is not None:
        links = AnswerLinks(anyio.run(_stored_link_secret, store), lifetime=links_lifetime)
    return Notifications(services, settled, links, others)


async def stored_secret(store: str, given: str | None) -> str:
    """The webhook secret of `store`: `given` (then kept), the stored one, or a new one (kept)."""
    async with open_store(store) as opened:
        return await webhook_secret(opened, given)


async def _stored_link_secret(store: str) -> str:
    async with open_store(store) as opened:
        return await answer_link_secret(opened)
