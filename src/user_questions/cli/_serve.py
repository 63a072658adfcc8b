"""`uq serve`: run the host, the web page where people answer the questions agents ask.

Prints two lines on stdout once the host serves: the page's URL with the admin's token (open it,
keep it to yourself), then `export UQ_URL=...` with the asker token for agents (it can ask, never
answer); errors are one line on stderr. Exit statuses: 0 stopped (Ctrl-C, SIGTERM), 1 could not
start (store in use, address busy), 2 bad input (a token, store or notify flag that cannot be used).
"""

from __future__ import annotations

import sys
from typing import Annotated, NoReturn

import anyio
from cyclopts import Parameter

from user_questions.cli._store_option import OldDb, StoreOption, chosen_store
from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.host.chat.bot_api import DEFAULT_API
from user_questions.host.chat.slack_api import DEFAULT_SLACK_API
from user_questions.host.config import HostConfig
from user_questions.host.notify.webhook import check_secret, webhook_secret
from user_questions.host.server import serve as run_host
from user_questions.host.stores import default_store_path, open_store
from user_questions.host.telemetry.logs import LogFormat

__all__ = ["fail", "serve", "stored_secret"]

_BAD_INPUT = frozenset(
    {ErrorCode.BAD_TOKEN, ErrorCode.BAD_STORE, ErrorCode.BAD_REQUEST, ErrorCode.BAD_NOTIFIER}
)


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    store: StoreOption = None,
    db: OldDb = None,
    token: Annotated[str | None, Parameter(env_var="UQ_TOKEN")] = None,
    retain_days: int | None = None,
    audit_key: Annotated[str | None, Parameter(env_var="UQ_AUDIT_KEY")] = None,
    public_url: Annotated[str | None, Parameter(env_var="UQ_PUBLIC_URL")] = None,
    trust_proxy: Annotated[str | None, Parameter(env_var="UQ_TRUST_PROXY")] = None,
    tls_cert: Annotated[str | None, Parameter(env_var="UQ_TLS_CERT")] = None,
    tls_key: Annotated[str | None, Parameter(env_var="UQ_TLS_KEY")] = None,
    metrics_bind: Annotated[str | None, Parameter(env_var="UQ_METRICS_BIND")] = None,
    log_format: Annotated[LogFormat, Parameter(env_var="UQ_LOG_FORMAT")] = LogFormat.HUMAN,
    notify: Annotated[list[str] | None, Parameter(env_var="UQ_NOTIFY", negative="")] = None,
    notify_settled: Annotated[bool, Parameter(negative="")] = False,
    answer_links: str = "on",
    notify_webhook: Annotated[list[str] | None, Parameter(negative="")] = None,
    notify_command: Annotated[list[str] | None, Parameter(negative="")] = None,
    notify_secret: Annotated[str | None, Parameter(env_var="UQ_NOTIFY_SECRET")] = None,
    print_notify_secret: Annotated[bool, Parameter(negative="")] = False,
    push_private: Annotated[bool, Parameter(negative="")] = False,
    telegram: Annotated[str | None, Parameter(env_var="UQ_TELEGRAM_TOKEN")] = None,
    telegram_api: Annotated[str, Parameter(env_var="UQ_TELEGRAM_API")] = DEFAULT_API,
    slack_app_token: Annotated[str | None, Parameter(env_var="UQ_SLACK_APP_TOKEN")] = None,
    slack_bot_token: Annotated[str | None, Parameter(env_var="UQ_SLACK_BOT_TOKEN")] = None,
    slack_api: Annotated[str, Parameter(env_var="UQ_SLACK_API")] = DEFAULT_SLACK_API,
    a2a_push_private: Annotated[bool, Parameter(negative="")] = False,
) -> None:
    """Run the host: a web page where people answer the questions agents ask.

    Parameters
    ----------
    host
        Address to listen on. Loopback by default; any other address is reachable from other
        machines (a warning says so).
    port
        Port to listen on; 0 picks a free one (the printed URL has it).
    token
        The secret every browser and asker must present; kept in the store. Default: the stored
        one, or a new random one.
    public_url
        The address people reach the host at, when a reverse proxy or a tunnel is in front of
        it (https://uq.example.com/): printed instead of the listening address, accepted as the
        page's origin, and used in every link the host sends.
    trust_proxy
        The reverse proxies (IP addresses or networks, comma-separated: 127.0.0.1,10.0.0.0/8)
        whose Forwarded / X-Forwarded-For, -Proto and -Host headers say who the client is.
        Default: nobody's.
    tls_cert
        Serve https and wss with this certificate chain (PEM, the server's certificate first).
    tls_key
        The private key of --tls-cert (PEM, without a passphrase).
    metrics_bind
        Also serve GET /metrics, without a token, on this ADDRESS:PORT (a port alone: on
        loopback), for a monitoring system. /metrics on the host's own address needs the token.
    log_format
        human (the default) or json: one JSON object per line on stderr, with a line per
        request and WebSocket and their ids; never a token.
    retain_days
        Delete the records of questions settled more than this many days ago (checked hourly;
        pending questions are never deleted). Default: keep every record. Their audit
        records go too, after a checkpoint signed with the audit key says so (docs/audit.md).
    audit_key
        The file of the Ed25519 key that signs the audit log's checkpoints, made when missing
        (0600, its public key beside it as FILE.pub). Default: STORE.audit-key beside a SQLite
        store; a PostgreSQL store needs one, the same file on every node.
    notify
        Send every question that becomes pending to this apprise URL (ntfy://, slack://,
        tgram://, discord://, msteams://, matrix://, mailto://, ...), with a link to it and
        one-tap answer links; repeat for several. UQ_NOTIFY holds URLs separated by spaces, to
        keep their secrets off the command line.
    notify_settled
        Also tell the --notify services how each question ended.
    answer_links
        The one-tap answer links of --notify messages: on (they work 24 hours), off, or how
        long they work, such as 30m, 12h or 7d (at most 30d).
    notify_webhook
        POST every question that becomes pending or settles, as signed JSON, to this URL;
        repeat for several. Never delays an ask (retried, then dropped with a log line).
    notify_command
        Run this command line (split like a shell would, but run without one) for every such
        event, with the event's JSON on its stdin; repeat for several.
    notify_secret
        The secret webhooks are signed with (HMAC-SHA256, X-UQ-Signature); kept in the store.
        Default: the stored one, or a new random one.
    print_notify_secret
        Print the webhook secret (the stored one, or a new one, kept) and exit.
    push_private
        Web Push notifications carry no question: the push says only that one is waiting, and
        the installed inbox fetches it from the host before showing it.
    telegram
        A Telegram bot's token (from BotFather): every question is sent to the chats of the
        people paired with uq chat pair telegram NAME, answered with a tap. UQ_TELEGRAM_TOKEN
        keeps it off the command line.
    telegram_api
        The Bot API server, for a self-hosted one. Default: https://api.telegram.org.
    slack_app_token
        A Slack app's app-level token (xapp-..., scope connections:write), for Socket Mode:
        with --slack-bot-token, every question is sent to the direct messages of the people
        paired with uq chat pair slack NAME, answered with a click. UQ_SLACK_APP_TOKEN keeps
        it off the command line.
    slack_bot_token
        The same Slack app's bot token (xoxb-...). UQ_SLACK_BOT_TOKEN keeps it off the
        command line.
    slack_api
        Slack's Web API. Default: https://slack.com/api.
    a2a_push_private
        Let A2A clients register push webhooks on loopback and private addresses (on this
        machine or its network); without it, the host POSTs only to public addresses.
    """
    store = chosen_store("serve", store, db) or str(default_store_path())
    try:
        if print_notify_secret:
            print(anyio.run(stored_secret, store, notify_secret), flush=True)
            return
        config = HostConfig(
            store=store,
            host=host,
            port=port,
            token=token,
            retain_days=retain_days,
            audit_key=audit_key,
            public_url=public_url,
            trust_proxy=trust_proxy,
            tls_cert=tls_cert,
            tls_key=tls_key,
            metrics_bind=metrics_bind,
            log_format=log_format,
            notify=notify or (),
            notify_settled=notify_settled,
            answer_links=answer_links,
            notify_webhooks=notify_webhook or (),
            notify_commands=notify_command or (),
            notify_secret=notify_secret,
            push_private=push_private,
            telegram=telegram,
            telegram_api=telegram_api,
            slack_app_token=slack_app_token,
            slack_bot_token=slack_bot_token,
            slack_api=slack_api,
            a2a_push_private=a2a_push_private,
        )
        run_host(config)
    except UserQuestionError as error:
        fail("serve", error.message, 2 if error.code in _BAD_INPUT else 1)


async def stored_secret(store: str, given: str | None) -> str:
    """The webhook secret of `store`: `given` (then kept), the stored one, or a new one (kept)."""
    if given is not None:
        check_secret(given)
    async with open_store(store) as opened:
        return await webhook_secret(opened, given)


def fail(command: str, message: str, status: int) -> NoReturn:
    """Print `uq <command>: <message>` on stderr and exit with `status`."""
    print(f"uq {command}: {message}", file=sys.stderr)
    raise SystemExit(status)
