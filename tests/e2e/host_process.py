"""Helpers for the host's end-to-end tests: `uq serve` and asker processes as subprocesses.

`HostProcess` runs `uq serve` and reads the two lines it prints (the page's URL with the admin's
token, then `export UQ_URL=...` with the agents' asker token), so the tests also hold the CLI to
its output. `AskerProcess` runs `tests/e2e/asker_process.py`: another
Python process asking through `RemoteProvider`, printing one JSON line per settled request.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import signal
import socket
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def read_line(stream: IO[str] | IO[bytes], seconds: float) -> str:
    """The next line of a subprocess's output, or `TimeoutError` after `seconds`. A stream that
    reads ahead (text) may hold a second line where `select` cannot see it: read several lines
    from an unbuffered binary stream (`Popen(bufsize=0)`), which reads no further than asked."""
    ready, _, _ = select.select([stream], [], [], seconds)
    if not ready:
        raise TimeoutError(f"no output within {seconds} s")
    line = stream.readline()
    return line.decode() if isinstance(line, bytes) else line


@dataclass
class HostProcess:
    """`uq <command>` (serve or demo) in a subprocess; `start()` returns the URL it printed."""

    db: Path | None
    port: int = 0
    args: tuple[str, ...] = ()
    command: str = "serve"
    process: subprocess.Popen[bytes] | None = None
    url: str = ""
    """The page's URL with the admin's token (the first line)."""
    asker_url: str = ""
    """The agents' URL, with the host's asker token (the second line, `export UQ_URL=...`)."""
    env: dict[str, str] = field(default_factory=dict)
    rest_of_stdout: str = ""
    stderr: str | None = None
    verify: ssl.SSLContext | bool = True
    """How the helpers' HTTP requests verify an https host (its private CA's context)."""
    ca: Path | None = None
    """The private CA an https host's askers are given (`RemoteProvider(ca=)`)."""
    log: Path | None = None
    """Where its stderr goes while it runs, when a test reads it before the host stops."""
    wrapper: tuple[str, ...] = ()
    """A command that runs the host (`setpriv ... --`, to start it without some privilege)."""

    @property
    def base(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def token(self) -> str:
        return self.url.partition("?token=")[2]

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def asker_auth(self) -> dict[str, str]:
        """The agents' token's header: it can ask, never answer."""
        return {"Authorization": f"Bearer {self.asker_url.partition('?token=')[2]}"}

    def start(self) -> str:
        command = [*self.wrapper, sys.executable, "-m", "user_questions.cli", self.command]
        command += ["--port", str(self.port), *self.args]
        if self.db is not None:
            command += ["--store", str(self.db)]
        with contextlib.ExitStack() as files:  # the process keeps its own copy of the log's
            log = None if self.log is None else files.enter_context(self.log.open("a"))
            self.process = subprocess.Popen(
                command,
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if log is None else log,
                bufsize=0,  # unbuffered: each line is read from the pipe as it comes
                env={**os.environ, **self.env},
            )
        assert self.process.stdout is not None
        try:
            line = read_line(self.process.stdout, STARTUP_SECONDS).strip()
        except TimeoutError:
            line = ""
        if not line.startswith(("http://", "https://")):
            self.process.kill()
            _, stderr = self.process.communicate()
            shown = (stderr or b"").decode()
            raise AssertionError(f"uq {self.command} printed {line!r}, not a URL:\n{shown}")
        self.url = line
        export = read_line(self.process.stdout, STARTUP_SECONDS).strip()
        name, _, value = export.partition("=")
        assert name == "export UQ_URL", export
        (self.asker_url,) = shlex.split(value)
        return line

    def line(self, seconds: float = 15.0) -> str:
        """The next line the process prints after the URL."""
        assert self.process is not None
        assert self.process.stdout is not None
        return read_line(self.process.stdout, seconds).rstrip("\n")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send `sig` and wait; the exit status (negative: killed by that signal). What the
        process printed after the URL is kept in `rest_of_stdout` and `stderr`."""
        assert self.process is not None
        self.process.send_signal(sig)
        out, err = self.process.communicate(timeout=30)
        self.rest_of_stdout, self.stderr = out.decode(), None if err is None else err.decode()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, no goodbye."""
        self.stop(signal.SIGKILL)

    def pending(self) -> list[dict[str, Any]]:
        response = httpx.get(
            f"{self.base}/api/pending", headers=self.auth, timeout=10, verify=self.verify
        )
        response.raise_for_status()
        frames: list[dict[str, Any]] = response.json()["pending"]
        return frames

    def wait_pending(self, count: int, seconds: float = 20.0) -> list[dict[str, Any]]:
        """Poll `/api/pending` under a deadline until `count` requests are pending."""
        deadline = time.monotonic() + seconds
        while True:
            frames = self.pending()
            if len(frames) == count or time.monotonic() > deadline:
                assert len(frames) == count, frames
                return frames
            time.sleep(0.05)  # polling the host over HTTP; there is nothing to wait on

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        response = httpx.post(
            f"{self.base}/api/respond", json=body, headers=self.auth, timeout=10, verify=self.verify
        )
        response.raise_for_status()
        receipt: dict[str, Any] = response.json()
        return receipt

    async def page(self) -> ClientConnection:
        """A page's WebSocket, with the cookie and Origin a browser would send."""
        return await connect(
            self.base.replace("http", "ws", 1) + "/ws",
            additional_headers={"Origin": self.base, "Cookie": f"uq_token={self.token}"},
        )


def answer_body(rpc_id: str, session: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "client-response",
        "rpcId": rpc_id,
        "result": {"ok": True, "value": {"sessionId": session, "answer": {"answers": list(items)}}},
    }


@dataclass
class AskerProcess:
    """An agent in another process asking through `RemoteProvider` (see asker_process.py)."""

    url: str
    names: tuple[str, ...]
    session: str = "asker"
    timeout: float | None = None
    process: subprocess.Popen[str] = field(init=False)

    def __post_init__(self) -> None:
        command = [sys.executable, "-m", "tests.e2e.asker_process", self.url, self.session]
        if self.timeout is not None:
            command += ["--timeout", str(self.timeout)]
        self.process = subprocess.Popen(
            [*command, *self.names], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )

    def results(self, seconds: float = 60.0) -> dict[str, Any]:
        """Wait for the process to end; what each ask got (the answer, or the error code)."""
        out, _ = self.process.communicate(timeout=seconds)
        assert self.process.returncode == 0, out
        results: dict[str, Any] = {}
        for line in out.splitlines():
            item = json.loads(line)
            assert item["name"] not in results, f"{item['name']} ended twice"
            results[item["name"]] = item.get("answer", item.get("error"))
        return results

    def running(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        if self.running():
            self.process.kill()
        self.process.communicate(timeout=30)
