"""A2A: the inbox as an agent other agents call (`uq serve`).

A person in the inbox is reachable as an A2A agent (A2A 1.0, on the official `a2a-sdk`, the `a2a`
extra): an asker's token sends a message, a person answers it in the inbox, and the task ends
with the answer. `inbox_agent()` is what `create_app` mounts: the public Agent Card, the
JSON-RPC endpoint and the host task that delivers push notifications. Without the extra, both
routes answer 404 with the line that installs it. The rooms's modules:

    parts     A2A messages in our vocabulary and back (shared with `uq a2a watch`)
    tasks     a request as an A2A task: its state, status message and answer artifact
    card      the public and the extended Agent Card
    push      push configurations in the store, and their delivery
    handler   the A2A operations, mapped onto the hub and the store
    routes    the card's route and the SDK's JSON-RPC route

docs/integrations/a2a.md says what maps to what, and what is lossy.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.routing import BaseRoute, Route

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.hub import HostTask
from user_questions.host.stores import SettingStore

__all__ = ["InboxAgent", "inbox_agent"]

_CARD_PATH = "/.well-known/agent-card.json"
_A2A_PATH = "/a2a"
_MISSING = "this host speaks A2A with its a2a extra: pip install 'user-questions[a2a]'"


@dataclass(frozen=True, slots=True)
class InboxAgent:
    """What a host mounts to be an A2A agent."""

    routes: list[BaseRoute]
    tasks: list[HostTask] = field(default_factory=list)
    """Run beside the hub while the host serves (the pushes' delivery)."""


def inbox_agent(store: SettingStore, *, push_private: bool = False) -> InboxAgent:
    """The inbox's A2A routes and tasks; routes that say how to install the extra without it.

    Args:
        store: Where the push configurations are kept (the host's store, opened by the app).
        push_private: Allow push notifications to private and loopback addresses
            (`uq serve --a2a-push-private`).
    """
    if importlib.util.find_spec("a2a") is None:
        return InboxAgent(
            [Route(_CARD_PATH, _missing), Route(_A2A_PATH, _missing, methods=["POST"])]
        )
    from user_questions.host.a2a.routes import inbox_routes

    routes, tasks = inbox_routes(store, push_private=push_private)
    return InboxAgent(routes, tasks)


async def _missing(request: Request) -> None:
    raise UserQuestionError(_MISSING, ErrorCode.NOT_FOUND)
