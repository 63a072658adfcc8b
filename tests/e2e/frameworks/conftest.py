"""A real `uq serve` for the framework adapters, and a person answering it as a page would.

The agents (a LangGraph graph, a Pydantic AI agent, an Agents SDK agent, each with its own test
model) run in the test's event loop and ask through `connect(host.url)`; the person is this
module's `Person`, which reads `/api/pending` and answers through `POST /api/respond`, the same
client-response a page sends.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.e2e.host_process import HostProcess, answer_body

WAIT_SECONDS = 20.0


@pytest.fixture(scope="package")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    running = HostProcess(Path(tmp_path_factory.mktemp("host")) / "uq.db")
    running.start()
    yield running
    assert running.stop() == 0


@pytest.fixture
def session(request: pytest.FixtureRequest) -> str:
    """A session no other test uses, so each test finds its own questions."""
    return f"{request.node.name.removeprefix('test_')[:40]}-{secrets.token_hex(3)}"


@dataclass
class Person:
    """Someone answering one session's questions on the host."""

    host: HostProcess
    session: str

    async def pending(self, count: int = 1) -> list[dict[str, Any]]:
        """Wait until `count` requests of the session are pending; their frames, oldest first."""
        with anyio.fail_after(WAIT_SECONDS):
            while True:
                frames = [
                    frame
                    for frame in await anyio.to_thread.run_sync(self.host.pending)
                    if frame["payload"]["sessionId"] == self.session
                ]
                if len(frames) >= count:
                    assert len(frames) == count, frames
                    return frames
                await anyio.sleep(0.05)  # polling the host over HTTP; there is nothing to wait on

    async def answer(self, frame: dict[str, Any], *items: dict[str, Any]) -> None:
        body = answer_body(frame["rpcId"], self.session, *items)
        assert await anyio.to_thread.run_sync(self.host.respond, body) == {"accepted": True}

    async def dismiss(self, frame: dict[str, Any]) -> None:
        body = {
            "type": "client-response",
            "rpcId": frame["rpcId"],
            "result": {"ok": False, "error": {"code": "cancelled", "message": "not now"}},
        }
        assert await anyio.to_thread.run_sync(self.host.respond, body) == {"accepted": True}

    async def history(self) -> list[dict[str, Any]]:
        """The session's settled requests, newest first."""

        def read() -> list[dict[str, Any]]:
            response = httpx.get(
                f"{self.host.base}/api/history",
                params={"session": self.session},
                headers=self.host.auth,
                timeout=10,
            )
            response.raise_for_status()
            items: list[dict[str, Any]] = response.json()["items"]
            return items

        return await anyio.to_thread.run_sync(read)


@pytest.fixture
def person(host: HostProcess, session: str) -> Person:
    return Person(host, session)
