"""What notifications cost an ask, and how soon a person hears of one: the round trip with no
notifier and with receivers that are fast, dead, or never answer; then the ask-to-notification
latency of `--notify` (apprise) messages.

Run: `.venv/bin/python benchmarks/notify_overhead.py [--asks N]`. Each case runs a hub over a
fresh SQLite store (WAL, synchronous=FULL: each ask commits twice), an agent asking through the
host's in-process provider and a page answering at once, N asks one after the other. It prints
p50 / p99 of the ask's round trip in milliseconds, the ratio of p50 to the case without
notifiers, and what the notifier did (delivered, failed, and dropped: the queue was full, or the
host stopped with events still queued). The fast receiver is the documented one
(docs/examples/webhook_receiver.py) in a process of its own, as a real receiver would be.

What to expect: an ask never waits for a receiver, so a dead or silent one stays near the
no-notifier case; a receiver that works costs the host CPU for each delivery (an HTTP POST, a
process for a command), which the asks share in this tight loop of two events per few ms.

The latency part asks one question at a time through the same hub with an `AppriseNotifier`
(with answer links) whose service is a receiver on loopback (apprise's `json://` and `ntfy://`
plugins posting to a threaded HTTP server), and times each ask from `ask()` to the moment the
receiver has read the message; the page answers once the message is in. apprise spaces the
messages to one service as it judges the service wants (`request_rate_per_sec`: none for
`json://`, 5.5 s for ntfy and most others), so for such a service the asks are that far apart
and each message is the first of its burst. Target: p99 under 100 ms on loopback (a real service
adds its own network and push delay on top).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import anyio

from user_questions import (
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    UserQuestionService,
)
from user_questions.frames import ClientResponse
from user_questions.host.gate.public_url import public_url
from user_questions.host.hub import Hub
from user_questions.host.in_process import HostProvider
from user_questions.host.notify.apprise import AppriseNotifier, check_apprise_url
from user_questions.host.notify.command import CommandNotifier
from user_questions.host.notify.links import AnswerLinks
from user_questions.host.notify.notifier import Notifier, notifying
from user_questions.host.notify.webhook import WebhookNotifier
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Surface

SECRET = "benchmark-secret-0123456789"
EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "webhook_receiver.py"
QUESTION = AskUserQuestionItem(
    id="go",
    question="Go ahead?",
    options=[AskUserQuestionOption(label="yes"), AskUserQuestionOption(label="no")],
)


Make = Callable[[str | None], list[Notifier]]


async def round_trips(folder: Path, notifiers: list[Notifier], asks: int) -> list[float]:
    """Seconds per ask, from `ask()` to the answer, with `notifiers` listening."""
    async with (
        SQLiteStore(folder / "host.db") as store,
        Hub(store) as hub,
        anyio.create_task_group() as group,
    ):
        group.start_soon(notifying(notifiers), hub)
        ctx = Context()
        ctx.plugin(UserQuestionService)
        ctx.user_questions.register_provider(HostProvider(hub, "bench"))
        page = hub.subscribe()

        async def answer_everything() -> None:
            async for text in page.frames:
                frame = json.loads(text)
                if frame["payload"]["type"] == "question/requested":
                    await hub.respond(_answer(frame["rpcId"]), via=Surface.WEB)

        group.start_soon(answer_everything)
        times = []
        for _ in range(asks):
            started = time.perf_counter()
            await ctx.user_questions.ask(AskUserQuestionRequest([QUESTION]))
            times.append(time.perf_counter() - started)
        page.close()
        group.cancel_scope.cancel()
    return times


def _answer(rpc_id: str) -> ClientResponse:
    return ClientResponse.model_validate(
        {
            "type": "client-response",
            "rpcId": rpc_id,
            "result": {
                "ok": True,
                "value": {
                    "sessionId": "bench",
                    "answer": {"answers": [{"id": "go", "selected": ["yes"]}]},
                },
            },
        }
    )


@contextmanager
def fast_receiver() -> Iterator[str]:
    """docs/examples/webhook_receiver.py in its own process: it checks each signature, 204."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE), str(port)],
        stdout=subprocess.DEVNULL,
        env={**os.environ, "UQ_NOTIFY_SECRET": SECRET},
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/hook"
    finally:
        process.kill()
        process.wait()


