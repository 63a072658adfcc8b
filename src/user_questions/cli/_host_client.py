"""A running host as the terminal commands see it: its pending requests, responses, settlements.

For `uq pending`, `uq answer`, `uq history --url` and `uq hook install --url`; needs the `web` extra
(httpx, websockets). It speaks the host's HTTP API and its page WebSocket (docs/protocol.md) with a
token, as a page does: `GET /api/pending` lists the requests, `POST /api/respond` answers or
dismisses one (with `X-UQ-Surface: terminal`, so the host records the terminal as the surface),
`/ws` tells at once when a request settles (`question/resolved`), so a prompt can be withdrawn,
`GET /api/history` lists the settled ones, `GET /api/me` says what the token is, and an admin's
token manages tokens (`/api/tokens`).

The host is found as `RemoteProvider` finds it: `--url` (else `$UQ_URL`, else `DEFAULT_URL`);
the token is `--token`, else the URL's `?token=`, else `$UQ_TOKEN`. `--host`, the option's old
name, still works for one release, with a line on stderr (`chosen_url`). An `https://` host's
certificate is verified against the system's authorities, `SSL_CERT_FILE` and `--ca FILE`
(`_host_link.tls.client_context`).
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Self, TypeVar
from urllib.parse import quote

import anyio
import httpx
from pydantic import BaseModel, StrictStr, ValidationError
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake, WebSocketException

from user_questions._host_link.tls import client_context, untrusted, wants_tls
from user_questions._reading.json_reader import JSONRefused, load_json
from user_questions._reading.wire import describe_validation_error
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import ClientResponse, QuestionRequestedFrame, Receipt
from user_questions.host.web.history import HistoryResponse
from user_questions.outcomes import Outcome, Surface
from user_questions.providers.remote import parse_host_url
from user_questions.types import WireModel

__all__ = [
    "CA_HELP",
    "DEFAULT_URL",
    "REQUEST_TIMEOUT",
    "SURFACE_HEADER",
    "URL_HELP",
    "HostAddress",
    "HostClient",
    "Pending",
    "Settled",
    "TokenInfo",
    "chosen_url",
    "host_address",
]

DEFAULT_URL = "http://127.0.0.1:8765/"
"""Where `uq serve` listens by default."""
SURFACE_HEADER = "X-UQ-Surface"
"""Tells the host which surface a response came through."""
REQUEST_TIMEOUT = 30.0
"""Seconds one HTTP request to the host may take."""
WATCH_BACKOFF_FIRST = 0.5
WATCH_BACKOFF_MAX = 5.0
MAX_FRAME = 4 * 1024 * 1024
"""The largest page frame accepted from the host."""

URL_HELP = "URL of the host, as `uq serve` printed it (its ?token= is used). Default: $UQ_URL."
CA_HELP = (
    "A PEM file of the certificate authority that signed an https host's certificate, trusted "
    "besides the system's (and $SSL_CERT_FILE's)."
)

M = TypeVar("M", bound=BaseModel)

Settled = Outcome | Literal["gone"]
"""How a watched request stopped being pending: its outcome, or `gone` when it settled while
the watch was not connected."""


def chosen_url(command: str, url: str | None, host: str | None) -> str | None:
    """The host URL a command was given: `--host` (its old name, with a deprecation line on
    stderr) when used, else `--url` (or `$UQ_URL`)."""
    if host is None:
        return url
    print(
        f"uq {command}: --host is deprecated here and will be removed in the next release; "
        "use --url",
        file=sys.stderr,
    )
    return host


class TokenInfo(WireModel):
    """A token as the host describes it (`GET /api/me`, `/api/tokens`): the token itself only
    in the answer that made it."""

    name: StrictStr
    role: StrictStr
    """`asker`, `person` or `admin`."""
    revoked_at: StrictStr | None = None
    token: StrictStr | None = None


@dataclass(frozen=True, slots=True)
class HostAddress:
    """Where a host is and the token to show it."""

    base: str
    """The host's base URL, ending with `/`."""
    token: str
    ca: str | None = None
    """A private authority's certificate to trust besides the system's (`--ca`)."""


