"""A host's URL as `uq serve` prints it: its base, its asker endpoint, the token it carries.

Standard library only: every client of a host reads it (`RemoteProvider`, the `uq` commands,
`uq hook`'s quick path, which loads nothing else).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit, urlunsplit

from user_questions.errors import ErrorCode, UserQuestionError

__all__ = ["ASK_PATH", "parse_host_url"]

ASK_PATH = "ws/ask"
"""The asker endpoint, relative to the host's base URL."""


def parse_host_url(url: str) -> tuple[str, str, str]:
    """A host's base URL, its asker endpoint, and the token in its query (or `""`)."""
    parts = urlsplit(url)
    schemes = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
    if parts.scheme not in schemes or not parts.netloc:
        raise UserQuestionError(
            f"the host URL must start with http:// or https://, got {url!r}",
            ErrorCode.BAD_REQUEST,
        )
    base = parts.path if parts.path.endswith("/") else parts.path + "/"
    ws_url = urlunsplit((schemes[parts.scheme], parts.netloc, base + ASK_PATH, "", ""))
    token = parse_qs(parts.query).get("token", [""])[0]
    return urlunsplit((parts.scheme, parts.netloc, base, "", "")), ws_url, token
