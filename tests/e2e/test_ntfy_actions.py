"""`uq serve --notify ntfy://HOST:PORT/TOPIC` as people run it, against an ntfy server on loopback
written from ntfy's docs: a tap on a button, sent as the ntfy app sends its `http` action, answers
the agent; the link answers once; the question's message is then replaced by how it ended."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.host_process import AskerProcess, HostProcess
from tests.ntfy_fake import ntfy_server


def test_a_tap_on_an_ntfy_button_answers_the_agent_once_and_the_message_is_replaced(
    tmp_path: Path,
) -> None:
    with ntfy_server() as ntfy:
        host = HostProcess(tmp_path / "host.db", args=("--notify", f"ntfy://{ntfy.netloc}/uq"))
        host.start()
        agent = AskerProcess(host.asker_url, ("ship",), session="ci-bot")
        try:
            (frame,) = host.wait_pending(1)
            (question,) = ntfy.messages.wait_for(1)
            assert [action["label"] for action in question.actions] == ["yes", "no"]
            assert question.click == f"{host.base}/q/{frame['rpcId']}"
            assert ntfy.tap(question, "yes") == 200
            assert agent.results() == {"ship": {"answers": [{"id": "ship", "selected": ["yes"]}]}}
            assert ntfy.tap(question, "no") == 410  # answered: the link is spent
            settled = ntfy.messages.wait_for(2)[1]
        finally:
            agent.close()
            assert host.stop() == 0
    assert settled.sequence_id == question.sequence_id
    assert settled.actions == []
    assert "Answered: yes" in settled.message
    assert "Through an answer link (ntfy)" in settled.message
    # The tap cleared the question and the ending replaced it, or the ending arrived while the
    # tap was in flight and the app's clear dismissed it with the question: no button is left.
    assert list(ntfy.shown.values()) in ([settled], [])
    assert ntfy.refused.items == []
