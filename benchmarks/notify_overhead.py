"""What notifications cost an ask: the round trip with no notifier, and with receivers that are
fast, dead, or never answer.

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
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

import anyio

from user_questions import (
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    Context,
    UserQuestionService,
)
from user_questions.frames import ClientResponse
from user_questions.host.hub import Hub
from user_questions.host.notify import Notifier, notifying
from user_questions.host.notify_command import CommandNotifier
from user_questions.host.notify_webhook import WebhookNotifier
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
        ctx.user_questions.register_provider(hub.provider(session="bench"))
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


async def main(asks: int) -> None:
    def webhook(url: str | None) -> list[Notifier]:
        return [WebhookNotifier(str(url), secret=SECRET)]

    cases: list[tuple[str, Callable[[], AbstractContextManager[str | None]], Make]] = [
        ("no notifier", lambda: nullcontext(None), lambda url: []),
        ("webhook, fast receiver", fast_receiver, webhook),
        ("webhook, dead receiver", lambda: nullcontext(dead_url()), webhook),
        ("webhook, silent receiver", silent_receiver, webhook),
        ("command (true)", lambda: nullcontext(None), lambda url: [CommandNotifier("true")]),
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--asks", type=int, default=300)
    arguments = parser.parse_args()
    if arguments.asks < 2:
        sys.exit("--asks must be at least 2")
    logging.basicConfig(level=logging.ERROR)  # the drops at each case's end are counted above
    anyio.run(main, arguments.asks)
