"""The rules over HTTP, for people and admins: decisions remembered so nobody is asked again.

    GET    /api/rules        the rules the token may see, revoked and expired ones included,
                             with their hits and whether the token may revoke each (`mayChange`)
    POST   /api/rules        make one: {"tool", "command"|"path"|"domain"?, "decision",
                             "asker"?, "cwd"?, "expires"?, "approvals"?}; 201 with the rule
    DELETE /api/rules/<id>   revoke it
    POST   /api/rules/check  which rule decides a call, or why none can: {"tool", "input",
                             "cwd"?, "asker"?} -> {"decision", "rule"?, "reason"}

A rule is an answer given in advance, so who may make one is who may answer what it decides
(`roles.rule_refusal`): an admin any rule; a person one for an asker whose requests are routed to
them (`asker` required), for one tool, else 403 `FORBIDDEN` saying why. A person sees the rules
they may change and, read-only, the others that decide their askers' calls (those for every
asker); a check names an asker they may answer, or none. An asker's token never reaches these
routes (`roles.refusal_of`): an agent cannot allow its own calls. The rule records who made it
(the token's name); a change decides every call asked after this answers, on every host.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictInt, StrictStr
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import MAX_ID_LENGTH, MAX_ORIGIN_CWD, Approval, JSONObject
from user_questions.host.endpoints.decoding import load, validate
from user_questions.host.gate.roles import decides_for, routed_to, rule_refusal
from user_questions.host.gate.security import Identity, identity_of
from user_questions.host.gate.tokens import Tokens
from user_questions.host.rules import Rules, explain, new_rule, revoke_rule, rule_json
from user_questions.host.stores import Decision, Role, Rule, Store
from user_questions.types import WireModel

__all__ = [
    "NewRule",
    "RuleCheck",
    "check_rule_call",
    "create_rule",
    "delete_rule",
    "list_rules",
]

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
    approvals: StrictInt | None = None
    """An allow rule's quorum: matching calls are asked of that many people (1 to 10) instead
    of being allowed outright (docs/rules.md#quorum-approvals); absent: 1."""


class RuleCheck(WireModel):
    """The body of `POST /api/rules/check`: a call, as an approval carries it."""

    tool: Annotated[StrictStr, Field(min_length=1, max_length=MAX_ID_LENGTH)]
    input: JSONObject
    """The call's arguments, as the agent gives them (`{"command": "git status"}`)."""
    cwd: Annotated[StrictStr, Field(min_length=1, max_length=MAX_ORIGIN_CWD)] | None = None
    """The folder the agent runs in."""
    asker: _Text | None = None
    """The name of the token that would ask; absent: the rules for every asker alone."""


async def list_rules(request: Request) -> Response:
    """`{"rules": [...]}`, by id: the rules the token may see, each saying whether it may
    revoke it."""
    store: Store = request.app.state.store
    identity = _identity(request)
    tokens: Tokens = request.app.state.tokens
    shown = []
    for record in await store.rules():
        rule = record.rule
        asker = None if rule.asker is None else tokens.named(rule.asker)
        if decides_for(identity, rule, asker):
            may = rule_refusal(identity, rule, asker) is None
            shown.append(rule_json(record, may_change=may))
    return JSONResponse({"rules": shown}, headers=_NOT_CACHED)


async def create_rule(request: Request) -> Response:
    """Make a rule, recorded as made by the token's person; 201 with it."""
    asked = validate(NewRule, load(await request.body()), "rule")
    identity = _identity(request)
    rule = new_rule(
        asked.tool,
        asked.decision,
        command=asked.command,
        path=asked.path,
        domain=asked.domain,
        asker=asked.asker,
        cwd=asked.cwd,
        expires=asked.expires,
        created_by=identity.name,
        approvals=asked.approvals,
    )
    _check_authority(request, identity, rule)
    store: Store = request.app.state.store
    made = await store.add_rule(rule)
    await _seen(request)
    return JSONResponse(rule_json(made, may_change=True), status_code=201, headers=_NOT_CACHED)


async def delete_rule(request: Request) -> Response:
    """Revoke a rule; every host stops applying it to the calls asked from now on."""
    text = request.path_params["id"]
    if not text.isdigit() or len(text) > 18:
        raise UserQuestionError(f"no rule has id {text[:40]!r}", ErrorCode.NOT_FOUND)
    store: Store = request.app.state.store
    identity = _identity(request)
    known = next((record for record in await store.rules() if record.id == int(text)), None)
    if known is not None and identity.role is not Role.ADMIN:
        tokens: Tokens = request.app.state.tokens
        asker = None if known.rule.asker is None else tokens.named(known.rule.asker)
        if not decides_for(identity, known.rule, asker):
            known = None  # not one of theirs to see: as if there were none
        else:
            _check_authority(request, identity, known.rule)
    if known is None:
        raise UserQuestionError(
            f"no active rule has id {int(text)} (uq rule list shows them)", ErrorCode.NOT_FOUND
        )
    revoked = await revoke_rule(store, int(text))
    await _seen(request)
    return JSONResponse(rule_json(revoked, may_change=True), headers=_NOT_CACHED)


async def check_rule_call(request: Request) -> Response:
    """Which rule decides a call, or why none can: `{"decision": "allow" | "deny" | "ask",
    "rule"?: the rule, "reason": "..."}`, as `uq rule check` says it."""
    asked = validate(RuleCheck, load(await request.body()), "rule check")
    identity = _identity(request)
    if asked.asker is not None and identity.role is not Role.ADMIN:
        tokens: Tokens = request.app.state.tokens
        asker = tokens.named(asked.asker)
        if asker is None or asker.role is not Role.ASKER or not routed_to(identity, asker):
            raise UserQuestionError(
                f"{identity.name} may check only the calls of askers routed to them, not "
                f"{asked.asker!r}",
                ErrorCode.FORBIDDEN,
            )
    rules: Rules = request.app.state.rules
    approval = Approval(tool=asked.tool, input=asked.input, cwd=asked.cwd)
    verdict = explain(await rules.current(), approval, asked.asker)
    body: dict[str, Any] = {"decision": "ask", "reason": verdict.reason}
    if verdict.match is not None:
        body["decision"] = str(verdict.match.rule.rule.decision)
        body["rule"] = rule_json(verdict.match.rule)
    return JSONResponse(body, headers=_NOT_CACHED)


def _check_authority(request: Request, identity: Identity, rule: Rule) -> None:
    """Refuse (403) a rule `identity` may not make or revoke (`roles.rule_refusal`)."""
    tokens: Tokens = request.app.state.tokens
    asker = None if rule.asker is None else tokens.named(rule.asker)
    refusal = rule_refusal(identity, rule, asker)
    if refusal is not None:
        raise UserQuestionError(f"{identity.name} may not: {refusal}", ErrorCode.FORBIDDEN)


def _identity(request: Request) -> Identity:
    identity = identity_of(request.scope)
    assert identity is not None, "the security middleware lets no one in without a token"
    return identity


async def _seen(request: Request) -> None:
    """Read the rules again on this host before answering (a cache kept warm: the store checks
    the rules' version as each decision is committed anyway)."""
    rules: Rules = request.app.state.rules
    await rules.reload()
