"""Roles: what each kind of token may do, and whom a request is for.

Authority comes from the kind of credential, never from what a request says about itself: the
host decides a token's role when it authenticates it (`tokens.Tokens`), and every route and
socket is checked against that role before anything else (`SecurityMiddleware` asks
`refusal_of`). The credential an agent asks with is an `asker` token, which can never answer:

- `asker`: asks, re-attaches, withdraws and reads its own requests (`/ws/ask`,
  `POST /api/decide`, `POST /a2a`, `GET /api/pending`, `GET /api/me`); never answers or
  dismisses, opens the page, reads history or metrics, sees another's request, manages tokens or
  makes rules (an agent never allows its own calls).
- `person`: asks too; sees, answers and dismisses what is routed to them, and its history;
  makes and revokes the rules of the askers routed to them (`rule_refusal`): a rule is an
  answer given in advance, so who may make one is who may answer what it decides.
- `admin`: everything: every request (recorded as answered by them), tokens, routes, and any
  rule (one for every asker, or for every tool).

A request's audience is set when it is asked: the asking token's routes when it is an asker's
(people by name, groups as `@group`), else everyone; its asker token's escalation steps widen it
while it is pending (`Hub`). A person sees a request whose audience is
empty, names them, or names one of their groups; an asker sees only the requests it asked. A
request one may not see is refused as if it did not exist, so no refusal tells whether it does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from user_questions._checks import quoted
from user_questions.host.gate.security import Identity
from user_questions.host.gate.tokens import Tokens
from user_questions.host.rules.making import ANY_TOOL
from user_questions.host.stores import Role, Rule, StoredQuestion

__all__ = [
    "ANSWERING_ROLES",
    "audience_of",
    "decides_for",
    "maker_refusal",
    "may_answer",
    "refusal_of",
    "routed_to",
    "rule_refusal",
    "seen_by",
    "sees",
    "viewer",
    "withdrawer",
]

ANSWERING_ROLES = frozenset({Role.PERSON, Role.ADMIN})
"""The roles whose tokens may answer and dismiss: never an asker's."""

_ASKER_MAY = frozenset(
    {
        ("GET", "/api/pending"),
        ("GET", "/api/me"),
        ("GET", "/ws/ask"),
        ("POST", "/api/decide"),
        ("POST", "/a2a"),
    }
)
"""What an asker's token opens besides the public paths (a WebSocket handshake is a GET; `POST
/a2a` is A2A's JSON-RPC endpoint, which asks)."""
_ASKER_REFUSALS = (
    ("/ws", "this token can ask but not answer: it cannot open the page"),
    ("/api/respond", "this token can ask but not answer"),
    ("/session", "this token can ask but not answer: it cannot sign a page in"),
    ("/api/history", "this token can ask but not read the history"),
    ("/history", "this token can ask but not read the history"),
    ("/metrics", "this token can ask but not read the host's metrics"),
    ("/api/tokens", "this token can ask but not manage tokens"),
    ("/api/rules", "this token can ask but not make or read rules"),
    ("/rules", "this token can ask but not make or read rules"),
)
_ADMIN_PATHS = ("/api/tokens",)
"""Paths only an admin's token opens."""


def may_answer(identity: Identity) -> bool:
    """Whether the token behind `identity` may answer or dismiss requests at all."""
    return identity.role in ANSWERING_ROLES


def refusal_of(identity: Identity, method: str, path: str) -> str | None:
    """Why `identity`'s role may not use `method path` (a route that needs a token), or `None`."""
    if identity.role is Role.ASKER:
        if (method, path) in _ASKER_MAY:
            return None
        for prefix, message in _ASKER_REFUSALS:
            if path == prefix or path.startswith(prefix + "/"):
                return message
        return "this token can ask but not answer"
    if identity.role is Role.PERSON and path.startswith(_ADMIN_PATHS):
        return "this token can answer but not manage tokens: that needs an admin's token"
    return None


