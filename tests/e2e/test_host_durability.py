"""Nothing is lost: a host killed with SIGKILL while agents in other processes wait.

The host is restarted on the same file and port; it shows every pending request again, with the
same rpcId and the same time of asking, and the askers (which never stopped waiting) re-attach
and get exactly the answers given after the restart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

from tests.e2e.host_process import AskerProcess, HostProcess, free_port


def page_frames(host: HostProcess, count: int) -> list[dict[str, Any]]:
    """Connect as a browser would and read the `count` requests replayed on connect."""
    with connect(
        host.base.replace("http", "ws", 1) + "/ws",
        additional_headers={"Origin": host.base, "Cookie": f"uq_token={host.token}"},
    ) as page:
        return [json.loads(page.recv(timeout=10)) for _ in range(count)]


def test_a_killed_host_shows_every_question_again_and_askers_get_their_answers(
    tmp_path: Path,
) -> None:
    port = free_port()
    host = HostProcess(tmp_path / "host.db", port=port)
    host.start()
    askers = [
        AskerProcess(host.url, ("alpha", "beta"), session="agent-a"),
        AskerProcess(host.url, ("gamma",), session="agent-b"),
    ]
    restarted = HostProcess(tmp_path / "host.db", port=port)
    try:
        before = host.wait_pending(3)
        host.kill()
        assert all(asker.running() for asker in askers)

        restarted.start()
        assert restarted.token == host.token  # kept with the store: the askers still get in
        after = restarted.pending()
        assert sorted(after, key=lambda frame: frame["rpcId"]) == sorted(
            before, key=lambda frame: frame["rpcId"]
        )
        replayed = page_frames(restarted, 3)
        assert {frame["rpcId"] for frame in replayed} == {frame["rpcId"] for frame in before}

        choices = {"alpha": "yes", "beta": "no", "gamma": "yes"}
        for frame in after:
            (question,) = frame["payload"]["questions"]
            body = {
                "type": "client-response",
                "rpcId": frame["rpcId"],
                "result": {
                    "ok": True,
                    "value": {
                        "sessionId": frame["payload"]["sessionId"],
                        "answer": {
                            "answers": [
                                {"id": question["id"], "selected": [choices[question["id"]]]}
                            ]
                        },
                    },
                },
            }
            assert restarted.respond(body) == {"accepted": True}

        got = {**askers[0].results(), **askers[1].results()}
        assert got == {
            name: {"answers": [{"id": name, "selected": [choice]}]}
            for name, choice in choices.items()
        }
        assert restarted.pending() == []
    finally:
        for asker in askers:
            asker.close()
        if restarted.process is not None:
            assert restarted.stop() == 0
