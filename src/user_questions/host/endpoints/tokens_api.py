"""The tokens over HTTP, for admins: an admin's URL is enough to manage a host.

    GET    /api/tokens          every named token (never a token itself)
    POST   /api/tokens          make one: {"name", "role"?, "groups"?, "routes"?, "notify"?,
                                "deadline"?, "escalate"?, "remind"?, "maxPending"?,
                                "rate"?, "approvals"?, "lang"?};
                                201 with the token, shown this once, and the page's URL with it
    PATCH  /api/tokens/<name>   change its role, groups, routes, notification URLs, timers,
                                share, quorum or language
    DELETE /api/tokens/<name>   revoke it

Only an admin's token reaches these routes (`roles.refusal_of`); what they change reaches every
running host and node at once, as `uq token` does.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictInt, StrictStr
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from user_questions.host.endpoints.decoding import load, validate
from user_questions.host.gate.durations import timer_seconds, timer_steps
from user_questions.host.gate.fair_share import parse_max_pending, parse_rate
from user_questions.host.gate.public_url import PublicUrl
from user_questions.host.gate.quorum import parse_approvals
from user_questions.host.gate.tokens import (
    Tokens,
    add_token,
    change_token,
    parse_language,
    revoke_token,
    token_json,
)
from user_questions.host.notify.apprise import check_apprise_url
from user_questions.host.stores import Role, Store, TokenChange
from user_questions.types import WireModel

__all__ = [
    "NewTokenBody",
    "TokenChangeBody",
    "delete_token",
    "list_tokens",
    "patch_token",
    "post_token",
]

_NOT_CACHED = {"cache-control": "no-store"}


class TokenChangeBody(WireModel):
    """What `PATCH /api/tokens/<name>` changes; a field left out is kept."""

    role: Role | None = None
    groups: list[StrictStr] | None = Field(default=None, max_length=64)
    routes: list[StrictStr] | None = Field(default=None, max_length=64)
    notify: list[StrictStr] | None = Field(default=None, max_length=16)
    deadline: StrictStr | None = Field(default=None, max_length=16)
    """An asker's deadline, written `30s`, `10m`, `2h` or `7d`; `none` takes it away."""

    escalate: list[StrictStr] | None = Field(default=None, max_length=16)
    """An asker's escalation steps, each written `AFTER:TARGET` (`10m:@oncall`); `[]` or
    `["none"]` takes them away."""
    remind: StrictStr | None = Field(default=None, max_length=16)
    """An asker's reminder period, written as `deadline` is (`none` too)."""
    max_pending: StrictInt | Literal["default"] | None = None
    """An asker's pending cap (1 to `MAX_PENDING`); `default` gives back the host's."""
    rate: StrictStr | None = Field(default=None, max_length=32)
    """An asker's rate, written `PER_SECOND[:BURST]` (`5`, `20:200`); `default` too."""
    lang: StrictStr | None = Field(default=None, max_length=35)
    """A person's own language for their chats and notifications (`ko`, `zh-Hans`, `ja`, `en`);
    `none` gives back the host's."""
    approvals: StrictInt | None = None
    """An asker's quorum: how many people must approve each call (1 to `MAX_APPROVALS`)."""

    def change(self) -> TokenChange:
        """The change, its times read (`BAD_REQUEST` for one not written so)."""
        return TokenChange(
            role=self.role,
            groups=self.groups,
            routes=self.routes,
            notify=self.notify,
            deadline=timer_seconds(self.deadline),
            escalate=timer_steps(self.escalate),
            remind=timer_seconds(self.remind),
            max_pending=parse_max_pending(self.max_pending),
            rate=parse_rate(self.rate),
            lang=parse_language(self.lang),
            approvals=parse_approvals(self.approvals),
        )


class NewTokenBody(TokenChangeBody):
    """The body of `POST /api/tokens`."""

    name: StrictStr


async def list_tokens(request: Request) -> Response:
    """`{"tokens": [...]}`, by name, revoked ones included."""
    store: Store = request.app.state.store
    tokens = [token_json(token) for token in await store.tokens()]
    return JSONResponse({"tokens": tokens}, headers=_NOT_CACHED)


async def post_token(request: Request) -> Response:
    """Make a token; 201 with it and the page's URL with it (for a person or admin) or the
    `UQ_URL` an agent is given (for an asker)."""
    asked = validate(NewTokenBody, load(await request.body()), "token")
    _check_notify(asked.notify)
    store: Store = request.app.state.store
    token = await add_token(store, asked.name, asked.change())
    await _seen(request)
    made = next(t for t in await store.tokens() if t.name == asked.name and t.active)
    address: PublicUrl | None = request.app.state.public_url
    url = f"{request.base_url}?token={token}" if address is None else address.link("", token)
    return JSONResponse(token_json(made) | {"token": token, "url": url}, status_code=201)


async def patch_token(request: Request) -> Response:
    """Change a token's role, groups, routes or notification URLs; the changed token."""
    asked = validate(TokenChangeBody, load(await request.body()), "token change")
    _check_notify(asked.notify)
    changed = await change_token(
        request.app.state.store, request.path_params["name"], asked.change()
    )
    await _seen(request)
    return JSONResponse(token_json(changed), headers=_NOT_CACHED)


async def delete_token(request: Request) -> Response:
    """Revoke a token; running hosts refuse it at once and close its connections."""
    revoked = await revoke_token(request.app.state.store, request.path_params["name"])
    await _seen(request)
    return JSONResponse(token_json(revoked), headers=_NOT_CACHED)


async def _seen(request: Request) -> None:
    """Make this host act on a token change before answering it (other hosts and nodes follow
    the store's notice of it)."""
    tokens: Tokens = request.app.state.tokens
    await tokens.reload()


def _check_notify(urls: list[str] | None) -> None:
    for url in urls or ():
        check_apprise_url(url)
