"""The audit log of a real `uq serve`: a mixed workload through its sockets and HTTP API (an answer
carrying its card's digest, a stale digest refused, a dismissal from a client without one, a
withdrawal), the host's key made beside the store and a checkpoint signed as it stops, then the
pinned `uq audit verify --db PATH` and `uq audit export --db PATH` as subprocesses, an export
verified offline, and an answer changed behind the host's back found."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path

import httpx
from websockets.sync.client import connect

from tests.e2e.host_process import HostProcess
from tests.e2e.test_host_cli import uq
from tests.host.conftest import PICK, ask_frame

CHANGED = "the card changed since it was shown"


def respond(host: HostProcess, frame: Mapping[str, object]) -> dict[str, object]:
    reply: dict[str, object] = httpx.post(
        f"{host.base}/api/respond", headers=host.auth, json=frame, timeout=10
    ).json()
    return reply


def test_a_hosts_audit_log_verifies_exports_and_names_a_changed_answer(
    host: HostProcess, tmp_path: Path
) -> None:
    db = tmp_path / "uq.db"
    address = host.base.replace("http", "ws", 1) + "/ws/ask"
    with connect(address, additional_headers=host.asker_auth) as asker:
        for rpc_id in ("answered", "dismissed", "withdrawn"):
            distinct = PICK.model_copy(update={"question": f"{PICK.question} ({rpc_id})"})
            asker.send(json.dumps(ask_frame(rpc_id, distinct)))  # identical ones: one card
            assert json.loads(asker.recv(timeout=10))["payload"]["type"] == "ask/pending"
        pending = httpx.get(f"{host.base}/api/pending", headers=host.auth, timeout=10).json()
        digests = {frame["rpcId"]: frame["digest"] for frame in pending["pending"]}
        picked = {"ok": True, "value": {"answer": {"answers": [{"id": "pick", "selected": ["a"]}]}}}
        answer = {"type": "client-response", "rpcId": "answered", "result": picked}
        stale = respond(host, {**answer, "digest": "0" * 64})
        assert stale == {"accepted": False, "reason": "bad-response", "message": CHANGED}
        assert respond(host, {**answer, "digest": digests["answered"]}) == {"accepted": True}
        cancelled = {"ok": False, "error": {"code": "cancelled", "message": "no"}}
        dismissal = {"type": "client-response", "rpcId": "dismissed", "result": cancelled}
        assert respond(host, dismissal) == {"accepted": True}  # an older client: no digest
        asker.send(json.dumps({"type": "withdraw", "rpcId": "withdrawn"}))
        settled = [json.loads(asker.recv(timeout=10)) for _ in range(3)]
        assert {reply["payload"]["outcome"] for reply in settled} == {
            "answered",
            "dismissed",
            "withdrawn",
        }
    assert host.stop() == 0  # the host signs a checkpoint as it stops
    key = Path(f"{db}.audit-key")
    assert oct(key.stat().st_mode & 0o777) == "0o600"

    verified = uq("audit", "verify", "--db", str(db))
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("3 records, chain intact, last signed at ")
    assert verified.stdout.count("\n") == 1

    exported = uq("audit", "export", "--db", str(db))
    assert (exported.returncode, exported.stderr) == (0, "")
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [(line["rpc_id"], line["outcome"]) for line in lines] == [
        ("answered", "answered"),
        ("dismissed", "dismissed"),
        ("withdrawn", "withdrawn"),
    ]
    assert all("hash" in line and "prev" in line for line in lines)
    assert lines[0]["seen"] == digests["answered"]
    assert lines[1]["seen"] is None
    export = tmp_path / "export.jsonl"
    export.write_text(exported.stdout)
    offline = uq("audit", "verify", "--file", str(export), "--key", f"{key}.pub")
    assert offline.returncode == 0, offline.stderr
    assert offline.stdout.startswith("3 records, chain intact, last signed at ")

    with sqlite3.connect(db) as connection:
        connection.execute(
            "UPDATE questions SET answer = ? WHERE rpc_id = 'answered'",
            ('{"answers":[{"id":"pick","selected":["b"]}]}',),
        )
    connection.close()
    tampered = uq("audit", "verify", "--db", str(db))
    assert tampered.returncode == 1
    assert tampered.stdout == 'record 1: request "answered" as stored differs from it in answer\n'
