"""Live agents and who owns whom: `ctx.agents`.

Ownership at run time, not lineage, decides who may ask a human. A runtime root (an agent entered
with no owner) may ask; an agent owned by another live agent may not, because nobody would answer
it and it would block forever: it must put its open question in its final result instead. A
session resumed later as a new root may ask again.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from user_questions.errors import ErrorCode, HarnessError
from user_questions.kernel import Context, Service

__all__ = ["Agent", "AgentRegistry"]


@dataclass(eq=False)
class Agent:
    """A running agent. Compared by identity: the service checks for this exact instance."""

    id: str
    """Stable id; also the session of the questions it asks through a host."""
    name: str | None = None
    """Optional display name for surfaces."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """Free data for the harness; the package never reads it."""


class AgentRegistry(Service):
    """The live agents of an app, each either a runtime root or owned by another live agent."""

    provides = "agents"

    def __init__(self, ctx: Context, config: Any = None) -> None:
        super().__init__(ctx, config)
        self._live: dict[str, Agent] = {}
        self._owners: dict[str, str | None] = {}

    def enter(self, agent: Agent, owner: Agent | None = None) -> Callable[[], None]:
        """Make `agent` live, owned by the live `owner` or a root when `owner is None`.

        The returned disposer takes the agent out again; it is idempotent and also runs when the
        fiber of the context this registry was reached through is disposed. Agents it owned stay
        owned (an orphan is never promoted to a root); enter them again as roots to let them ask.

        Raises:
            HarnessError: `AGENT_ALREADY_LIVE` when an agent with that id is live, or
                `OWNER_NOT_LIVE` when `owner` is not the registry's live instance.
        """
        if agent.id in self._live:
            raise HarnessError(
                f"an agent with id {agent.id} is already live", ErrorCode.AGENT_ALREADY_LIVE
            )
        if owner is not None and self._live.get(owner.id) is not owner:
            raise HarnessError(
                f"owner {owner.id} of agent {agent.id} is not a live agent",
                ErrorCode.OWNER_NOT_LIVE,
            )

        def enter() -> Callable[[], None]:
            self._live[agent.id] = agent
            self._owners[agent.id] = None if owner is None else owner.id

            def leave() -> None:
                if self._live.get(agent.id) is agent:
                    del self._live[agent.id]
                    del self._owners[agent.id]

            return leave

        return self.caller.effect(enter)

    def get(self, id: str) -> Agent | None:
        """The live agent with this id."""
        return self._live.get(id)

    def list(self) -> builtins.list[Agent]:
        """Every live agent, in the order they entered."""
        return list(self._live.values())

    def roots(self) -> builtins.list[Agent]:
        """The live agents that no other agent owns: those that may ask a human."""
        return [agent for agent in self._live.values() if self._owners[agent.id] is None]

    def is_root(self, agent: Agent) -> bool:
        """Whether this exact instance is live and owned by no one."""
        return self._live.get(agent.id) is agent and self._owners[agent.id] is None

    def owner_of(self, id: str) -> Agent | None:
        """The live agent that owns `id`, if any."""
        owner_id = self._owners.get(id)
        return None if owner_id is None else self._live.get(owner_id)

    def is_owned_by(self, id: str, owner: Agent | str) -> bool:
        """Whether `owner` (an agent or an id) owns `id`, directly or through other agents."""
        owner_id = owner if isinstance(owner, str) else owner.id
        seen: set[str] = set()
        current = self._owners.get(id)
        while current is not None and current not in seen:
            if current == owner_id:
                return True
            seen.add(current)
            current = self._owners.get(current)
        return False
