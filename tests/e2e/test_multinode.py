"""Several `uq serve` nodes on one PostgreSQL database, as processes: a question asked through
one node is answered on another; two people on two nodes answer at once; a node is killed while
its askers wait; the database restarts under running nodes.

The askers are other processes (`tests/e2e/asker_process.py`, `RemoteProvider`); the database is
a real server (`tests/pg.py`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect
from websockets.sync.connection import Connection

from tests.e2e.host_process import AskerProcess, HostProcess, answer_body
from tests.e2e.test_host_cli import uq
from tests.pg import PostgresCluster

YES = {"id": "deploy", "selected": ["yes"]}
QUESTION = {
    "id": "during",
    "question": "Go ahead with during?",
    "options": [{"label": "yes"}, {"label": "no"}],
}


class Nodes:
    """`uq serve` processes on one database; every one started is stopped at the end."""

    def __init__(self, url: str, stack: ExitStack) -> None:
        self.url = url
        self._stack = stack

    def start(self, *args: str) -> HostProcess:
        """A node, started with `args` besides its store."""
        node = HostProcess(None, args=("--store", self.url, *args))
        node.start()
        self._stack.callback(_stop, node)
        return node


def _stop(node: HostProcess) -> None:
    assert node.process is not None
    if node.process.poll() is None:
        assert node.stop() == 0, node.stderr


@pytest.fixture
def nodes(pg_url: str) -> Iterator[Nodes]:
    with ExitStack() as stack:
        yield Nodes(pg_url, stack)


def open_page(node: HostProcess) -> ClientConnection:
    return connect(
        node.base.replace("http", "ws", 1) + "/ws",
        additional_headers={"Origin": node.base, "Cookie": f"uq_token={node.token}"},
    )


def open_asker(node: HostProcess) -> ClientConnection:
    """The asker WebSocket, spoken by hand (RemoteProvider hides what the host replies)."""
    return connect(
        node.base.replace("http", "ws", 1) + "/ws/ask",
        additional_headers={"Authorization": f"Bearer {node.token}"},
    )


def next_of(page: Connection) -> dict[str, Any]:
    """The next frame the page receives (within 15 s)."""
    frame: dict[str, Any] = json.loads(page.recv(timeout=15))
    return frame


def receive(page: Connection, kind: str) -> dict[str, Any]:
    """The next frame of `kind` the page receives, skipping others."""
    while (frame := next_of(page))["payload"]["type"] != kind:
        pass
    return frame


def test_a_question_asked_through_one_node_is_answered_on_another(nodes: Nodes) -> None:
    node_a = nodes.start()
    node_b = nodes.start()
    assert node_b.token == node_a.token  # node b found node a's token in the store
    asker = AskerProcess(node_a.url, ("deploy",), session="agent-1")
    try:
        with open_page(node_b) as page:
            requested = receive(page, "question/requested")
            assert requested["payload"]["sessionId"] == "agent-1"
            assert node_a.pending() == node_b.pending() == [requested]
            assert node_b.respond(answer_body(requested["rpcId"], "agent-1", YES)) == {
                "accepted": True
            }
            assert receive(page, "question/resolved")["payload"]["outcome"] == "answered"
        assert asker.results() == {"deploy": {"answers": [YES]}}
        node_a.wait_pending(0)
    finally:
        asker.close()


def test_two_people_on_two_nodes_answering_at_once_have_exactly_one_winner(
    nodes: Nodes,
) -> None:
    node_a = nodes.start()
    node_b = nodes.start()
    asker = AskerProcess(node_a.url, ("deploy",), session="agent-1")
    try:
        with open_page(node_a) as page_a, open_page(node_b) as page_b:
            rpc_id = receive(page_a, "question/requested")["rpcId"]
            assert receive(page_b, "question/requested")["rpcId"] == rpc_id
            start = threading.Barrier(2)

            def answer(page: Connection, label: str) -> None:
                start.wait()
                body = answer_body(rpc_id, "agent-1", {"id": "deploy", "selected": [label]})
                page.send(json.dumps(body))

            threads = [
                threading.Thread(target=answer, args=(page_a, "yes")),
                threading.Thread(target=answer, args=(page_b, "no")),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            receipts = {}
            for label, page in (("yes", page_a), ("no", page_b)):
                frames = {
                    frame["payload"]["type"]: frame for frame in (next_of(page), next_of(page))
                }
                assert frames["question/resolved"]["payload"]["outcome"] == "answered"
                receipts[label] = frames["client-response/receipt"]["payload"]
        winners = [label for label, receipt in receipts.items() if receipt["accepted"]]
        assert len(winners) == 1, receipts
        (loser,) = set(receipts) - set(winners)
        assert receipts[loser]["reason"] == "not-pending"
        expected = {"answers": [{"id": "deploy", "selected": winners}]}
        assert asker.results() == {"deploy": expected}
    finally:
        asker.close()


def test_askers_of_a_killed_node_reattach_through_another_and_get_their_answers(
    nodes: Nodes,
) -> None:
    node_a = nodes.start()
    node_b = nodes.start()
    # The askers know both nodes; they connect to the first that answers, node a.
    asker = AskerProcess(f"{node_a.url},{node_b.base}", ("alpha", "beta"), session="agent-1")
    try:
        before = node_b.wait_pending(2)
        node_a.kill()
        assert asker.running()
        for frame in before:
            (question,) = frame["payload"]["questions"]
            body = answer_body(
                frame["rpcId"], "agent-1", {"id": question["id"], "selected": ["no"]}
            )
            assert node_b.respond(body) == {"accepted": True}
        assert asker.results() == {
            name: {"answers": [{"id": name, "selected": ["no"]}]} for name in ("alpha", "beta")
        }
        node_b.wait_pending(0)
    finally:
        asker.close()


def test_nodes_and_askers_ride_out_a_database_restart(
    nodes: Nodes, pg_cluster: PostgresCluster
) -> None:
    node_a = nodes.start()
    node_b = nodes.start()
    waiting = AskerProcess(node_a.url, ("before",), session="agent-1")
    try:
        node_b.wait_pending(1)
        pg_cluster.stop()
        with open_asker(node_a) as asker:
            # Asked while the database is down: refused with a code, nothing half-stored.
            ask = {
                "type": "ask",
                "rpcId": "during-1",
                "sessionId": "agent-2",
                "questions": [QUESTION],
            }
            asker.send(json.dumps(ask))
            refused = json.loads(asker.recv(timeout=15))
            assert refused["payload"]["type"] == "ask/error"
            assert refused["payload"]["code"] == "STORE_UNAVAILABLE"
            assert "check that PostgreSQL is running" in refused["payload"]["message"]
            pg_cluster.start()
            asker.send(json.dumps(ask))  # what RemoteProvider does: ask again, later
            assert json.loads(asker.recv(timeout=15))["payload"] == {"type": "ask/pending"}
            # Node b missed whatever was notified while its listener was away, and caught up.
            frames = node_b.wait_pending(2)
            for frame in frames:
                (question,) = frame["payload"]["questions"]
                body = answer_body(
                    frame["rpcId"],
                    frame["payload"]["sessionId"],
                    {"id": question["id"], "selected": ["yes"]},
                )
                assert node_b.respond(body) == {"accepted": True}
            settled = json.loads(asker.recv(timeout=15))
        assert settled == {
            "rpcId": "during-1",
            "payload": {
                "type": "ask/settled",
                "outcome": "answered",
                "answer": {"answers": [{"id": "during", "selected": ["yes"]}]},
            },
        }
        assert waiting.results() == {"before": {"answers": [{"id": "before", "selected": ["yes"]}]}}
        node_a.wait_pending(0)
    finally:
        waiting.close()


def test_a_node_that_cannot_use_its_database_says_why_in_one_line(tmp_path: Path) -> None:
    unreachable = uq(
        "serve", "--port", "0", "--store", f"postgresql://uq:s3cret@/q?host={tmp_path}"
    )
    assert unreachable.returncode == 1
    assert unreachable.stderr.startswith(
        f"uq serve: the store postgresql://uq@/q?host={tmp_path} is unavailable ("
    )
    assert unreachable.stderr.endswith("; check that PostgreSQL is running and reachable\n")
    unreadable = uq("serve", "--port", "0", "--store", "postgresql://uq:s3cret@db/q?colour=blue")
    assert unreadable.returncode == 2
    assert unreadable.stderr.startswith(
        "uq serve: the store URL postgresql://uq@db/q?colour=blue is not a valid PostgreSQL URL"
    )
    for result in (unreachable, unreadable):
        assert result.stderr.count("\n") == 1
        assert "s3cret" not in result.stderr
        assert result.stdout == ""


def test_a_node_killed_mid_wait_leaves_the_escalation_and_the_deadline_to_another(
    nodes: Nodes, pg_url: str
) -> None:
    """The timers of an asker's token are the store's, not a node's: the node the request was
    asked through dies before its step is due, and the other node routes it to the step's
    target, then times it out at its deadline; the asker, re-attached there, is told so."""

    def token(name: str, *args: str) -> str:
        made = uq("token", "add", name, *args, "--store", pg_url)
        assert made.returncode == 0, made.stderr
        return made.stdout.splitlines()[0]

    node_a = nodes.start()
    node_b = nodes.start()
    token("alice")
    bobs = {"Authorization": f"Bearer {token('bob')}"}
    steps = ("--route", "alice", "--escalate", "2s:bob", "--deadline", "6s")
    ci = token("ci", "--role", "asker", *steps)

    def bobs_pending() -> list[object]:
        listed = httpx.get(f"{node_b.base}/api/pending", headers=bobs, timeout=10)
        pending: list[object] = listed.json()["pending"]
        return pending

    asked = time.monotonic()
    urls = f"{node_a.base}/?token={ci},{node_b.base}/?token={ci}"
    asker = AskerProcess(urls, ("deploy",), session="agent-1")
    try:
        node_b.wait_pending(1)
        node_a.kill()
        while not bobs_pending():
            assert time.monotonic() - asked < 20, "no node fired the step"
            time.sleep(0.1)
        assert time.monotonic() - asked >= 2.0  # not before its step was due
        assert asker.results() == {"deploy": "ASK_TIMED_OUT"}
        assert time.monotonic() - asked >= 6.0
    finally:
        asker.close()
    history = httpx.get(f"{node_b.base}/api/history", headers=bobs, timeout=10).json()
    (entry,) = history["items"]  # in bob's history, as the step routed it to him
    assert (entry["outcome"], entry["via"]) == ("timed-out", "host")
