"""Tokens's own notifications: each person's URLs told of what is routed to them.

`uq token add alice --notify ntfy://...` gives alice notifications of her own, beside the
host-wide `--notify`: only the requests she may see (`roles.sees`), with answer links that
answer as her (recorded as answered by her via `link`). The people and their URLs come from the
tokens, which change while the host runs: a notifier is started for each URL that appears and
closed for each that goes, and every event is checked against what its person may see now.
A request still pending is told again to whom the hub routes it again: an escalation step's
target, or (a reminder) everyone it is routed to. Each notifier is told through a `Telling`: one
notification per card, and a digest of a flood.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from functools import partial

import anyio

from user_questions.errors import UserQuestionError
from user_questions.host.gate.public_url import PublicUrl
from user_questions.host.gate.roles import sees
from user_questions.host.gate.tokens import Tokens
from user_questions.host.hub import HostTask, Hub
from user_questions.host.notify.events import event_of
from user_questions.host.notify.links import AnswerLinks
from user_questions.host.notify.notifier import Notifier
from user_questions.host.notify.ntfy import service_notifier
from user_questions.host.notify.telling import Telling
from user_questions.host.stores import StoredQuestion

__all__ = ["personal_notifying"]

logger = logging.getLogger("user_questions.host.notify")

Key = tuple[str, str]
"""A person's name and one of their notification URLs."""


def personal_notifying(
    tokens: Tokens, address: PublicUrl, links: AnswerLinks | None, *, settled: bool = False
) -> HostTask:
    """A host task running a notifier for every notification URL of every person, linking to
    `address`, with links signed by `links` that answer as that person."""

    async def run(hub: Hub) -> None:
        running: dict[Key, tuple[Telling, anyio.CancelScope]] = {}

        def fan_out(record: StoredQuestion, whom: tuple[str, ...] | None = None) -> None:
            """Tell each person who sees `record` of it; routed again (`Hub.on_routed`), only
            those `whom` it was routed to (`()`: everyone who sees it)."""
            told = record if whom is None else dataclasses.replace(record, audience=whom)
            event = None
            for (name, _), (telling, _) in running.items():
                identity = tokens.named(name)
                if identity is not None and sees(identity, told) and sees(identity, record):
                    event = event or event_of(record)
                    telling.tell(record, event)

        async def keep(notifier: Notifier, telling: Telling, scope: anyio.CancelScope) -> None:
            with scope:
                async with notifier:
                    stop = hub.metrics.watch_notifiers([notifier])
                    try:
                        await telling.run()
                    finally:
                        stop()

        async with anyio.create_task_group() as task_group:

            def follow() -> None:
                wanted = {(name, url) for name, urls in tokens.notified.items() for url in urls}
                for key in [key for key in running if key not in wanted]:
                    running.pop(key)[1].cancel()  # it flushes what it queued, then stops
                for key in sorted(wanted - running.keys()):
                    try:
                        notifier = service_notifier(
                            key[1],
                            address=address,
                            links=links,
                            settled=settled,
                            person=key[0],
                            language=partial(_language_of, tokens, key[0]),
                        )
                    except UserQuestionError as error:
                        logger.warning("cannot notify %s: %s", key[0], error.message)
                        continue
                    scope = anyio.CancelScope()
                    telling = Telling(notifier.notify, hub)
                    running[key] = (telling, scope)
                    task_group.start_soon(keep, notifier, telling, scope)

            follow()
            with contextlib.ExitStack() as stack:
                stack.callback(tokens.on_change(follow))
                stack.callback(hub.on_event(fan_out))
                stack.callback(hub.on_routed(fan_out))
                await anyio.sleep_forever()

    return run


def _language_of(tokens: Tokens, person: str) -> str | None:
    """`person`'s own language now (`uq token change --lang`), `None` for the host's."""
    identity = tokens.named(person)
    return None if identity is None else identity.lang
