"""`--trust-proxy`: which peers may say who the client is, and how it reached them.

A host behind a reverse proxy sees the proxy as its peer; the proxy says who the client really is in
`Forwarded` (RFC 7239) or in the `X-Forwarded-For`, `X-Forwarded-Proto` and `X-Forwarded-Host`
headers. Any client can send those headers too, so the host believes them only from the peers named
by `--trust-proxy` (IP addresses or networks), and from nobody by default. `ForwardedMiddleware`
then rewrites the ASGI scope, so that everything after it (the origin check, the logs, any link made
from a request) sees the request as the client made it:

- `client`: the forwarded addresses are read from the right (the nearest proxy appended the
  last one); the first that is not a trusted proxy is the client. When every one is trusted,
  the leftmost is. An entry that is not an IP address (`unknown`, an obfuscated `_name`) ends
  the walk: the client is then the last trusted address, never a word a client made up.
- `scheme`: `http` or `https` as the client used it (`ws` or `wss` for a WebSocket), from the
  same `Forwarded` element, else the last `X-Forwarded-Proto` value.
- the `Host` header: the host the client asked for, from the same `Forwarded` element, else the
  last `X-Forwarded-Host` value, when it is a plausible `host[:port]`.

`Forwarded` wins over the `X-Forwarded-*` headers when a request has both. A request from a peer
that is not trusted is passed on untouched, whatever headers it carries.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from user_questions.errors import ErrorCode, UserQuestionError

__all__ = ["ForwardedMiddleware", "Hop", "TrustedProxies", "forwarded_hops", "trusted_proxies"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$")
"""A `Host` header a forwarded host may replace it with: a name or an address, and a port."""
_SCHEMES = {"http": ("http", "ws"), "https": ("https", "wss")}
"""The `scheme` of an HTTP request and of a WebSocket, for each forwarded protocol."""
_REMEMBERED = 4096
"""Addresses whose parsing and trust are remembered."""


class TrustedProxies:
    """The networks whose peers may set the forwarding headers. Whether an address is one of
    them is remembered (for the last `_REMEMBERED` addresses): parsing an address costs more
    than the rest of the check."""

    def __init__(self, networks: Sequence[Network]) -> None:
        self.networks = tuple(networks)
        self._trusts = functools.lru_cache(maxsize=_REMEMBERED)(self._trusted)

    def __repr__(self) -> str:
        return f"<TrustedProxies {', '.join(map(str, self.networks))}>"

    def __contains__(self, address: object) -> bool:
        return isinstance(address, str) and self._trusts(address)

    def _trusted(self, address: str) -> bool:
        ip = _ip(address)
        return ip is not None and any(ip in network for network in self.networks)


def trusted_proxies(text: str | Sequence[str]) -> TrustedProxies:
    """Read `--trust-proxy`: IP addresses or networks (`127.0.0.1`, `10.0.0.0/8`, `::1`),
    separated by commas or given as a list.

    Raises:
        UserQuestionError: `BAD_REQUEST` naming an entry that is not an address or a network.
    """
    entries = text.split(",") if isinstance(text, str) else [e for t in text for e in t.split(",")]
    networks: list[Network] = []
    for entry in (entry.strip() for entry in entries):
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
        except ValueError:
            raise UserQuestionError(
                f"--trust-proxy {entry!r} cannot be used: give IP addresses or networks, "
                "such as 127.0.0.1 or 10.0.0.0/8, separated by commas",
                ErrorCode.BAD_REQUEST,
            ) from None
    return TrustedProxies(tuple(networks))


@dataclass(frozen=True, slots=True)
class Hop:
    """What one proxy says it received: from whom, over which protocol, for which host."""

    client: str | None = None
    proto: str | None = None
    host: str | None = None


def forwarded_hops(headers: Sequence[tuple[bytes, bytes]]) -> list[Hop]:
    """The hops a request's forwarding headers describe, nearest to the client first:
    `Forwarded` when present, else `X-Forwarded-For` (with the last `X-Forwarded-Proto` and
    `X-Forwarded-Host` on the nearest hop to the host)."""
    values: dict[bytes, list[str]] = {}
    for name, value in headers:
        if name in (b"forwarded", b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host"):
            values.setdefault(name, []).extend(_items(value.decode("latin-1")))
    if b"forwarded" in values:
        return [_element(text) for text in values[b"forwarded"]]
    hops = [Hop(client=_address(text)) for text in values.get(b"x-forwarded-for", [])]
    proto = values.get(b"x-forwarded-proto", [None])[-1]
    host = values.get(b"x-forwarded-host", [None])[-1]
    if proto is not None or host is not None:
        last = hops[-1] if hops else Hop()
        hops[-1:] = [Hop(client=last.client, proto=proto, host=host)]
    return hops


class ForwardedMiddleware:
    """Rewrites `client`, `scheme` and `Host` of requests whose peer is a trusted proxy."""

    def __init__(self, app: ASGIApp, *, trusted: TrustedProxies) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        peer = scope.get("client")
        if scope["type"] in ("http", "websocket") and peer and peer[0] in self.trusted:
            hops = forwarded_hops(scope["headers"])
            if hops:
                scope = self._as_forwarded(scope, hops)
        await self.app(scope, receive, send)

    def _as_forwarded(self, scope: Scope, hops: list[Hop]) -> Scope:
        chosen: Hop | None = None
        for hop in reversed(hops):
            if hop.client is None:
                break  # not an address: the client is the last trusted one
            chosen = hop
            if hop.client not in self.trusted:
                break  # the first address from the right that is not a proxy: the client
        # The nearest hop says how the client reached the proxies when the client's own hop
        # does not (X-Forwarded-Proto and X-Forwarded-Host travel on their own).
        nearest = hops[-1]
        proto = (chosen.proto if chosen else None) or nearest.proto
        host = (chosen.host if chosen else None) or nearest.host
        scope = dict(scope)
        if chosen is not None and chosen.client is not None:
            scope["client"] = (chosen.client, 0)
        if proto is not None and proto.lower() in _SCHEMES:
            http, ws = _SCHEMES[proto.lower()]
            scope["scheme"] = ws if scope["type"] == "websocket" else http
        if host is not None and _HOST.match(host):
            headers = [(k, v) for k, v in scope["headers"] if k != b"host"]
            scope["headers"] = [(b"host", host.encode("latin-1")), *headers]
        return scope


def _items(value: str) -> list[str]:
    """The comma-separated items of a header value (commas inside quotes kept)."""
    items = value.split(",") if '"' not in value else re.findall(r'(?:[^,"]|"[^"]*")+', value)
    return [item.strip() for item in items if item.strip()]


def _element(text: str) -> Hop:
    """One `Forwarded` element: `for=...;proto=...;host=...`."""
    pairs: dict[str, str] = {}
    for pair in text.split(";"):
        name, _, value = pair.partition("=")
        pairs[name.strip().lower()] = value.strip().strip('"')
    client = pairs.get("for")
    return Hop(
        client=None if client is None else _address(client),
        proto=pairs.get("proto"),
        host=pairs.get("host"),
    )


@functools.lru_cache(maxsize=_REMEMBERED)
def _address(text: str) -> str | None:
    """The IP address in a forwarded `for` value (`1.2.3.4`, `1.2.3.4:80`, `[::1]:80`), or
    `None` when it names none (`unknown`, an obfuscated `_name`)."""
    text = text.strip().strip('"')
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    ip = _ip(text)
    return None if ip is None else str(ip)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None
