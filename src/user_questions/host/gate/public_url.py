"""The address people reach a host at, when it is not the one it listens on.

A host behind a reverse proxy or a tunnel listens on `127.0.0.1:8765` while people open
`https://uq.example.com/`. `uq serve --public-url URL` says so, and the host then uses that address
wherever it names itself to people: the URL it prints, the links in notifications
(`PublicUrl.question_link`), and the origins its security check accepts (a browser at the public
address sends it as its `Origin`, whatever `Host` the proxy passes on).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

from user_questions.errors import ErrorCode, UserQuestionError

__all__ = ["PublicUrl", "public_url"]


@dataclass(frozen=True, slots=True)
class PublicUrl:
    """A host's public address: `base` ends with `/`; `origin` is its scheme, host and port."""

    base: str
    origin: str

    def link(self, path: str, token: str | None = None) -> str:
        """The public URL of `path` (relative to the base), with `?token=` when given."""
        url = self.base + path.lstrip("/")
        return f"{url}?token={quote(token, safe='')}" if token else url

    def question_link(self, rpc_id: str) -> str:
        """Where the inbox opens on the card of request `rpc_id`."""
        return self.link(f"q/{quote(rpc_id, safe='')}")


def public_url(text: str) -> PublicUrl:
    """Read `--public-url`: an `http(s)://` URL with a host, an optional port and path, and no
    query, fragment or credentials.

    Raises:
        UserQuestionError: `BAD_REQUEST`, saying what is wrong with it.
    """
    try:
        parts = urlsplit(text.strip())
        port = parts.port  # reading it checks it
    except ValueError as error:
        raise _bad(text, str(error)) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _bad(text, "it must start with http:// or https:// and name a host")
    if parts.query or parts.fragment:
        raise _bad(text, "it must not carry a query or a fragment (the token is added to it)")
    if parts.username is not None or parts.password is not None:
        raise _bad(text, "it must not carry credentials")
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    default_port = {"http": 80, "https": 443}[parts.scheme]
    netloc = host if port in (None, default_port) else f"{host}:{port}"
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    origin = urlunsplit((parts.scheme, netloc, "", "", ""))
    return PublicUrl(base=urlunsplit((parts.scheme, netloc, path, "", "")), origin=origin)


def _bad(text: str, problem: str) -> UserQuestionError:
    return UserQuestionError(
        f"--public-url {text!r} cannot be used: {problem}", ErrorCode.BAD_REQUEST
    )