@contextmanager
def silent_receiver() -> Iterator[str]:
    """A port that takes connections into its backlog and never answers them."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1024)
        yield f"http://127.0.0.1:{silent.getsockname()[1]}/hook"


def dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/hook"


class _Arrivals(BaseHTTPRequestHandler):
    """Records when each message arrived, by the rpcId of its question link."""

    arrived: ClassVar[dict[str, float]] = {}
    changed: ClassVar[threading.Condition] = threading.Condition()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        now = time.perf_counter()
        rpc_id = json.loads(body)["message"].rpartition("/q/")[2].strip()
        with self.changed:
            self.arrived[rpc_id] = now
            self.changed.notify_all()
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        pass


def _arrival(rpc_id: str) -> float:
    with _Arrivals.changed:
        if not _Arrivals.changed.wait_for(lambda: rpc_id in _Arrivals.arrived, 30):
            raise TimeoutError(f"no message for {rpc_id}")
        return _Arrivals.arrived.pop(rpc_id)


async def notification_latency(folder: Path, url: str, asks: int, pause: float) -> list[float]:
    """Seconds from `ask()` to the message at the receiver, one ask at a time, `pause` apart."""
    address = public_url("http://127.0.0.1:8765/")
    notifier = AppriseNotifier(url, address=address, links=AnswerLinks(SECRET))
    async with (
        SQLiteStore(folder / "host.db") as store,
        Hub(store) as hub,
        anyio.create_task_group() as group,
    ):
        group.start_soon(notifying([notifier]), hub)
        ctx = Context()
        ctx.plugin(UserQuestionService)
        ctx.user_questions.register_provider(HostProvider(hub, "bench"))
        page = hub.subscribe()
        latencies: list[float] = []

        async def answer_once_notified() -> None:
            async for text in page.frames:
                frame = json.loads(text)
                if frame["payload"]["type"] == "question/requested":
                    arrived = await anyio.to_thread.run_sync(_arrival, frame["rpcId"])
                    latencies.append(arrived)
                    await hub.respond(_answer(frame["rpcId"]), via=Surface.WEB)

        group.start_soon(answer_once_notified)
        for _ in range(asks):
            started = time.perf_counter()
            await ctx.user_questions.ask(AskUserQuestionRequest([QUESTION]))
            latencies[-1] -= started
            await anyio.sleep(pause)
        group.cancel_scope.cancel()
        page.close()
    return latencies


async def latency(asks: int) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Arrivals)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    netloc = f"127.0.0.1:{server.server_address[1]}"
    print("\nfrom ask() to the message at the receiver, one ask at a time, in ms")
    print(f"{'service':<18} {'asks':>5} {'spacing':>8} {'p50':>7} {'p99':>7} {'max':>7}")
    try:
        for name, url in (
            ("apprise json://", f"json://{netloc}/hook"),
            ("apprise ntfy://", f"ntfy://{netloc}/uq"),
        ):
            spacing = float(check_apprise_url(url)[0].request_rate_per_sec)
            pause = spacing + 0.2 if spacing else 0.0
            count = asks if pause == 0 else 5
            with tempfile.TemporaryDirectory() as folder:
                times = await notification_latency(Path(folder), url, count, pause)
            p50 = statistics.median(times) * 1000
            p99 = statistics.quantiles(times, n=100, method="inclusive")[98] * 1000
            print(
                f"{name:<18} {count:>5} {spacing:>7.1f}s {p50:7.2f} {p99:7.2f} "
                f"{max(times) * 1000:7.2f}",
                flush=True,
            )
    finally:
        server.shutdown()
        server.server_close()


async def main(asks: int) -> None:
    def webhook(url: str | None) -> list[Notifier]:
        return [WebhookNotifier(str(url), secret=SECRET)]

    def apprise(url: str | None) -> list[Notifier]:
        service = str(url).replace("http://", "json://")
        return [AppriseNotifier(service, address=public_url("http://127.0.0.1:8765/"))]

    cases: list[tuple[str, Callable[[], AbstractContextManager[str | None]], Make]] = [
        ("no notifier", lambda: nullcontext(None), lambda url: []),
        ("webhook, fast receiver", fast_receiver, webhook),
        ("webhook, dead receiver", lambda: nullcontext(dead_url()), webhook),
        ("webhook, silent receiver", silent_receiver, webhook),
        ("command (true)", lambda: nullcontext(None), lambda url: [CommandNotifier("true")]),
        ("apprise, dead service", lambda: nullcontext(dead_url()), apprise),
    ]
    baseline = 0.0
    print(f"{asks} asks per case, one at a time; round trip of ask() in ms")
    print(f"{'case':<26} {'p50':>7} {'p99':>7} {'ratio':>6}  notifier")
    for name, target, make in cases:
        with tempfile.TemporaryDirectory() as folder, target() as url:
            notifiers = make(url)
            times = await round_trips(Path(folder), notifiers, asks)
        p50 = statistics.median(times) * 1000
        p99 = statistics.quantiles(times, n=100)[98] * 1000
        baseline = baseline or p50
        state = ", ".join(
            f"delivered {n.delivered} failed {n.failed} dropped {n.dropped}" for n in notifiers
        )
        print(f"{name:<26} {p50:7.2f} {p99:7.2f} {p50 / baseline:6.2f}  {state or '-'}", flush=True)
    await latency(min(asks, 200))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--asks", type=int, default=300)
    arguments = parser.parse_args()
    if arguments.asks < 2:
        sys.exit("--asks must be at least 2")
    logging.basicConfig(level=logging.ERROR)  # the drops at each case's end are counted above
    anyio.run(main, arguments.asks)
