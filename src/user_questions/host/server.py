"""Running a host with uvicorn: bind, announce the URL, stop cleanly on Ctrl-C or SIGTERM.

`serve()` is what `uq serve` and `uq demo` run. The store is opened once before anything listens, so
a locked or foreign store and a bad token are one-line errors too, and the token is settled before
the URL is printed; so are the TLS certificate and key, the trusted proxies and the metrics address.
The sockets are bound before uvicorn starts, so a busy port is a one-line error rather than a log
record, and `--port 0` yields its real port. The URL is announced once the app has started (its
store is open and its pending requests are loaded), so whoever reads it can connect at once. A
signal stops the server gracefully (open sockets are closed, the app's lifespan ends, the store is
closed) and the process then exits normally.

With a certificate the host serves https and wss, and the URL says https. With a metrics
address (`metrics_bind`) a second socket serves `GET /metrics` without a token; one uvicorn
server serves both sockets, and each request goes to the app of the socket it arrived on.
uvicorn's own proxy-header handling is off: `--trust-proxy` (`host/gate/proxy.py`) decides whom to
believe.
"""

from __future__ import annotations

import contextlib
import gc
import ipaddress
import logging
import os
import shlex
import signal
import socket
import ssl
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

import anyio
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import MAX_FRAME_BYTES
from user_questions.host.app import create_app, create_metrics_app
from user_questions.host.config import HostConfig
from user_questions.host.endpoints.upgrade import HttpProtocol
from user_questions.host.endpoints.websocket import WebSocketProtocol
from user_questions.host.gate.public_url import PublicUrl, public_url
from user_questions.host.gate.tokens import agents_token, host_token
from user_questions.host.stores import open_store
from user_questions.host.telemetry import logs
from user_questions.host.telemetry.logs import LogFormat

__all__ = [
    "FULL_COLLECTION_AFTER",
    "GRACEFUL_SHUTDOWN",
    "bind",
    "bound_address",
    "host_url",
    "is_loopback",
    "run",
    "serve",
    "uvicorn_config",
]

logger = logging.getLogger("user_questions.host")

GRACEFUL_SHUTDOWN = 5
"""Seconds open connections get to finish when the host stops."""
FULL_COLLECTION_AFTER = 100
"""Collections of Python's middle generation before a full collection is considered (Python's
default: 10). A fleet of agents connecting at once adds long-lived objects by the hundred
thousand (their sockets, protocols, pending requests), and at the default each quarter of growth
brought a full collection over everything: most of the host's CPU while 10,000 askers connected
(docs/performance.md, "An asker's handshake parsed once"). Young objects are collected as often
as before, so the pauses a request can meet are no longer; cyclic garbage that outlived them
waits longer for its full collection."""


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (`127.0.0.0/8`, `::1`, `localhost`)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket bound to `host:port` (port 0 picks a free one).

    Raises:
        OSError: when the address is busy or cannot be bound.
    """
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except BaseException:
        sock.close()
        raise
    return sock


def host_url(sock: socket.socket, host: str, token: str, scheme: str = "http") -> str:
    """The URL people open: the bound address with the token."""
    port = sock.getsockname()[1]
    name = host.strip("[]")
    if ":" in name:
        name = f"[{name}]"
    return f"{scheme}://{name}:{port}/?token={token}"


def bound_address(sock: socket.socket, host: str, scheme: str = "http") -> PublicUrl:
    """The address of a host listening on `sock` (bound to `host`, serving `scheme`), as links
    name it: the machine's name for a wildcard address (`0.0.0.0`, `::`), else `host` itself."""
    name = host.strip("[]")
    if name in ("", "0.0.0.0", "::"):
        name = socket.gethostname()
    if ":" in name:
        name = f"[{name}]"
    return public_url(f"{scheme}://{name}:{sock.getsockname()[1]}/")


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, started: Callable[[], None]) -> None:
        super().__init__(config)
        self._started = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        # What the host made to start (its modules, the app, the pending requests it read)
        # lives as long as it does: out of the collector's sight, a full collection, which
        # stops the event loop, scans only what came since (tens of ms less, each time).
        gc.freeze()
        if self.started and not self.should_exit:
            self._started()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises the signal after its graceful shutdown, which would end the process
        # with a KeyboardInterrupt or a signal status; a host that stopped cleanly exits 0.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stops = (signal.SIGINT, signal.SIGTERM)
        previous = {number: signal.signal(number, self.handle_exit) for number in stops}
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)


def uvicorn_config(app: ASGIApp, *, log_format: LogFormat = LogFormat.HUMAN) -> uvicorn.Config:
    """How the host runs `app` under uvicorn (the tests serve the app with it too)."""
    return uvicorn.Config(
        app,
        # httptools (C, the `web` extra) parses and writes HTTP/1.1 in a third of h11's time: the
        # rules' quick path (`POST /api/decide`) is mostly parsing (docs/performance.md); a
        # WebSocket's upgrade request is handed over as httptools parsed it, not parsed again
        http=HttpProtocol,
        ws=WebSocketProtocol,  # uvicorn's websockets-sansio, reading a few frames ahead
        ws_max_size=MAX_FRAME_BYTES,
        ws_per_message_deflate=False,  # frames are small; compressing them costs more than it saves
        lifespan="on",
        log_level="warning",
        log_config=None if log_format == LogFormat.JSON else uvicorn.config.LOGGING_CONFIG,
        access_log=False,
        proxy_headers=False,  # whom to believe is `--trust-proxy`'s decision (`host/gate/proxy.py`)
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )


