"""Running a host with uvicorn: bind, announce the URL, stop cleanly on Ctrl-C or SIGTERM.

Level 8 (the top of `host/`): imports uvicorn, `app`, `hub`, `people`, `records`, `frames` and
`stores`. `serve()` is what `uq serve` and
`uq demo` run. The store is opened once before anything listens, so a locked or foreign store and
a bad token are one-line errors too, and the token is settled before the URL is printed. The
socket is bound before uvicorn starts, so a busy
port is a one-line error rather than a log record, and `--port 0` yields its real port. The URL
is announced once the app has started (its store is open and its pending requests are loaded),
so whoever reads it can connect at once. A signal stops the server gracefully (open sockets
are closed, the app's lifespan ends, the store is closed) and the process then exits normally.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

import anyio
import uvicorn
from starlette.applications import Starlette

from user_questions.errors import ErrorCode, UserQuestionError
from user_questions.frames import MAX_FRAME_BYTES
from user_questions.host.answer_links import AnswerLinks
from user_questions.host.app import create_app
from user_questions.host.hub import HostTask
from user_questions.host.people import check_token, host_token
from user_questions.host.public_url import PublicUrl
from user_questions.host.public_url import public_url as parse_public_url
from user_questions.host.records import check_retain_days
from user_questions.host.stores import open_store

__all__ = [
    "GRACEFUL_SHUTDOWN",
    "AddressedTasks",
    "bind",
    "bound_address",
    "host_url",
    "is_loopback",
    "run",
    "serve",
]

GRACEFUL_SHUTDOWN = 5
"""Seconds open connections get to finish when the host stops."""

AddressedTasks = Callable[[PublicUrl], Sequence[HostTask]]
"""Makes host tasks that link to the host (notifiers) from the address people reach it at."""


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


def host_url(sock: socket.socket, host: str, token: str) -> str:
    """The URL people open: the bound address with the token."""
    port = sock.getsockname()[1]
    name = host.strip("[]")
    if ":" in name:
        name = f"[{name}]"
    return f"http://{name}:{port}/?token={token}"


def bound_address(sock: socket.socket, host: str) -> PublicUrl:
    """The address of a host listening on `sock` (bound to `host`), as links name it: the
    machine's name for a wildcard address (`0.0.0.0`, `::`), else `host` itself."""
    name = host.strip("[]")
    if name in ("", "0.0.0.0", "::"):
        name = socket.gethostname()
    if ":" in name:
        name = f"[{name}]"
    return parse_public_url(f"http://{name}:{sock.getsockname()[1]}/")


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, started: Callable[[], None]) -> None:
        super().__init__(config)
        self._started = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
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


def run(app: Starlette, sock: socket.socket, *, started: Callable[[], None]) -> None:
    """Serve `app` on `sock` until SIGINT or SIGTERM; `started` is called once it serves."""
    config = uvicorn.Config(
        app,
        ws="websockets-sansio",
        ws_max_size=MAX_FRAME_BYTES,
        ws_per_message_deflate=False,  # frames are small; compressing them costs more than it saves
        lifespan="on",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )
    _Server(config, started).run(sockets=[sock])


def serve(
    store: str | os.PathLike[str],
    *,
    host: str,
    port: int,
    token: str | None = None,
    tasks: Sequence[HostTask] | AddressedTasks = (),
    announce: Callable[[str], None] | None = None,
    retain_days: int | None = None,
    public_url: str | None = None,
    answer_links: AnswerLinks | None = None,
) -> None:
    """Run a host on `store` at `host:port` until SIGINT or SIGTERM.

    `announce` gets the URL (with the token) once the host serves; by default it is printed as
    one line on stdout. It is the `public_url` people reach the host at, when given (a reverse
    proxy or a tunnel in front), else the bound address. Binding beyond loopback prints a warning
    on stderr. `retain_days` deletes the records of requests settled more than that many days ago
    (default: keep everything). `tasks` may be a function that makes them from the address
    people reach the host at (the public URL, else `bound_address`), called once it is bound;
    `answer_links` checks the answer links they send (`create_app`).

    Raises:
        UserQuestionError: `STORE_LOCKED`, `BAD_STORE` or `BAD_TOKEN`, `BAD_REQUEST` for a
            retention or a public URL that cannot be used, before anything listens;
            `CANNOT_LISTEN` when `host:port` cannot be bound.
    """
    if token is not None:
        check_token(token)
    if retain_days is not None:
        check_retain_days(retain_days)
    public = None if public_url is None else parse_public_url(public_url)
    token = anyio.run(_settle_token, store, token)
    try:
        sock = bind(host, port)
    except OSError as error:
        raise UserQuestionError(
            f"cannot listen on {host}:{port} ({error.strerror or error}); choose another --port",
            ErrorCode.CANNOT_LISTEN,
        ) from error
    if not is_loopback(host):
        print(
            f"warning: the host listens on {host}, so other machines can reach it. Anyone with "
            "the token can read and answer every question, and plain http carries the token in "
            "clear: put TLS in front of it (a reverse proxy) or use an SSH tunnel instead.",
            file=sys.stderr,
        )
    url = host_url(sock, host, token) if public is None else public.link("", token)
    show = announce or _print_line
    if callable(tasks):
        tasks = tasks(public or bound_address(sock, host))
    app = create_app(
        store,
        token=token,
        tasks=tasks,
        retain_days=retain_days,
        public_url=public_url,
        answer_links=answer_links,
    )
    run(app, sock, started=lambda: show(url))


async def _settle_token(store: str | os.PathLike[str], token: str | None) -> str:
    async with open_store(store) as opened:
        return await host_token(opened, token)


def _print_line(line: str) -> None:
    print(line, flush=True)
