"""The notification flags of `uq serve`: webhooks and commands told of every question.

Level 10. `notification_tasks` turns `--notify-webhook`, `--notify-command` and
`--notify-secret` into the host task that runs the notifiers (docs/notify.md). Every flag is
checked before the host listens, so a bad one is a one-line error (`BAD_NOTIFIER`, exit
status 2). The webhook secret is read from (or kept in) the store only when a webhook is given.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from user_questions.host.app import HostTask
from user_questions.host.notify import Notifier, notifying
from user_questions.host.notify_command import CommandNotifier
from user_questions.host.notify_webhook import (
    WebhookNotifier,
    check_secret,
    check_webhook,
    webhook_secret,
)
from user_questions.host.stores import open_store

__all__ = ["notification_tasks", "stored_secret"]


def notification_tasks(
    store: str, webhooks: Sequence[str], commands: Sequence[str], secret: str | None
) -> list[HostTask]:
    """The host task that notifies every webhook and command given, or none.

    Raises:
        UserQuestionError: `BAD_NOTIFIER` for a webhook URL, command line or secret that cannot
            be used; the store's errors when the secret has to be read from it.
    """
    if secret is not None:
        check_secret(secret)
    notifiers: list[Notifier] = [CommandNotifier(command) for command in commands]
    if webhooks:
        for url in webhooks:  # every URL is checked before the store is opened for the secret
            check_webhook(url)
        key = anyio.run(stored_secret, store, secret)
        notifiers += [WebhookNotifier(url, secret=key) for url in webhooks]
    return [notifying(notifiers)] if notifiers else []


async def stored_secret(store: str, given: str | None) -> str:
    """The webhook secret of `store`: `given` (then kept), the stored one, or a new one (kept)."""
    async with open_store(store) as opened:
        return await webhook_secret(opened, given)
