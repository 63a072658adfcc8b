"""Web Push over HTTP: the host's public key, a person's subscriptions, and the service worker's
answers (`host/notify/web_push.py` does the pushing).

    GET    /api/push/key                   {"publicKey"}: the VAPID key browsers subscribe with;
                                           no token (it is public)
    POST   /api/push/subscriptions         a browser's PushSubscription.toJSON(), with a
                                           person's token: 201 {"id", "secret", ...}
    GET    /api/push/subscriptions         {"subscriptions": [...]}: the token's own
    DELETE /api/push/subscriptions/<id>    remove one of them: 204
    POST   /api/push/worker/answer         {"rpcId", "option"}: a tap, from the service worker
    GET    /api/push/worker/card/<rpcId>   the card a content-free push stands for

The worker's two routes take no token: the worker presents its subscription's secret
(`Authorization: Push <id>.<secret>`, given once, when the page registered it), and answers only
as the subscription's person, only a request routed to them (`roles.sees`), only with an option a
button may give (`taps.one_tap_options`), through `Hub.respond` like every other answer (`via`
`push`, `by` the person). Anything else is refused as if the request did not exist.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field, StrictInt, StrictStr
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from user_questions._checks import usable_id
from user_questions._languages import speaking
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import MAX_ID_LENGTH
from user_questions.host.endpoints.decoding import load, validate
from user_questions.host.gate.roles import sees, viewer
from user_questions.host.gate.security import identity_of
from user_questions.host.hub import Hub
from user_questions.host.notify.push_keys import INSTALL_HINT
from user_questions.host.notify.push_message import card_of, topic_of
from user_questions.host.notify.taps import one_tap_answer, one_tap_options
from user_questions.host.notify.web_push import SubscriptionBody, WebPush
from user_questions.host.stores import PushSubscription, StoredQuestion
from user_questions.outcomes import Surface
from user_questions.types import WireModel

__all__ = [
    "TapBody",
    "add_subscription",
    "list_subscriptions",
    "public_key",
    "remove_subscription",
    "worker_answer",
    "worker_card",
]

_NOT_CACHED = {"cache-control": "no-store"}


class TapBody(WireModel):
    """`POST /api/push/worker/answer`: which request, and the option its button gives."""

    rpc_id: StrictStr = Field(max_length=MAX_ID_LENGTH)
    option: StrictInt = Field(ge=0, le=1000)


async def public_key(request: Request) -> Response:
    """`{"publicKey": <URL-safe base64 uncompressed P-256 point>}`."""
    return JSONResponse({"publicKey": _push(request).keys.public_key})


async def add_subscription(request: Request) -> Response:
    """Keep the browser's subscription for the token's person: 201 with its id and the secret
    its worker answers with (shown this once)."""
    push = _push(request)
    identity = identity_of(request.scope)
    assert identity is not None, "the security middleware lets no one in without a token"
    body = validate(SubscriptionBody, load(await request.body()), "push subscription")
    device = request.headers.get("user-agent", "")
    subscription, secret = await push.subscribe(identity, body, device)
    listed = {**_listed(subscription), "secret": secret}
    return JSONResponse(listed, status_code=201, headers=_NOT_CACHED)


async def list_subscriptions(request: Request) -> Response:
    """`{"subscriptions": [{"id", "service", "device", "createdAt"}]}`: the token's own."""
    push = _push(request)
    identity = identity_of(request.scope)
    assert identity is not None
    mine = await push.store.push_subscriptions(identity.name)
    return JSONResponse({"subscriptions": [_listed(each) for each in mine]}, headers=_NOT_CACHED)


async def remove_subscription(request: Request) -> Response:
    """Remove one of the token's own subscriptions: 204, or 404 when it has none of that id."""
    push = _push(request)
    identity = identity_of(request.scope)
    assert identity is not None
    if not await push.unsubscribe(request.path_params["id"], identity.name):
        raise UserQuestionError("you have no push subscription of that id", ErrorCode.NOT_FOUND)
    return Response(status_code=204, headers=_NOT_CACHED)


async def worker_answer(request: Request) -> Response:
    """A tap on a notification's button: `{"accepted": true}`, or the receipt's refusal (409);
    401 for a worker whose subscription is gone, 404 for a request it may not answer so."""
    push = _push(request)
    worker = await push.worker(request.headers.get("authorization"))
    if worker is None:
        raise UserQuestionError("this push subscription is not registered", ErrorCode.UNAUTHORIZED)
    _, identity = worker
    tap = validate(TapBody, load(await request.body()), "tap")
    hub: Hub = request.app.state.hub
    record = await _seen(push, tap.rpc_id, identity.name)
    if tap.option not in one_tap_options(record):
        raise _not_here()
    receipt = await hub.respond(
        one_tap_answer(record, tap.option),
        via=Surface.PUSH,
        by=identity.name,
        sees=viewer(identity),
    )
    if not receipt.accepted:
        body = {"accepted": False, "reason": receipt.reason, "message": receipt.message}
        return JSONResponse(body, status_code=409, headers=_NOT_CACHED)
    return JSONResponse({"accepted": True}, headers=_NOT_CACHED)


async def worker_card(request: Request) -> Response:
    """The card of a pending request routed to the worker's person, as a push carries it: in
    that person's own language (`uq token add --lang`), else the host's, as their pushes are."""
    push = _push(request)
    worker = await push.worker(request.headers.get("authorization"))
    if worker is None:
        raise UserQuestionError("this push subscription is not registered", ErrorCode.UNAUTHORIZED)
    _, identity = worker
    record = await _seen(push, request.path_params["rpc_id"], identity.name)
    card = {"v": 1, "rpcId": record.rpc_id, "tag": f"uq-{topic_of(record.rpc_id)}"}
    with speaking(identity.lang):
        shown = card_of(record)
    return JSONResponse({**card, **shown}, headers=_NOT_CACHED)


async def _seen(push: WebPush, rpc_id: str, person: str) -> StoredQuestion:
    """The pending request `rpc_id`, if `person` may see and answer it.

    Raises:
        UserQuestionError: `NOT_FOUND`, the same for every other case.
    """
    identity = push.tokens.named(person)
    record = await push.store.get(rpc_id) if usable_id(rpc_id) is not None else None
    if record is None or not record.pending or identity is None or not sees(identity, record):
        raise _not_here()
    return record


def _not_here() -> UserQuestionError:
    return UserQuestionError("no pending question of yours can be answered so", ErrorCode.NOT_FOUND)


def _push(request: Request) -> WebPush:
    push: WebPush | None = request.app.state.web_push
    if push is None:
        raise UserQuestionError(
            f"this host sends no Web Push: it needs pywebpush ({INSTALL_HINT})",
            ErrorCode.NOT_FOUND,
        )
    return push


def _listed(subscription: PushSubscription) -> dict[str, str]:
    """A subscription as its person sees it: the push service's host, never its endpoint."""
    return {
        "id": subscription.id,
        "service": urlsplit(subscription.endpoint).hostname or "",
        "device": subscription.device,
        "createdAt": subscription.created_at.isoformat().replace("+00:00", "Z"),
    }
