"""The rules over HTTP, for people and admins: decisions remembered so nobody is asked again.

    GET    /api/rules        every rule, revoked and expired ones included, with its hits
    POST   /api/rules        make one: {"tool", "command"|"path"|"domain"?, "decision",
                             "asker"?, "cwd"?, "expires"?}; 201 with the rule
    DELETE /api/rules/<id>   revoke it

An asker's token never reaches these routes (`roles.refusal_of`): an agent cannot allow its own
calls. The rule records who made it (the token's name); what changes reaches every host and node
at once, as `uq rule` does, and this host applies it before answering.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictStr
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.endpoints.decoding import load, validate
from user_questions.host.gate.security import identity_of
from user_questions.host.rules import Rules, add_rule, revoke_rule, rule_json
from user_questions.host.stores import Decision, Store
from user_questions.types import WireModel

__all__ = ["NewRule", "create_rule", "delete_rule", "list_rules"]

_NOT_CACHED = {"cache-control": "no-store"}
_Text = Annotated[StrictStr, Field(min_length=1, max_length=4096)]


class NewRule(WireModel):
    """The body of `POST /api/rules`."""

    tool: _Text
    decision: Decision
    command: _Text | None = None
    path: _Text | None = None
    domain: _Text | None = None
    asker: _Text | None = None
    cwd: _Text | None = None
    expires: Annotated[StrictStr, Field(min_length=2, max_length=16)] | None = None
    """How long it lasts, as `30s`, `10m`, `2h` or `7d`; absent: until revoked."""


async def list_rules(request: Request) -> Response:
    """`{"rules": [...]}`, by id."""
    store: Store = request.app.state.store
    rules = [rule_json(rule) for rule in await store.rules()]
    return JSONResponse({"rules": rules}, headers=_NOT_CACHED)


async def create_rule(request: Request) -> Response:
    """Make a rule, recorded as made by the token's person; 201 with it."""
    asked = validate(NewRule, load(await request.body()), "rule")
    identity = identity_of(request.scope)
    made = await add_rule(
        request.app.state.store,
        asked.tool,
        asked.decision,
        command=asked.command,
        path=asked.path,
        domain=asked.domain,
        asker=asked.asker,
        cwd=asked.cwd,
        expires=asked.expires,
        created_by=None if identity is None else identity.name,
    )
    await _seen(request)
    return JSONResponse(rule_json(made), status_code=201, headers=_NOT_CACHED)


async def delete_rule(request: Request) -> Response:
    """Revoke a rule; every host stops applying it at once."""
    text = request.path_params["id"]
    if not text.isdigit() or len(text) > 18:
        raise UserQuestionError(f"no rule has id {text[:40]!r}", ErrorCode.NOT_FOUND)
    revoked = await revoke_rule(request.app.state.store, int(text))
    await _seen(request)
    return JSONResponse(rule_json(revoked), headers=_NOT_CACHED)


async def _seen(request: Request) -> None:
    """Apply a rule change on this host before answering (the others follow the store's
    notice of it)."""
    rules: Rules = request.app.state.rules
    await rules.reload()