def host_address(url: str | None, token: str | None, ca: str | None = None) -> HostAddress:
    """The host named by `url` (else `$UQ_URL`, else `DEFAULT_URL`), with the token to use and
    the authority `ca` to trust.

    Raises:
        UserQuestionError: `BAD_REQUEST` for a URL that is not http(s) or a `ca` that cannot be
            read; `BAD_TOKEN` when no token is given anywhere.
    """
    base, _, url_token = parse_host_url(url or os.environ.get("UQ_URL") or DEFAULT_URL)
    token = token or url_token or os.environ.get("UQ_TOKEN")
    if not token:
        raise UserQuestionError(
            "the host's token is needed: --token, the URL `uq serve` printed (with ?token=) "
            "as --url, or UQ_TOKEN",
            ErrorCode.BAD_TOKEN,
        )
    if ca is not None:
        client_context(ca)  # a CA file that cannot be read is bad input, before any request
    return HostAddress(base, token, ca)


@dataclass
class Pending:
    """What `GET /api/pending` listed: the requests read, and the ones that could not be."""

    frames: list[QuestionRequestedFrame] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    """`(rpcId, why)` of each request whose frame this client cannot read."""

    def rpc_ids(self) -> set[str]:
        """Every pending request's rpcId, the unreadable ones' included."""
        return {frame.rpc_id for frame in self.frames} | {rpc_id for rpc_id, _ in self.unreadable}


