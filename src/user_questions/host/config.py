"""`HostConfig`: everything a host is started with, checked once, before anything listens.

`uq serve` parses its flags into one; a Python caller builds one directly. `serve(config)` runs
it and `create_app(config)` makes its app; neither checks again. Every value that cannot be used
is refused when the config is made, with the code `uq serve` exits on (`BAD_TOKEN`,
`BAD_REQUEST`, `BAD_NOTIFIER`), and what is read from a value (the public address, the trusted
proxies, the TLS context, the metrics address, the answer links' lifetime) is kept beside it.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from user_questions._host_link.tls import server_context
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.chat.bot_api import DEFAULT_API, check_bot_token
from user_questions.host.chat.slack_api import (
    DEFAULT_SLACK_API,
    check_slack_tokens,
    require_slack_extra,
)
from user_questions.host.gate.proxy import TrustedProxies, trusted_proxies
from user_questions.host.gate.public_url import PublicUrl, public_url
from user_questions.host.gate.tokens import check_token
from user_questions.host.hub import HostTask
from user_questions.host.notify.apprise import check_apprise_url
from user_questions.host.notify.assembly import Notifications
from user_questions.host.notify.command import command_argv
from user_questions.host.notify.links import lifetime
from user_questions.host.notify.webhook import check_secret, check_webhook
from user_questions.host.stores import Store
from user_questions.host.stores.retention import check_retain_days
from user_questions.host.telemetry.logs import LogFormat, url_secrets

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "HostConfig", "metrics_address"]

DEFAULT_HOST = "127.0.0.1"
"""Loopback: a host is reachable from this machine only unless told otherwise."""
DEFAULT_PORT = 8765


@dataclass(frozen=True, slots=True, kw_only=True)
class HostConfig:
    """How to start a host; made once, checked when made.

    Raises:
        UserQuestionError: `BAD_TOKEN` for a token, a Telegram bot token or Slack's tokens
            (both or neither); `BAD_REQUEST` for a retention, a public URL, trusted proxies, a
            certificate, a metrics address, a Bot API or a Slack Web API URL that cannot be used;
            `BAD_NOTIFIER` for a notification URL, webhook, command, secret or answer-link
            lifetime that cannot be used.
    """

    store: Store | str | os.PathLike[str]
    """A SQLite file, a store URL (`postgresql://...`), or an open `Store` to use as it is."""
    host: str = DEFAULT_HOST
    """The address to listen on; anything but loopback is reachable from other machines."""
    port: int = DEFAULT_PORT
    """The port to listen on; 0 picks a free one."""
    token: str | None = None
    """The start-up token; `None`: the stored one, or a new one (kept)."""
    retain_days: int | None = None
    """Delete the records of requests settled more than this many days ago; `None` keeps all."""
    audit_key: str | os.PathLike[str] | None = None
    """The key file that signs the audit log's checkpoints (made when missing); `None`: beside
    a SQLite store, none for PostgreSQL (docs/audit.md)."""
    public_url: str | None = None
    """The address people reach the host at through a reverse proxy or a tunnel."""
    trust_proxy: str | Sequence[str] | None = None
    """The proxies (addresses or networks) whose forwarding headers are believed."""
    tls_cert: str | os.PathLike[str] | None = None
    """Serve https and wss with this certificate chain (PEM), with `tls_key`."""
    tls_key: str | os.PathLike[str] | None = None
    metrics_bind: str | None = None
    """Also serve `GET /metrics` without a token on `ADDR:PORT` (a port alone: on loopback)."""
    log_format: LogFormat = LogFormat.HUMAN
    notify: Sequence[str] = ()
    """apprise URLs told of every question that becomes pending."""
    notify_settled: bool = False
    """Whether the `notify` services are told how each question ended too."""
    answer_links: str = "on"
    """The one-tap answer links of `notify` messages: `on`, `off`, or a lifetime (`12h`)."""
    notify_webhooks: Sequence[str] = ()
    notify_commands: Sequence[str] = ()
    notify_secret: str | None = None
    """The webhooks' signing secret; `None`: the stored one, or a new one (kept)."""
    push_private: bool = False
    """Web Push messages say only that a question is waiting; the worker fetches the card."""
    telegram: str | None = None
    """A Telegram bot's token (BotFather's): questions go to the paired people's chats."""
    telegram_api: str = DEFAULT_API
    """The Bot API server (a self-hosted one); methods are at `{telegram_api}/bot{token}/...`."""
    slack_app_token: str | None = None
    """A Slack app's app-level token (`xapp-...`, `connections:write`): Socket Mode."""
    slack_bot_token: str | None = None
    """The same app's bot token (`xoxb-...`): its messages. Both tokens or neither."""
    slack_api: str = DEFAULT_SLACK_API
    """Slack's Web API; methods are POSTed at `{slack_api}/{method}`."""
    a2a_push_private: bool = False
    """Let A2A askers register push webhooks on loopback and private addresses (refused by
    default: the host would POST wherever an asker says)."""
    tasks: Sequence[HostTask] = ()
    """Work run with the hub while the host serves, such as an in-process agent."""

    public: PublicUrl | None = field(init=False, compare=False)
    """`public_url`, read."""
    proxies: TrustedProxies | None = field(init=False, compare=False)
    """`trust_proxy`, read."""
    tls: ssl.SSLContext | None = field(init=False, compare=False)
    """The server's TLS context, from `tls_cert` and `tls_key`."""
    metrics_at: tuple[str, int] | None = field(init=False, compare=False)
    """`metrics_bind`, read."""
    notifications: Notifications = field(init=False, compare=False)
    """The notification flags, checked."""

    def __post_init__(self) -> None:
        if self.token is not None:
            check_token(self.token)
        if self.retain_days is not None:
            check_retain_days(self.retain_days)
        settle = object.__setattr__
        settle(self, "public", None if self.public_url is None else public_url(self.public_url))
        proxies = None if self.trust_proxy is None else trusted_proxies(self.trust_proxy)
        settle(self, "proxies", proxies)
        settle(self, "tls", _tls(self.tls_cert, self.tls_key))
        metrics_at = None if self.metrics_bind is None else metrics_address(self.metrics_bind)
        settle(self, "metrics_at", metrics_at)
        settle(self, "notifications", self._checked_notifications())
        if self.telegram is not None:
            check_bot_token(self.telegram)
            _check_api("--telegram-api", self.telegram_api, "the Bot API server's")
        check_slack_tokens(self.slack_app_token, self.slack_bot_token)
        if self.slack_app_token is not None:
            require_slack_extra()
            _check_api("--slack-api", self.slack_api, "Slack's Web API")

    def _checked_notifications(self) -> Notifications:
        if self.notify_secret is not None:
            check_secret(self.notify_secret)
        links_lifetime = lifetime(self.answer_links)
        for url in self.notify:
            check_apprise_url(url)
        for url in self.notify_webhooks:
            check_webhook(url)
        for command in self.notify_commands:
            command_argv(command)
        return Notifications(
            services=tuple(self.notify),
            settled=self.notify_settled,
            links_lifetime=links_lifetime,
            webhooks=tuple(self.notify_webhooks),
            commands=tuple(self.notify_commands),
            secret=self.notify_secret,
            push_private=self.push_private,
        )

    @property
    def scheme(self) -> str:
        """`https` with a certificate, else `http`."""
        return "http" if self.tls is None else "https"

    @property
    def secrets(self) -> list[str]:
        """What must never appear in the log beside the host's token: the webhook secret and
        the parts of notification URLs that may be secret (an apprise URL may carry a token in
        any part, its host included: `tgram://TOKEN/`)."""
        return [
            *([] if self.notify_secret is None else [self.notify_secret]),
            *([] if self.telegram is None else [self.telegram]),
            *([] if self.slack_app_token is None else [self.slack_app_token]),
            *([] if self.slack_bot_token is None else [self.slack_bot_token]),
            *(part for url in self.notify_webhooks for part in url_secrets(url)),
            *(part for url in self.notify for part in (*url_secrets(url), urlsplit(url).netloc)),
        ]