def run(
    app: ASGIApp,
    sockets: Sequence[socket.socket],
    *,
    started: Callable[[], None],
    tls: ssl.SSLContext | None = None,
    log_format: LogFormat = LogFormat.HUMAN,
) -> None:
    """Serve `app` on `sockets` until SIGINT or SIGTERM, over TLS with `tls`; `started` is
    called once it serves. With `LogFormat.JSON` uvicorn leaves the log as `logs.configure` set
    it up. The process's full collections are made rarer (`FULL_COLLECTION_AFTER`)."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_AFTER)
    config = uvicorn_config(app, log_format=log_format)
    config.load()
    config.ssl = tls
    _Server(config, started).run(sockets=list(sockets))


def serve(config: HostConfig, *, announce: Callable[[str], None] | None = None) -> None:
    """Run the host `config` describes until SIGINT or SIGTERM.

    `announce` gets the URL (with the admin's token) once the host serves; by default it is printed
    on stdout, followed by a second line for agents, `export UQ_URL=...` with the host's asker token
    (it can ask, never answer). It is the public URL people reach the host at, when the config has
    one (a reverse proxy or a tunnel in front), else the bound address, which the notifications'
    links name too. Binding beyond loopback prints a warning on stderr. The host's token and the
    config's `secrets` never appear in the log.

    Raises:
        UserQuestionError: `STORE_LOCKED`, `BAD_STORE`, before anything listens;
            `CANNOT_LISTEN` when an address cannot be bound.
    """
    secrets = [] if config.token is None else [config.token]
    if isinstance(config.store, str | os.PathLike):
        # Opened once before anything listens: a locked or foreign store is a one-line error,
        # and the tokens are kept before the URL is printed. (An open `Store` is the caller's.)
        secrets = list(anyio.run(_settle_tokens, config.store, config.token))
    sock = _listen(config.host, config.port, "--port")
    sockets = [sock]
    if config.metrics_at is not None:
        try:
            sockets.append(_listen(*config.metrics_at, "--metrics-bind"))
        except UserQuestionError:
            sock.close()
            raise
    scheme, public = config.scheme, config.public
    app = create_app(config, address=public or bound_address(sock, config.host, scheme))
    served: ASGIApp = app
    if config.metrics_at is not None:
        served = _by_listener(app, create_metrics_app(app), sockets[1])
    logs.configure(config.log_format, secrets=[*secrets, *config.secrets])
    _warn_if_reachable(config)

    def link(token: str) -> str:
        return (
            host_url(sock, config.host, token, scheme) if public is None else public.link("", token)
        )

    def started() -> None:
        url = link(app.state.token)
        if announce is not None:
            announce(url)
        else:
            _print_line(url)
            # What agents are given: a token that can ask and never answer.
            _print_line(f"export UQ_URL={shlex.quote(link(app.state.asker_token))}")
        listening = ", ".join(_where(one, scheme) for one in sockets)
        logger.info("serving %s on %s", url.partition("?")[0], listening)

    run(served, sockets, started=started, tls=config.tls, log_format=config.log_format)


def _warn_if_reachable(config: HostConfig) -> None:
    """A warning for each listener that other machines can reach."""
    warn = _print_warning if config.log_format == LogFormat.HUMAN else logger.warning
    if not is_loopback(config.host):
        advice = (
            ""
            if config.tls is not None
            else ", and plain http carries the token in clear: put TLS "
            "in front of it (a reverse proxy, or --tls-cert) or use an SSH tunnel instead"
        )
        warn(
            f"the host listens on {config.host}, so other machines can reach it. Anyone with "
            f"the token can read and answer every question{advice}."
        )
    if config.metrics_at is not None and not is_loopback(config.metrics_at[0]):
        warn(
            f"the metrics listen on {config.metrics_at[0]} without a token: other machines "
            "can read how many questions wait and how they end (never what they say)."
        )


def _listen(host: str, port: int, flag: str) -> socket.socket:
    try:
        return bind(host, port)
    except OSError as error:
        raise UserQuestionError(
            f"cannot listen on {host}:{port} ({error.strerror or error}); choose another {flag}",
            ErrorCode.CANNOT_LISTEN,
        ) from error


def _where(sock: socket.socket, scheme: str) -> str:
    host, port = sock.getsockname()[:2]
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}/"


def _by_listener(app: ASGIApp, metrics_app: ASGIApp, metrics_socket: socket.socket) -> ASGIApp:
    """`app`, but requests that arrive on `metrics_socket` go to `metrics_app`."""
    address = tuple(metrics_socket.getsockname()[:2])

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server")
        if scope["type"] != "lifespan" and server is not None and tuple(server) == address:
            await metrics_app(scope, receive, send)
        else:
            await app(scope, receive, send)

    return dispatch


async def _settle_tokens(store: str | os.PathLike[str], token: str | None) -> tuple[str, str]:
    """The host's start-up token and its agents' token, kept in the store."""
    async with open_store(store) as opened:
        return await host_token(opened, token), await agents_token(opened)


def _print_line(line: str) -> None:
    print(line, flush=True)


def _print_warning(text: str) -> None:
    print(f"warning: {text}", file=sys.stderr, flush=True)
