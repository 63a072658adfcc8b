"""A fleet on one host: 2,000 asker sockets at once on a real `uq serve`, each asking for a session
of its own; every one is acknowledged, a page answers them all, and each asker is told its own
answer exactly once (generous bounds: it shares a loaded 2-core machine with the host)."""

from __future__ import annotations

import json
import resource
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect

from tests.e2e.host_process import HostProcess
from tests.e2e.test_fair_share import accepted, add_asker

pytestmark = pytest.mark.anyio

ASKERS = 2_000
WAIT = 300.0
"""For the whole of each phase; a quiet machine takes a few seconds."""


@pytest.fixture
def many_files() -> None:
    """Room for the askers' sockets in this process and the host's (which inherits it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < ASKERS + 200:
        pytest.skip(f"this machine allows fewer than {ASKERS + 200} open files")


async def test_two_thousand_askers_are_all_acknowledged_and_each_told_once(
    tmp_path: Path, many_files: None
) -> None:
    db = tmp_path / "host.db"
    host = HostProcess(db)
    host.start()
    try:
        token = add_asker(db, "fleet", "--max-pending", "5000", "--rate", "100000:100000")
        await anyio.to_thread.run_sync(accepted, host, token)
        address = host.base.replace("http", "ws", 1) + "/ws/ask"
        sockets: dict[int, ClientConnection] = {}
        limiter = anyio.CapacityLimiter(128)

        async def ask(number: int) -> None:
            async with limiter:
                socket = await connect(
                    address,
                    additional_headers={"Authorization": f"Bearer {token}"},
                    open_timeout=WAIT,
                    ping_interval=None,
                )
            sockets[number] = socket
            question = {"id": "go", "question": "Deploy?", "options": [{"label": "Deploy"}]}
            frame = {"type": "ask", "rpcId": f"a{number}", "sessionId": f"agent-{number}"}
            await socket.send(json.dumps({**frame, "questions": [question]}))
            reply = json.loads(await socket.recv())
            assert reply == {"rpcId": f"a{number}", "payload": {"type": "ask/pending"}}

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as asking:
                for number in range(ASKERS):
                    asking.start_soon(ask, number)
        assert len(sockets) == ASKERS

        told: dict[int, list[dict[str, Any]]] = {number: [] for number in range(ASKERS)}

        async def hear(number: int) -> None:
            told[number].append(json.loads(await sockets[number].recv()))

        page = await host.page()
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as answering:
                for number in range(ASKERS):
                    answering.start_soon(hear, number)
                answered = 0
                while answered < ASKERS:
                    frame = json.loads(await page.recv())
                    if frame["payload"]["type"] != "question/requested":
                        continue
                    result = {
                        "ok": True,
                        "value": {"answer": {"answers": [{"id": "go", "selected": ["Deploy"]}]}},
                    }
                    response = {
                        "type": "client-response",
                        "rpcId": frame["rpcId"],
                        "result": result,
                    }
                    await page.send(json.dumps(response))
                    answered += 1
        for number, replies in told.items():
            (reply,) = replies
            assert reply["rpcId"] == f"a{number}"
            assert reply["payload"]["type"] == "ask/settled"
            assert reply["payload"]["outcome"] == "answered"

        async def nothing_more(number: int) -> None:
            """A ping's pong comes next: no second settlement was queued before it."""
            await sockets[number].send(json.dumps({"type": "ping"}))
            assert json.loads(await sockets[number].recv())["payload"]["type"] == "pong"
            await sockets[number].close()

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as closing:
                for number in range(ASKERS):
                    closing.start_soon(nothing_more, number)
        await page.close()
        assert host.pending() == []
    finally:
        assert host.stop() == 0, host.stderr