class HostClient:
    """Talks to one host; use as `async with HostClient(address)`."""

    def __init__(self, address: HostAddress) -> None:
        self.address = address
        self._tls = client_context(address.ca) if wants_tls(address.base) else None
        self._http: httpx.AsyncClient | None = None

    async def __aenter__(self) -> Self:
        self._http = httpx.AsyncClient(
            base_url=self.address.base,
            headers={"authorization": f"Bearer {self.address.token}"},
            timeout=REQUEST_TIMEOUT,
            verify=self._tls or True,
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._http is not None
        with anyio.CancelScope(shield=True):
            await self._http.aclose()

    async def pending(self) -> Pending:
        """Every pending request, oldest first; one this client cannot read (a newer host's
        question, say) is set apart in `unreadable` rather than failing the whole list.

        Raises:
            UserQuestionError: `HOST_UNREACHABLE`, `UNAUTHORIZED`, or the host's error code.
        """
        data = await self._request("GET", "api/pending")
        frames = data.get("pending") if isinstance(data, dict) else None
        if not isinstance(frames, list):
            raise self._not_a_host('no "pending" list in its answer')
        listed = Pending()
        for frame in frames:
            try:
                listed.frames.append(_parse(QuestionRequestedFrame, frame, self.address.base))
            except UserQuestionError as error:
                rpc_id = frame.get("rpcId") if isinstance(frame, dict) else None
                listed.unreadable.append(
                    (rpc_id if isinstance(rpc_id, str) else "?", error.message)
                )
        return listed

    async def respond(
        self, response: ClientResponse, *, surface: Surface = Surface.TERMINAL
    ) -> Receipt:
        """Send an answer or a dismissal through `surface` (one the host lets a client claim:
        `terminal` or `editor`); the host's receipt.

        Raises:
            UserQuestionError: `HOST_UNREACHABLE`, `UNAUTHORIZED`, or the host's error code
                (`STORE_UNAVAILABLE`: nothing was recorded; send it again later).
        """
        body = response.model_dump_json().encode()
        headers = {"content-type": "application/json", SURFACE_HEADER: str(surface)}
        data = await self._request("POST", "api/respond", content=body, headers=headers)
        return _parse(Receipt, data, self.address.base)

    async def history(self, parameters: Mapping[str, str]) -> HistoryResponse:
        """One page of `GET /api/history` for these parameters (`session`, `outcome`, `q`,
        `by`, `before`, `limit`).

        Raises:
            UserQuestionError: `HOST_UNREACHABLE`, `UNAUTHORIZED`, or the host's error code
                (`BAD_REQUEST` for a filter it refuses).
        """
        data = await self._request("GET", "api/history", params=dict(parameters))
        return _parse(HistoryResponse, data, self.address.base)

    async def me(self) -> TokenInfo:
        """What the host says this client's token is: its name and role.

        Raises:
            UserQuestionError: `HOST_UNREACHABLE` or `UNAUTHORIZED`.
        """
        return _parse(TokenInfo, await self._request("GET", "api/me"), self.address.base)

    async def tokens(self) -> list[TokenInfo]:
        """Every named token, revoked ones included (an admin's token only).

        Raises:
            UserQuestionError: `HOST_UNREACHABLE`, `UNAUTHORIZED`, or `FORBIDDEN`.
        """
        data = await self._request("GET", "api/tokens")
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list):
            raise self._not_a_host('no "tokens" list in its answer')
        return [_parse(TokenInfo, token, self.address.base) for token in tokens]

    async def add_token(self, name: str, role: str) -> TokenInfo:
        """Make a token called `name` with `role` (an admin's token only); it, with the token.

        Raises:
            UserQuestionError: `HOST_UNREACHABLE`, `UNAUTHORIZED`, `FORBIDDEN`, or the host's
                refusal (`TOKEN_EXISTS`, `BAD_REQUEST`).
        """
        data = await self._request("POST", "api/tokens", json={"name": name, "role": role})
        return _parse(TokenInfo, data, self.address.base)

    async def revoke_token(self, name: str) -> None:
        """Revoke the token called `name` (an admin's token only).

        Raises:
            UserQuestionError: `HOST_UNREACHABLE`, `UNAUTHORIZED`, `FORBIDDEN`, `NOT_FOUND`.
        """
        await self._request("DELETE", f"api/tokens/{quote(name, safe='')}")

    async def settled(self, rpc_id: str) -> Settled:
        """Wait until request `rpc_id` is no longer pending, and say how it ended.

        Follows the page WebSocket; when it cannot connect or is cut, it tries again with
        backoff and, once connected, checks `/api/pending`, since the request may have settled
        meanwhile. It never gives up: cancel it to stop.
        """
        pause = WATCH_BACKOFF_FIRST
        while True:
            try:
                async with connect(
                    _socket_url(self.address.base),
                    additional_headers={"authorization": f"Bearer {self.address.token}"},
                    max_size=MAX_FRAME,
                    ssl=self._tls,
                ) as socket:
                    pause = WATCH_BACKOFF_FIRST
                    if rpc_id not in (await self.pending()).rpc_ids():
                        return "gone"
                    async for message in socket:
                        outcome = _resolution(message, rpc_id)
                        if outcome is not None:
                            return outcome
            except (OSError, InvalidHandshake, WebSocketException, UserQuestionError):
                pass  # the host is away, or restarting: look again shortly
            await anyio.sleep(pause * random.uniform(0.5, 1.0))
            pause = min(WATCH_BACKOFF_MAX, pause * 2)

    async def _request(self, method: str, path: str, **options: Any) -> Any:
        assert self._http is not None
        base = self.address.base
        try:
            response = await self._http.request(method, path, **options)
        except httpx.HTTPError as error:
            raise _unreachable(base, error) from None
        if response.status_code == 401:
            raise UserQuestionError(
                f"the host at {base} refused the token (HTTP 401); use the token `uq serve` "
                "printed, or a named token (`uq token add`)",
                ErrorCode.UNAUTHORIZED,
            )
        try:
            data = load_json(response.content)
        except JSONRefused:
            raise self._not_a_host(f"HTTP {response.status_code}, not JSON") from None
        if not response.is_success:
            refusal = data.get("error") if isinstance(data, dict) else None
            if isinstance(refusal, dict) and isinstance(refusal.get("message"), str):
                code = str(refusal.get("code") or ErrorCode.HOST_UNREACHABLE)
                raise UserQuestionError(f"the host said: {refusal['message']}", code)
            raise self._not_a_host(f"HTTP {response.status_code}")
        return data

    def _not_a_host(self, problem: str) -> UserQuestionError:
        return UserQuestionError(
            f"{self.address.base} did not answer as a user-questions host ({problem})",
            ErrorCode.HOST_UNREACHABLE,
        )


def _unreachable(base: str, error: httpx.HTTPError) -> UserQuestionError:
    """Why the host at `base` could not be asked: a certificate that cannot be verified, or
    whatever else stopped the request."""
    message = untrusted(base, error) or (
        f"cannot reach the host at {base} ({type(error).__name__}: {error}); "
        "is `uq serve` running there?"
    )
    return UserQuestionError(message, ErrorCode.HOST_UNREACHABLE)


def _parse(model: type[M], data: Any, base: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise UserQuestionError(
            f"{base} sent something unexpected: {describe_validation_error(error)}",
            ErrorCode.HOST_UNREACHABLE,
        ) from None


def _socket_url(base: str) -> str:
    scheme, rest = base.split("://", 1)
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}ws"


def _resolution(message: str | bytes, rpc_id: str) -> Settled | None:
    try:
        frame = load_json(message)
        payload = frame["payload"]
        if payload["type"] == "question/resolved" and payload["questionRpcId"] == rpc_id:
            return Outcome(payload["settled"])
    except (ValueError, KeyError, TypeError):  # JSONRefused is a ValueError
        pass  # not a frame this watch cares about
    return None
