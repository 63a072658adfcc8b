"""Agents in other processes ask through a real host; people answer from several pages."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect
from websockets.sync.connection import Connection

from tests.e2e.host_process import AskerProcess, HostProcess, answer_body


def open_page(host: HostProcess) -> ClientConnection:
    return connect(
        host.base.replace("http", "ws", 1) + "/ws",
        additional_headers={"Origin": host.base, "Cookie": f"uq_token={host.token}"},
    )


def receive(page: Connection) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(page.recv(timeout=15))
    return frame


def test_two_pages_answering_at_once_exactly_one_wins(host: HostProcess) -> None:
    asker = AskerProcess(host.url, ("deploy",), session="agent-1")
    try:
        with open_page(host) as first, open_page(host) as second:
            requested = [receive(first), receive(second)]
            assert requested[0] == requested[1]
            rpc_id = requested[0]["rpcId"]
            start = threading.Barrier(2)

            def answer(page: Connection, label: str) -> None:
                start.wait()
                page.send(
                    json.dumps(
                        answer_body(rpc_id, "agent-1", {"id": "deploy", "selected": [label]})
                    )
                )

            threads = [
                threading.Thread(target=answer, args=(first, "yes")),
                threading.Thread(target=answer, args=(second, "no")),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            receipts = {}
            for name, page in (("yes", first), ("no", second)):
                frames = [receive(page), receive(page)]
                (receipt,) = [
                    f for f in frames if f["payload"]["type"] == "client-response/receipt"
                ]
                (resolved,) = [f for f in frames if f["payload"]["type"] == "question/resolved"]
                assert resolved["payload"]["outcome"] == "answered"
                receipts[name] = receipt["payload"]
        winners = [name for name, receipt in receipts.items() if receipt["accepted"]]
        assert len(winners) == 1
        (loser,) = set(receipts) - set(winners)
        assert receipts[loser]["reason"] == "not-pending"
        assert asker.results() == {"deploy": {"answers": [{"id": "deploy", "selected": winners}]}}
    finally:
        asker.close()


def test_an_asker_that_times_out_withdraws_its_question_from_every_page(host: HostProcess) -> None:
    with open_page(host) as page:
        asker = AskerProcess(host.url, ("slow",), session="agent-2", timeout=1.0)
        try:
            requested = receive(page)
            assert requested["payload"]["sessionId"] == "agent-2"
            resolved = receive(page)
            assert resolved["payload"] == {
                "type": "question/resolved",
                "sessionId": "agent-2",
                "questionRpcId": requested["rpcId"],
                "outcome": "cancelled",
                "settled": "timed-out",
            }
            assert asker.results() == {"slow": "ASK_TIMED_OUT"}
        finally:
            asker.close()
    assert host.pending() == []


def test_a_dismissal_in_a_page_is_ask_cancelled_in_the_other_process(host: HostProcess) -> None:
    asker = AskerProcess(host.url, ("risky",), session="agent-3")
    try:
        (frame,) = host.wait_pending(1)
        receipt = host.respond(
            {
                "type": "client-response",
                "rpcId": frame["rpcId"],
                "result": {"ok": False, "error": {"code": "cancelled", "message": "no"}},
            }
        )
        assert receipt == {"accepted": True}
        assert asker.results() == {"risky": "ASK_CANCELLED"}
    finally:
        asker.close()


def test_many_askers_in_many_processes_all_get_their_own_answers(host: HostProcess) -> None:
    askers = [
        AskerProcess(host.url, (f"p{index}-a", f"p{index}-b"), session=f"agent-{index}")
        for index in range(3)
    ]
    try:
        frames = host.wait_pending(6)
        for frame in frames:
            (question,) = frame["payload"]["questions"]
            label = "yes" if question["id"].endswith("a") else "no"
            body = answer_body(
                frame["rpcId"],
                frame["payload"]["sessionId"],
                {"id": question["id"], "selected": [label]},
            )
            assert host.respond(body) == {"accepted": True}
        for index, asker in enumerate(askers):
            assert asker.results() == {
                f"p{index}-a": {"answers": [{"id": f"p{index}-a", "selected": ["yes"]}]},
                f"p{index}-b": {"answers": [{"id": f"p{index}-b", "selected": ["no"]}]},
            }
    finally:
        for asker in askers:
            asker.close()


def test_an_asker_that_dies_leaves_its_question_answerable_and_the_host_unharmed(
    tmp_path: Path,
) -> None:
    host = HostProcess(tmp_path / "host.db")
    host.start()
    asker = AskerProcess(host.url, ("orphan",), session="agent-4")
    try:
        with open_page(host) as page:
            requested = receive(page)
            asker.close()  # SIGKILL: no withdrawal; another process may re-attach to it later
            assert host.pending() == [requested]
            page.send(
                json.dumps(
                    answer_body(requested["rpcId"], "agent-4", {"id": "orphan", "selected": ["no"]})
                )
            )
            replies = [receive(page), receive(page)]
            assert {reply["payload"]["type"] for reply in replies} == {
                "client-response/receipt",
                "question/resolved",
            }
    finally:
        asker.close()
        assert host.stop() == 0
    assert host.stderr is not None
    assert "Traceback" not in host.stderr
    assert "Exception" not in host.stderr
