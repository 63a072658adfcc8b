"""Fair share end to end: a real `uq serve`, asker tokens made with the pinned
`uq token add NAME --role asker --max-pending N`, and the asker WebSocket. A runaway asker is
capped (`TOO_MANY_PENDING`) and rate-limited (`RATE_LIMITED` with a retryAfter) while a second
asker on the same host is served at once; a restart keeps the token's cap and the count."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.sync.client import ClientConnection, connect
from websockets.sync.connection import Connection

from tests.e2e.host_process import HostProcess, answer_body
from tests.e2e.test_host_cli import uq
from user_questions import AskUserQuestionRequest
from user_questions.providers.remote import RemoteProvider
from user_questions.types import AskUserQuestionItem

QUESTION = {
    "id": "again",
    "question": "Run the migration again?",
    "options": [{"label": "yes"}, {"label": "no"}],
}
YES = {"id": "again", "selected": ["yes"]}
WAIT = 20.0


def add_asker(db: Path, name: str, *limits: str) -> str:
    """`uq token add NAME --role asker` with `limits`; the token it printed."""
    made = uq("token", "add", name, "--role", "asker", *limits, "--store", str(db))
    assert made.returncode == 0, made.stderr
    return made.stdout.splitlines()[0]


def accepted(host: HostProcess, token: str) -> None:
    """Wait until the running host accepts a token just made beside it (it reads the store's
    change within its watch interval)."""
    deadline = time.monotonic() + WAIT
    while True:
        me = httpx.get(f"{host.base}/api/me", headers={"Authorization": f"Bearer {token}"})
        if me.status_code == 200 or time.monotonic() > deadline:
            assert me.status_code == 200, me.text
            return
        time.sleep(0.05)  # polling the host over HTTP; there is nothing to wait on


def asker(host: HostProcess, token: str) -> ClientConnection:
    ws_url = host.base.replace("http", "ws", 1) + "/ws/ask"
    return connect(ws_url, additional_headers={"Authorization": f"Bearer {token}"})


def distinct(rpc_id: str) -> dict[str, Any]:
    """`QUESTION` made distinct by its request (identical ones would be one card)."""
    return {**QUESTION, "question": f"{QUESTION['question']} ({rpc_id})"}


def ask(socket: Connection, rpc_id: str) -> dict[str, Any]:
    """Ask on `socket`; the host's reply to it (its payload)."""
    frame = {"type": "ask", "rpcId": rpc_id, "sessionId": "loop", "questions": [distinct(rpc_id)]}
    socket.send(json.dumps(frame))
    reply: dict[str, Any] = json.loads(socket.recv(timeout=WAIT))
    assert reply["rpcId"] == rpc_id, reply
    payload: dict[str, Any] = reply["payload"]
    return payload


def answered(host: HostProcess, socket: Connection, rpc_id: str) -> None:
    """Answer `rpc_id` as a person; its asker is told, once."""
    assert host.respond(answer_body(rpc_id, "loop", YES))["accepted"] is True
    told = json.loads(socket.recv(timeout=WAIT))
    assert told["rpcId"] == rpc_id
    assert told["payload"]["type"] == "ask/settled"
    assert told["payload"]["outcome"] == "answered"


def test_a_runaway_asker_is_capped_and_rate_limited_while_another_asks_at_once(
    tmp_path: Path,
) -> None:
    db = tmp_path / "host.db"
    host = HostProcess(db)
    host.start()
    try:
        runaway = add_asker(db, "runaway", "--max-pending", "2", "--rate", "0.01:3")
        calm = add_asker(db, "calm")
        accepted(host, runaway)
        accepted(host, calm)
        with asker(host, runaway) as loop, asker(host, calm) as other:
            assert ask(loop, "a1") == {"type": "ask/pending"}
            assert ask(loop, "a2") == {"type": "ask/pending"}
            capped = ask(loop, "a3")
            assert capped["type"] == "ask/error"
            assert capped["code"] == "TOO_MANY_PENDING"
            assert "its cap of 2" in capped["message"]
            assert "retryAfter" not in capped
            assert ask(other, "b1") == {"type": "ask/pending"}  # served at once
            assert ask(loop, "a1") == {"type": "ask/pending"}  # re-attaching is never refused
            answered(host, loop, "a1")
            assert ask(loop, "a3") == {"type": "ask/pending"}  # the last of its burst of 3
            answered(host, loop, "a2")
            limited = ask(loop, "a4")
            assert limited["type"] == "ask/error"
            assert limited["code"] == "RATE_LIMITED"
            assert 0 < limited["retryAfter"] <= 100  # one ask at 0.01 a second
            assert "rate of 0.01:3" in limited["message"]
            assert ask(other, "b2") == {"type": "ask/pending"}  # still served at once
    finally:
        assert host.stop() == 0, host.stderr
    host = HostProcess(db)  # a restart: the cap is the token's, the count the store's
    host.start()
    try:
        with asker(host, runaway) as loop:
            assert ask(loop, "a4") == {"type": "ask/pending"}  # a new bucket, a place free
            capped = ask(loop, "a5")
            assert capped["code"] == "TOO_MANY_PENDING"
            assert "its cap of 2" in capped["message"]
        listed = uq("token", "list", "--json", "--store", str(db))
        shown = [json.loads(line) for line in listed.stdout.splitlines()]
        assert {token["name"]: token.get("maxPending") for token in shown} == {
            "runaway": 2,
            "calm": None,
        }
    finally:
        assert host.stop() == 0, host.stderr


@pytest.mark.anyio
async def test_remote_provider_waits_out_its_rate_and_never_makes_an_answer_of_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "host.db"
    host = HostProcess(db)
    host.start()
    try:
        paced = add_asker(db, "paced", "--rate", "0.5:1")  # one ask, then one every 2 s
        accepted(host, paced)
        answers: list[object] = []
        async with RemoteProvider(f"{host.base}/?token={paced}", session="loop") as provider:

            async def one(which: str) -> None:
                question = AskUserQuestionItem.model_validate(distinct(which))
                request = AskUserQuestionRequest(questions=[question])
                answers.append((await provider.ask(request)).model_dump(mode="json"))

            async with anyio.create_task_group() as asking:
                asking.start_soon(one, "first")
                await anyio.to_thread.run_sync(host.wait_pending, 1)
                asking.start_soon(one, "second")  # refused with RATE_LIMITED, then asked again
                frames = await anyio.to_thread.run_sync(host.wait_pending, 2)
                for frame in frames:
                    body = answer_body(frame["rpcId"], "loop", YES)
                    await anyio.to_thread.run_sync(host.respond, body)
            assert answers == [{"answers": [YES]}] * 2
            with anyio.move_on_after(0.5) as waiting:  # the bucket is empty: 2 s to wait
                await one("third")
            assert waiting.cancelled_caught
            assert len(answers) == 2  # its deadline ended it: no answer
        assert host.pending() == []  # and nothing waits for people
    finally:
        assert host.stop() == 0, host.stderr
