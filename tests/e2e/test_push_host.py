"""`uq serve --push-private` as people run it: a browser's subscription (from the push service on
loopback, `tests/push_fake.py`) registered over HTTP, an agent asking, and the push the service
decrypts saying only that a question is waiting, while the worker's secret fetches the card."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.e2e.host_process import AskerProcess, HostProcess
from tests.push_fake import push_service


def test_a_private_host_pushes_no_question_and_the_worker_fetches_it(tmp_path: Path) -> None:
    with push_service() as service:
        host = HostProcess(tmp_path / "host.db", args=("--push-private",))
        host.start()
        agent = None
        try:
            service.application_key = httpx.get(f"{host.base}/api/push/key").json()["publicKey"]
            browser = service.subscribe()
            made = httpx.post(
                f"{host.base}/api/push/subscriptions", json=browser.to_json(), headers=host.auth
            )
            assert made.status_code == 201, made.text
            worker = {"authorization": f"Push {made.json()['id']}.{made.json()['secret']}"}
            # The agent asks once the browser is subscribed.
            agent = AskerProcess(host.asker_url, ("ship",), session="ci-bot")
            (frame,) = host.wait_pending(1)
            (push,) = service.pushes.wait_for(1)
            assert push.json["type"] == "question/waiting"
            assert push.json["title"] == "A question is waiting"
            assert b"ship" not in push.plain  # not the question, not its options
            card = httpx.get(f"{host.base}/api/push/worker/card/{frame['rpcId']}", headers=worker)
            assert card.json()["question"] == "Go ahead with ship?"
            assert card.json()["tag"] == push.json["tag"]
        finally:
            if agent is not None:
                agent.close()
            assert host.stop() == 0
    assert service.refused.items == []