def audience_of(identity: Identity | None) -> tuple[str, ...]:
    """Whose inbox a request asked with `identity`'s token goes to: an asker's routes, else
    everyone (`()`); `None` is an asker inside the host's own process."""
    if identity is None or identity.role is not Role.ASKER:
        return ()
    return identity.routes


def seen_by(identity: Identity) -> tuple[str, ...] | None:
    """What a request's audience must name for `identity` to see it (their name and groups),
    or `None` when they see everything (an admin)."""
    if identity.role is Role.ADMIN:
        return None
    return (identity.name, *(f"@{group}" for group in identity.groups))


def sees(identity: Identity, record: StoredQuestion) -> bool:
    """Whether `identity` may see (and, if its role answers, answer) `record`."""
    if identity.role is Role.ASKER:
        return record.asked_by == identity.name
    keys = seen_by(identity)
    return keys is None or not record.audience or any(key in record.audience for key in keys)


def viewer(identity: Identity) -> Callable[[StoredQuestion], bool] | None:
    """`sees` for `identity`, or `None` when it sees every request (an admin: no filter)."""
    return None if identity.role is Role.ADMIN else functools.partial(sees, identity)


def asker_reached(identity: Identity) -> str | None:
    """Whose requests `identity` reaches through the asker protocol: its own (its name), or
    (an admin, `None`) every one."""
    return None if identity.role is Role.ADMIN else identity.name


def withdrawer(identity: Identity) -> Callable[[StoredQuestion], bool] | None:
    """Which requests `identity` may withdraw through the asker protocol: the ones it asked,
    or (an admin) every one (`asker_reached`)."""
    name = asker_reached(identity)
    return None if name is None else functools.partial(_asked_by, name)


def _asked_by(name: str, record: StoredQuestion) -> bool:
    return record.asked_by == name


def routed_to(identity: Identity, asker: Identity) -> bool:
    """Whether the requests of the asker `asker` reach `identity` (by name or group; an asker
    without routes reaches everyone), so that `identity` may answer them."""
    keys = seen_by(identity)
    return keys is None or not asker.routes or any(key in asker.routes for key in keys)


def rule_refusal(identity: Identity, rule: Rule, asker: Identity | None) -> str | None:
    """Why `identity` may not make, change or revoke `rule`, `None` when it may. `asker` is
    who the token `rule.asker` names is now (`None`: no such token). An admin may make any
    rule; a person only one for an asker whose requests are routed to them, and for one tool,
    that asks for no quorum."""
    if identity.role is Role.ADMIN:
        return None
    if identity.role is Role.ASKER:
        return "an asker's token makes no rules"
    if rule.approvals > 1:
        return "a rule that asks for a quorum of approvals is an admin's to make"
    if rule.tool == ANY_TOOL:
        return "a rule for every tool (*) is an admin's to make"
    if rule.asker is None:
        return "a rule for every asker is an admin's to make: name the asker it is for"
    if asker is None or asker.role is not Role.ASKER:
        return f"no asker's token is called {rule.asker!r}"
    if not routed_to(identity, asker):
        return (
            f"the requests of {rule.asker} are routed to others: its rules are theirs or an admin's"
        )
    return None


def maker_refusal(tokens: Tokens, by: str, rule: Rule) -> str | None:
    """Why the token called `by` may not make `rule` (`rule_refusal`, with both tokens as they
    are now), `None` when it may."""
    person = tokens.named(by)
    if person is None:
        return f"no active token is called {quoted(by)}"
    asker = None if rule.asker is None else tokens.named(rule.asker)
    return rule_refusal(person, rule, asker)


def decides_for(identity: Identity, rule: Rule, asker: Identity | None) -> bool:
    """Whether `rule` decides requests `identity` may answer: one for every asker, or for an
    asker routed to them (an admin's: every rule)."""
    if identity.role is Role.ADMIN or rule.asker is None:
        return True
    return asker is not None and asker.role is Role.ASKER and routed_to(identity, asker)
