"""`uq chat pair | list | unpair`: who answers from which chat app.

Beside the store, as `uq token` works (`_beside`). `pair telegram alice` prints a one-time code,
valid 10 minutes, and (once a host has learned its bot's username from getMe) the `t.me` link
that sends it; alice sends `/start <code>` to the bot and her Telegram user answers as her from
then on. Exit statuses: 0 done, 1 the store cannot be reached, 2 bad input (an unknown service
or person, an asker, no such pairing).
"""

from __future__ import annotations

import sys
from typing import Literal

from cyclopts import App

from user_questions.cli._beside import local_time, with_store
from user_questions.cli._store_option import OldDb, StoreOption, chosen_store
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.chat.pairing import CODE_LIFETIME, PairCode, new_pair_code
from user_questions.host.stores import ChatPairing, Store

__all__ = ["chat_app"]

chat_app = App(
    name="chat", help="Pair people's Telegram or Slack users with the host, to answer there."
)

Service = Literal["telegram", "slack"]


@chat_app.command(name="pair")
def pair(service: Service, person: str, *, store: StoreOption = None, db: OldDb = None) -> None:
    """Print a one-time code (and Telegram's link) that pairs a chat user with PERSON.

    Parameters
    ----------
    service
        telegram or slack.
    person
        The token name the chat user will answer as (a person or an admin, `owner` included).
    """

    async def work(store: Store) -> PairCode:
        return await new_pair_code(store, service, person)

    made = with_store("chat", chosen_store("chat", store, db), work)
    print(made.code)
    if made.link is not None:
        print(made.link)
    minutes = int(CODE_LIFETIME.total_seconds() // 60)
    how = "/start CODE to the bot" if service == "telegram" else "pair CODE to the app"
    link = " (or opens the link)" if made.link is not None else ""
    print(
        f"{person} sends {how}{link} within {minutes} minutes; the code works once.",
        file=sys.stderr,
    )


@chat_app.command(name="list")
def list_pairings(*, store: StoreOption = None, db: OldDb = None) -> None:
    """List the pairings: service, person, chat user, when paired."""

    async def work(store: Store) -> list[ChatPairing]:
        return await store.pairings()

    for pairing in with_store("chat", chosen_store("chat", store, db), work):
        print(
            f"{pairing.service}\t{pairing.person}\t{pairing.user}\t{local_time(pairing.paired_at)}"
        )


@chat_app.command(name="unpair")
def unpair(service: Service, person: str, *, store: StoreOption = None, db: OldDb = None) -> None:
    """Forget PERSON's pairings with SERVICE: their taps there answer nothing from now on."""

    async def work(store: Store) -> int:
        removed = await store.unpair(service, person)
        if not removed:
            raise UserQuestionError(f"{person} is not paired with {service}", ErrorCode.NOT_FOUND)
        return removed

    removed = with_store("chat", chosen_store("chat", store, db), work)
    print(
        f"unpaired {person} from {service} ({removed} chat user{'s' * (removed != 1)})",
        file=sys.stderr,
    )
