"""The inbox's Agent Cards: the public one, and the extended one a token reads.

The `a2a` extra. The public card (`GET /.well-known/agent-card.json`, no token) says what the
inbox is, where its JSON-RPC endpoint is and how to authenticate (a bearer token: an asker's), and
names no person. The extended card (`GetExtendedAgentCard`, with a token) is the same card whose
skills say whom that token's questions reach: one skill per route of an asker's token (a person by
name, a group as `@group`), or one for everyone; with the token's deadline and escalation in
their descriptions, since they decide how a task ends.
"""

from __future__ import annotations

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)

from user_questions._version import __version__
from user_questions.host.a2a.naming import A2A_PATH
from user_questions.host.a2a.parts import JSON_MEDIA_TYPE, TEXT_MEDIA_TYPE
from user_questions.host.gate.durations import duration_text, escalation_text
from user_questions.host.gate.roles import audience_of
from user_questions.host.gate.security import Identity

__all__ = [
    "CARD_NAME",
    "SECURITY_SCHEME",
    "agent_card",
    "extended_card",
]

CARD_NAME = "Ask a person"
SECURITY_SCHEME = "bearer"
"""The name of the card's one security scheme."""
_MODES = [JSON_MEDIA_TYPE, TEXT_MEDIA_TYPE]
_HOW = (
    "Send a text part to ask a free-text question (its first line is the question, the rest "
    'its detail), or a data part {"questions": [...]} in the user-questions vocabulary '
    "(options with descriptions, multi-select, free Other text, a plan to review, an approval). "
    "The task is working while the question waits, then completed with the answer as an "
    'artifact (a data part {"answers": [...]} and a text part), rejected when the person '
    "dismisses it, canceled when you cancel it, failed when its deadline passes."
)


def agent_card(base_url: str) -> AgentCard:
    """The public card of the inbox whose base URL (ending in `/`) is `base_url`."""
    return AgentCard(
        name=CARD_NAME,
        description=(
            "A person answers your questions in a user-questions inbox (a web page, a "
            "terminal, a phone, a chat app). " + _HOW
        ),
        supported_interfaces=[
            AgentInterface(
                url=base_url.rstrip("/") + A2A_PATH,
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            )
        ],
        version=__version__,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
        security_schemes={
            SECURITY_SCHEME: SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="bearer",
                    description=(
                        "An asker's token of the host: the agents' token `uq serve` prints, or "
                        "one made with `uq token add NAME --role asker`. It can ask, and never "
                        "answer."
                    ),
                )
            )
        },
        security_requirements=[SecurityRequirement(schemes={SECURITY_SCHEME: StringList()})],
        default_input_modes=_MODES,
        default_output_modes=_MODES,
        skills=[
            AgentSkill(
                id="ask",
                name="Ask a person",
                description="Ask one or more questions; a person answers in the inbox. " + _HOW,
                tags=["human-in-the-loop", "questions", "approval"],
                examples=["Deploy build 1.4.2 to production now?"],
                input_modes=_MODES,
                output_modes=_MODES,
            )
        ],
    )


def extended_card(base_url: str, identity: Identity) -> AgentCard:
    """The card `identity`'s token reads: its skills are whom its questions reach."""
    card = agent_card(base_url)
    del card.skills[:]
    timing = _timing(identity)
    routes = audience_of(identity) or ("",)
    reach = ", ".join(_whom(route) for route in routes)
    for route in routes:
        card.skills.append(
            AgentSkill(
                id=f"ask:{route}" if route else "ask",
                name=f"Ask {_whom(route)}",
                description=f"Every question asked with this token goes to {reach}. {timing}{_HOW}",
                tags=["human-in-the-loop", "questions", "approval"],
                input_modes=_MODES,
                output_modes=_MODES,
            )
        )
    return card


def _whom(route: str) -> str:
    if not route:
        return "every person on this inbox"
    return f"the group {route}" if route.startswith("@") else route


def _timing(identity: Identity) -> str:
    """What the token's timers do to a task, as sentences (empty when it has none)."""
    said = []
    if identity.deadline is not None:
        said.append(
            f"A question not answered within {duration_text(identity.deadline)} fails "
            "(the task ends failed)."
        )
    if identity.escalate:
        steps = ", ".join(escalation_text(step) for step in identity.escalate)
        said.append(f"Still waiting, it goes to more people: {steps}.")
    return " ".join(said) + (" " if said else "")