def metrics_address(text: str) -> tuple[str, int]:
    """Read `--metrics-bind`: `ADDR:PORT` (`[::1]:9464` for IPv6), or a port alone, on
    loopback.

    Raises:
        UserQuestionError: `BAD_REQUEST` saying what is wrong with it.
    """
    host, colon, port = text.strip().rpartition(":")
    if not colon:
        host, port = DEFAULT_HOST, text.strip()
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or int(port) > 65535:
        raise UserQuestionError(
            f"--metrics-bind {text!r} cannot be used: give ADDRESS:PORT, such as "
            "127.0.0.1:9464, or a port",
            ErrorCode.BAD_REQUEST,
        )
    return host, int(port)


def _check_api(flag: str, url: str, what: str) -> None:
    if urlsplit(url).scheme not in ("http", "https"):
        raise UserQuestionError(
            f"{flag} {url!r} cannot be used: give {what} http(s) URL", ErrorCode.BAD_REQUEST
        )


def _tls(
    cert: str | os.PathLike[str] | None, key: str | os.PathLike[str] | None
) -> ssl.SSLContext | None:
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise UserQuestionError(
            "give --tls-cert and --tls-key together (the certificate chain and its key)",
            ErrorCode.BAD_REQUEST,
        )
    return server_context(cert, key)
