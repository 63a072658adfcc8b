"""The `withdraw` frame's note: an asker says why it gave a request up, in its own words; the host
keeps it with the settlement and shows it in the history. Bounded, and never a NUL, like every
text the host stores; a refused note leaves the request pending and watched."""

from __future__ import annotations

import anyio
import pytest
from starlette.testclient import TestClient

from tests.host.conftest import AUTH, PICK, answer_frame, ask_frame, next_frame
from user_questions import (
    AbortController,
    AskUserQuestionRequest,
    Context,
    UserQuestionError,
)
from user_questions.frames import MAX_NOTE_LENGTH
from user_questions.host.hub import Hub
from user_questions.host.in_process import HostProvider

NOTE = "answered in the editor: Allow once"


def agents(client: TestClient) -> dict[str, str]:
    """The host's asker token's header: what an agent holds."""
    return {"Authorization": f"Bearer {client.app.state.asker_token}"}  # type: ignore[attr-defined]


def test_an_askers_note_is_kept_with_its_withdrawal_and_shown_in_the_history(
    client: TestClient,
) -> None:
    with client.websocket_connect("/ws/ask", headers=agents(client)) as asker:
        asker.send_json(ask_frame("r1", PICK))
        assert asker.receive_json()["payload"]["type"] == "ask/pending"
        asker.send_json({"type": "withdraw", "rpcId": "r1", "reason": "aborted", "note": NOTE})
        assert asker.receive_json() == {
            "rpcId": "r1",
            "payload": {"type": "ask/settled", "outcome": "withdrawn"},
        }
    (entry,) = client.get("/api/history", headers=AUTH).json()["items"]
    assert (entry["outcome"], entry["by"], entry["via"], entry["note"]) == (
        "withdrawn",
        "agents",
        "asker",
        NOTE,
    )
    assert "channel" not in entry


@pytest.mark.parametrize(
    ("note", "problem"),
    [
        ("a\x00b", "holds a NUL character (U+0000)"),
        ("x" * (MAX_NOTE_LENGTH + 1), f"at most {MAX_NOTE_LENGTH} characters"),
        ("", "at least 1 character"),
    ],
)
def test_a_note_the_host_cannot_keep_is_refused_and_the_request_stays(
    client: TestClient, note: str, problem: str
) -> None:
    with client.websocket_connect("/ws/ask", headers=agents(client)) as asker:
        asker.send_json(ask_frame("r1", PICK))
        assert asker.receive_json()["payload"]["type"] == "ask/pending"
        asker.send_json({"type": "withdraw", "rpcId": "r1", "note": note})
        refused = asker.receive_json()
        assert (refused["rpcId"], refused["payload"]["code"]) == ("r1", "BAD_REQUEST")
        assert problem in refused["payload"]["message"]
        assert [
            frame["rpcId"] for frame in client.get("/api/pending", headers=AUTH).json()["pending"]
        ] == ["r1"]
        body = answer_frame("r1", "s", {"id": "pick", "selected": ["a"]})
        assert client.post("/api/respond", json=body, headers=AUTH).json() == {"accepted": True}
        assert asker.receive_json()["payload"]["outcome"] == "answered"  # still watched


@pytest.mark.anyio
async def test_an_in_process_asker_aborted_with_words_leaves_them_as_the_note(
    ctx: Context, hub: Hub
) -> None:
    ctx.user_questions.register_provider(HostProvider(hub))
    page = hub.subscribe()
    controller = AbortController()

    async def abort_once_shown() -> None:
        shown = await next_frame(page)
        rpc_ids.append(shown["rpcId"])
        controller.abort("the build finished first")

    rpc_ids: list[str] = []
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(abort_once_shown)
        with pytest.raises(UserQuestionError), anyio.fail_after(5):
            await ctx.user_questions.ask(
                AskUserQuestionRequest(questions=[PICK], signal=controller.signal)
            )
    stored = await hub.store.get(rpc_ids[0])
    assert stored is not None
    assert (stored.state, stored.settled_via, stored.note) == (
        "withdrawn",
        "host",
        "the build finished first",
    )
