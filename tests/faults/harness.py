"""What the fault tests share: a monitor of `/healthz` in a process of its own, askers and a page
speaking the host's protocols by hand (so that every refusal's code is seen: `RemoteProvider` waits
them out), a disk to fill, and the host's log.

Every wait is bounded: a broken host fails the test, it never hangs it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.e2e.host_process import ROOT, HostProcess, read_line

HEALTH_LIMIT = 0.1
"""Seconds `GET /healthz` may take, throughout every fault (the issue's bound)."""
STRAY_SHARE = 0.05
"""The share of probes (two at least) that may take longer than `HEALTH_LIMIT` (never longer
than `STRAY_LIMIT`): the machine is shared, and one probe can wait for a core for a few hundred
milliseconds. A host that waits on its disk shows as every probe of the stall failing, and
seconds, not as a stray probe."""
STRAY_LIMIT = 1.0
SESSION = "faults"


def question(name: str, detail: str | None = None) -> dict[str, Any]:
    """One question with options `yes` and `no`, and an optional detail (to fill a disk)."""
    item: dict[str, Any] = {
        "id": name,
        "question": f"Go ahead with {name}?",
        "options": [{"label": "yes"}, {"label": "no"}],
    }
    if detail is not None:
        item["detail"] = detail
    return item


def ask_frame(rpc_id: str, detail: str | None = None) -> str:
    frame = {"type": "ask", "rpcId": rpc_id, "sessionId": SESSION}
    return json.dumps({**frame, "questions": [question(rpc_id, detail)]})


def answer_frame(rpc_id: str, question_id: str) -> str:
    answer = {"answers": [{"id": question_id, "selected": ["yes"]}]}
    result = {"ok": True, "value": {"sessionId": SESSION, "answer": answer}}
    return json.dumps({"type": "client-response", "rpcId": rpc_id, "result": result})


class Health:
    """`tests/faults/probe.py` watching a host's `/healthz` until `stop()`."""

    def __init__(self, base: str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.faults.probe", base],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.samples: list[tuple[float, float, bool]] = []
        assert self._process.stdout is not None
        assert read_line(self._process.stdout, 30).strip() == "probing"

    def stop(self) -> list[tuple[float, float, bool]]:
        """End the probes; each as `(began, seconds, ok)`."""
        out, _ = self._process.communicate("", timeout=30)  # after the `probing` line
        self.samples = [(began, seconds, ok) for began, seconds, ok in json.loads(out)]
        return self.samples

    def durations(self, outside: tuple[float, float] | None = None) -> list[float]:
        """Each probe's duration (a failed one's is infinite), leaving out the probes that
        began within `outside` (a window in which the test stopped the host)."""
        kept = [
            (seconds if ok else float("inf"))
            for began, seconds, ok in self.samples
            if outside is None or not outside[0] - STRAY_LIMIT <= began <= outside[1]
        ]
        assert len(kept) > 10, "the probe hardly ran"
        return kept

    def report(self, outside: tuple[float, float] | None = None) -> str:
        durations = self.durations(outside)
        late = sum(duration > HEALTH_LIMIT for duration in durations)
        slowest = max(durations)
        return f"/healthz: {len(durations)} probes, {late} over 100 ms, slowest {slowest:.3f} s"

    def check(self, outside: tuple[float, float] | None = None) -> None:
        """`/healthz` answered within `HEALTH_LIMIT` throughout (`STRAY_SHARE`)."""
        durations = self.durations(outside)
        late = [duration for duration in durations if duration > HEALTH_LIMIT]
        assert len(late) <= max(2, STRAY_SHARE * len(durations)), self.report(outside)
        assert max(durations) < STRAY_LIMIT, self.report(outside)


@contextlib.contextmanager
def health(base: str) -> Any:
    monitor = Health(base)
    try:
        yield monitor
    finally:
        if monitor._process.poll() is None:
            monitor.stop()


async def readiness(host: HostProcess) -> tuple[int, str | None]:
    """`GET /readyz`: its status and, when not ready, its code."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(f"{host.base}/readyz")
    code = None if response.status_code == 200 else response.json()["error"]["code"]
    return response.status_code, code


async def until_ready(host: HostProcess, status: int, seconds: float) -> float:
    """Poll `/readyz` until it answers `status`; how long that took."""
    began = time.monotonic()
    with anyio.fail_after(seconds):
        while (await readiness(host))[0] != status:  # noqa: ASYNC110 - a host over HTTP
            await anyio.sleep(0.05)  # polling the probe, as a load balancer would
    return time.monotonic() - began


@dataclass(eq=False)
class Asker:
    """An asker on `/ws/ask`, spoken by hand: `ask` returns the host's reply to one ask, and
    every `ask/settled` pushed later is kept in `settled`, by rpcId, as many as arrived."""

    host: HostProcess
    ws: ClientConnection | None = None
    settled: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    acked: list[str] = field(default_factory=list)
    """The asks the host answered `ask/pending`: each must get exactly one `ask/settled`."""
    _waiting: dict[str, Any] = field(default_factory=dict)

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Asker]:
        url = self.host.base.replace("http", "ws", 1) + "/ws/ask"
        async with (
            connect(url, additional_headers=self.host.auth, max_size=None) as self.ws,
            anyio.create_task_group() as readers,
        ):
            readers.start_soon(self._read)
            yield self
            readers.cancel_scope.cancel()

    async def ask(self, rpc_id: str, detail: str | None = None) -> dict[str, Any]:
        """The reply to one ask (`ask/pending`, `ask/settled` or `ask/error`, as a payload)."""
        assert self.ws is not None
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](1)
        with send, receive:
            self._waiting[rpc_id] = send
            await self.ws.send(ask_frame(rpc_id, detail))
            with anyio.fail_after(30):
                reply = await receive.receive()
        if reply["type"] == "ask/pending":
            self.acked.append(rpc_id)
        return reply

    async def all_settled(self, rpc_ids: Iterable[str], seconds: float = 30) -> None:
        """Wait until each of `rpc_ids` has had its `ask/settled` pushed."""
        with anyio.fail_after(seconds):
            while not all(rpc_id in self.settled for rpc_id in rpc_ids):  # noqa: ASYNC110
                await anyio.sleep(0.05)  # frames the reader keeps: nothing to wait on

    async def _read(self) -> None:
        assert self.ws is not None
        with contextlib.suppress(ConnectionClosed):
            async for message in self.ws:
                frame = json.loads(message)
                rpc_id, payload = frame.get("rpcId"), frame["payload"]
                waiting = self._waiting.pop(rpc_id, None)
                if waiting is not None:
                    with contextlib.suppress(anyio.BrokenResourceError):  # it gave up
                        waiting.send_nowait(payload)
                elif payload["type"] == "ask/settled":
                    self.settled.setdefault(rpc_id, []).append(payload)


@dataclass(eq=False)
class Page:
    """A page on `/ws` answering every request it is shown with `yes`, one at a time; after an
    `error` frame (nothing was settled) it answers that request again, as a person would. It
    reconnects when its connection drops. `accepted` holds the rpcIds whose answer won, `errors`
    the codes of the error frames it got."""

    host: HostProcess
    accepted: list[str] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    connections: int = 0
    go: anyio.Event = field(default_factory=anyio.Event)
    """Set when the person starts answering (at once, unless the test clears it first)."""
    _queue: dict[str, str] = field(default_factory=dict)
    """The requests to answer: the id of each one's question, by rpcId."""
    _replies: Any = None

    @contextlib.asynccontextmanager
    async def running(self, *, answering: bool = True) -> AsyncIterator[Page]:
        if answering:
            self.go.set()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._run)
            yield self
            tasks.cancel_scope.cancel()

    async def _run(self) -> None:
        url = self.host.base.replace("http", "ws", 1) + "/ws"
        headers = {"Origin": self.host.base, "Cookie": f"uq_token={self.host.token}"}
        while True:
            with contextlib.suppress(OSError, ConnectionClosed, TimeoutError):
                async with connect(url, additional_headers=headers, open_timeout=5) as ws:
                    self.connections += 1
                    self._queue.clear()  # the replay brings every pending request again
                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(self._answer, ws)
                        await self._read(ws)
                        tasks.cancel_scope.cancel()
            await anyio.sleep(0.2)  # the host went away: come back, as the page does

    async def _read(self, ws: ClientConnection) -> None:
        send, self._replies = anyio.create_memory_object_stream[dict[str, Any]](100)
        with send, self._replies, contextlib.suppress(ConnectionClosed):
            async for message in ws:
                frame = json.loads(message)
                payload = frame["payload"]
                kind = payload["type"]
                if kind == "question/requested":
                    self._queue[frame["rpcId"]] = payload["questions"][0]["id"]
                elif kind == "question/resolved":
                    self._queue.pop(payload["questionRpcId"], None)
                elif kind in ("client-response/receipt", "error"):
                    send.send_nowait(frame)

    async def _answer(self, ws: ClientConnection) -> None:
        await self.go.wait()
        with contextlib.suppress(ConnectionClosed, TimeoutError):
            while True:
                if not self._queue:
                    await anyio.sleep(0.01)
                    continue
                rpc_id, question_id = next(iter(self._queue.items()))
                await ws.send(answer_frame(rpc_id, question_id))
                with anyio.fail_after(30):
                    reply = await self._replies.receive()
                payload = reply["payload"]
                if payload["type"] == "error":
                    self.errors[payload["code"]] += 1
                    await anyio.sleep(0.2)  # the person tries again in a moment
                    continue
                self._queue.pop(rpc_id, None)
                if payload["accepted"]:
                    self.accepted.append(rpc_id)
        await ws.close()  # no reply: the host went away; the page connects again


def fill(folder: Path) -> Path:
    """A file taking every byte left on `folder`'s file system; delete it to free them."""
    filler = folder / "filler"
    chunk = b"\0" * (256 * 1024)
    # Unbuffered: a buffered file keeps what ENOSPC left unwritten and raises it again on close.
    with filler.open("wb", buffering=0) as out:
        with contextlib.suppress(OSError):  # ENOSPC: full
            while True:
                out.write(chunk)
                out.flush()
        with contextlib.suppress(OSError):
            os.fsync(out.fileno())
    return filler


def fault_lines(log: Path) -> list[str]:
    """The lines in which the host said a fault of its store started or cleared."""
    return [line for line in log.read_text().splitlines() if "store fault" in line]


def tracebacks(log: Path) -> int:
    return log.read_text().count("Traceback")


async def page_pongs(host: HostProcess, rtts: list[float], stop: anyio.Event) -> None:
    """A page that only pings, every 0.2 s until `stop`: how long each pong took (is the page
    live?)."""
    url = host.base.replace("http", "ws", 1) + "/ws"
    headers = {"Origin": host.base, "Cookie": f"uq_token={host.token}"}
    async with connect(url, additional_headers=headers) as ws:
        while not stop.is_set():
            began = time.monotonic()
            await ws.send('{"type": "ping"}')
            with anyio.fail_after(30):
                while json.loads(await ws.recv())["payload"]["type"] != "pong":
                    pass  # the replay and the pushed requests
            rtts.append(time.monotonic() - began)
            await anyio.sleep(0.2)
