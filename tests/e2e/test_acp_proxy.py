"""`uq acp -- AGENT`: a test editor on the ACP SDK starts the proxy, which starts a test agent;
a real `uq serve` is the inbox beside them.

The editor and agent are `tests/bridges/acp_peers.py`; the proxy has the agents' asker URL, as
an editor's settings would; the inbox is answered by a scripted page on the host's `/ws` (a
`client-response` frame), and read back through `GET /api/pending` and `GET /api/history`
(`outcome`, `via`, `answer`, `note`). The agent logs every message it receives, so a test can
tell that the editor's late response never reached it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    DeclineElicitationResponse,
    DeniedOutcome,
    RequestPermissionResponse,
)
from pydantic import BaseModel

from tests.bridges.acp_peers import FORM_CAPABLE, Editor, ask, over_stdio, start_session
from tests.e2e.host_process import HostProcess, answer_body, free_port

pytestmark = pytest.mark.anyio

PKG = {
    "id": "pkg",
    "question": "Which package manager?",
    "options": [{"label": "pnpm"}, {"label": "npm", "description": "The default."}],
}
NAME = {"id": "name", "question": "Project name?"}


def chosen(option_id: str) -> RequestPermissionResponse:
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option_id)
    )


@pytest.fixture
def agent_log(tmp_path: Path) -> Path:
    return tmp_path / "agent.jsonl"


@asynccontextmanager
async def proxied(editor: Editor, url: str, agent_log: Path) -> AsyncIterator[ClientSideConnection]:
    """The editor's connection through `uq acp` to the test agent."""
    command = [sys.executable, "-m", "user_questions.cli", "acp", "--"]
    command += [sys.executable, "-m", "tests.bridges.acp_peers"]
    env = {"UQ_URL": url, "ACP_AGENT_LOG": str(agent_log)}
    async with over_stdio(editor, *command, env=env) as conn:
        yield conn


async def pending(host: HostProcess, count: int) -> list[dict[str, Any]]:
    """The host's pending cards, once there are `count` of them."""
    return await anyio.to_thread.run_sync(host.wait_pending, count)


async def history(host: HostProcess) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=host.base, headers=host.auth) as client:
        response = await client.get("/api/history")
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def responses_received(agent_log: Path) -> list[dict[str, Any]]:
    """The responses the agent received (to its own requests)."""
    lines = [json.loads(line) for line in agent_log.read_text().splitlines()]
    return [message for message in lines if "method" not in message]


async def answer_in_the_page(host: HostProcess, label: str) -> dict[str, Any]:
    """Answer the one card in the inbox from a page, picking `label`; the card."""
    [card] = await pending(host, 1)
    page = await host.page()
    async with page:
        item = {"id": "permission", "selected": [label]}
        body = answer_body(card["rpcId"], card["payload"]["sessionId"], item)
        await page.send(json.dumps(body))
        while '"client-response/receipt"' not in str(await page.recv()):
            pass
    return card


async def test_the_inbox_answers_first_and_the_editors_late_answer_is_dropped(
    host: HostProcess, agent_log: Path
) -> None:
    release = anyio.Event()

    async def slow_person(method: str, arguments: dict[str, Any]) -> BaseModel:
        await release.wait()
        return chosen("0")  # pnpm, too late: the inbox has answered

    editor = Editor(slow_person)
    cards = []
    with anyio.fail_after(60):
        async with proxied(editor, host.asker_url, agent_log) as conn:
            session = await start_session(conn)
            async with anyio.create_task_group() as tasks:

                async def in_the_page() -> None:
                    cards.append(await answer_in_the_page(host, "npm"))

                tasks.start_soon(in_the_page)
                response = await ask(conn, session, [PKG])
            release.set()
            await editor.wait_sent(0)  # the agent's first request: the permission
            second = await ask(conn, session, [PKG])  # the same race again, after the first
            # (the editor answers at once this time, and the card is withdrawn from the inbox)
    assert response.stop_reason == "end_turn"
    assert second.stop_reason == "end_turn"
    assert [json.loads(message) for message in editor.messages] == [
        {"answers": [{"id": "pkg", "selected": ["npm"]}]},
        {"answers": [{"id": "pkg", "selected": ["pnpm"]}]},
    ]
    question = cards[0]["payload"]["questions"][0]
    assert (question["header"], question["question"]) == ("Tool call", "Which package manager?")
    # The card says which agent asks and from where: the agent's program through the proxy.
    agent_program = Path(sys.executable).name
    assert cards[0]["origin"] == {"client": f"{agent_program} (ACP)", "cwd": os.getcwd()}
    assert [o["label"] for o in question["options"]] == ["pnpm", "npm"]
    permission_replies = [
        message["result"]["outcome"]
        for message in responses_received(agent_log)
        if "outcome" in message.get("result", {})
    ]
    assert permission_replies == [
        {"outcome": "selected", "optionId": "1"},  # the inbox's, written by the proxy
        {"outcome": "selected", "optionId": "0"},  # the editor's answer to the second prompt
    ]
    records = {item["rpcId"]: item for item in await history(host)}
    first = records[cards[0]["rpcId"]]
    assert (first["outcome"], first["via"], first["answer"]) == (
        "answered",
        "web",
        {"answers": [{"id": "permission", "selected": ["npm"]}]},
    )


def after_the_card(host: HostProcess, response: BaseModel) -> Any:
    """An editor's person who answers `response` once the card is in the inbox too."""

    async def respond(method: str, arguments: dict[str, Any]) -> BaseModel:
        await pending(host, 1)
        return response

    return respond


async def settle_in_the_editor(
    host: HostProcess,
    agent_log: Path,
    response: BaseModel,
    questions: list[dict[str, Any]],
    capabilities: ClientCapabilities | None = None,
) -> tuple[Editor, dict[str, Any]]:
    """The editor answers `response` while the card waits in the inbox; the editor, and the
    card's record once the inbox has settled it."""
    editor = Editor(after_the_card(host, response))
    with anyio.fail_after(60):
        async with proxied(editor, host.asker_url, agent_log) as conn:
            await ask(conn, await start_session(conn, capabilities), questions)
            await pending(host, 0)  # the card left the inbox
    [record] = await history(host)
    return editor, record


async def test_the_editor_answers_first_and_the_card_is_withdrawn_saying_what_it_chose(
    host: HostProcess, agent_log: Path
) -> None:
    editor, record = await settle_in_the_editor(host, agent_log, chosen("1"), [PKG])
    assert json.loads(editor.messages[0]) == {"answers": [{"id": "pkg", "selected": ["npm"]}]}
    # Never an answer: the proxy's token is an asker's, and no asker produces one.
    assert (record["outcome"], record["via"], record["by"], record["note"]) == (
        "withdrawn",
        "asker",
        "agents",
        "answered in the editor: npm",
    )
    assert "answer" not in record


async def test_a_form_answered_in_the_editor_is_withdrawn_with_its_answers(
    host: HostProcess, agent_log: Path
) -> None:
    content = {"pkg": "npm", "name": "shop"}
    accepted = AcceptElicitationResponse(action="accept", content=content)
    editor, record = await settle_in_the_editor(
        host, agent_log, accepted, [PKG, NAME], FORM_CAPABLE
    )
    assert json.loads(editor.messages[0]) == {
        "answers": [
            {"id": "pkg", "selected": ["npm"]},
            {"id": "name", "selected": [], "custom": "shop"},
        ]
    }
    cards = {question["id"]: question for question in record["questions"]}
    assert [(o["label"], o.get("description")) for o in cards["pkg"]["options"]] == [
        ("pnpm", None),
        ("npm", "The default."),
        ("Other", None),
    ]
    assert (record["outcome"], record["via"], record["note"]) == (
        "withdrawn",
        "asker",
        "answered in the editor: npm; “shop”",
    )


async def test_a_form_declined_in_the_editor_is_withdrawn_saying_so(
    host: HostProcess, agent_log: Path
) -> None:
    declined = DeclineElicitationResponse(action="decline")
    editor, record = await settle_in_the_editor(host, agent_log, declined, [NAME], FORM_CAPABLE)
    assert json.loads(editor.messages[0]) == {"error": "ASK_CANCELLED"}
    assert (record["outcome"], record["via"], record["note"]) == (
        "withdrawn",
        "asker",
        "dismissed in the editor",
    )


async def test_cancelling_the_turn_in_the_editor_withdraws_the_card(
    host: HostProcess, agent_log: Path
) -> None:
    turn_cancelled = anyio.Event()

    async def as_the_protocol_says(method: str, arguments: dict[str, Any]) -> BaseModel:
        await turn_cancelled.wait()  # then every pending permission request answers cancelled
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    editor = Editor(as_the_protocol_says)
    with anyio.fail_after(60):
        async with proxied(editor, host.asker_url, agent_log) as conn:
            session = await start_session(conn)
            async with anyio.create_task_group() as tasks:

                async def cancel_the_turn() -> None:
                    await pending(host, 1)
                    await conn.cancel(session_id=session)
                    turn_cancelled.set()

                tasks.start_soon(cancel_the_turn)
                await ask(conn, session, [PKG])
            await pending(host, 0)
    [record] = await history(host)
    assert (record["outcome"], record["via"]) == ("withdrawn", "asker")
    assert "note" not in record  # a cancellation our vocabulary has no words for
    [reply] = responses_received(agent_log)  # the editor's, unchanged
    assert reply["result"] == {"outcome": {"outcome": "cancelled"}}


async def test_with_the_host_down_everything_passes_through(agent_log: Path) -> None:
    down = f"http://127.0.0.1:{free_port()}/?token=nobody-listens"

    async def at_once(method: str, arguments: dict[str, Any]) -> BaseModel:
        return chosen("0")

    editor = Editor(at_once)
    with anyio.fail_after(20):
        async with proxied(editor, down, agent_log) as conn:
            session = await start_session(conn)
            first = await ask(conn, session, [PKG])
            second = await ask(conn, session, [PKG])
    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert [json.loads(message) for message in editor.messages] == [
        {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
    ] * 2
    answers = [message for message in editor.sent if "method" not in message]
    assert len(answers) == 2
    assert responses_received(agent_log) == answers  # exactly what the editor sent, nothing more


async def test_given_a_token_that_can_answer_it_warns_once_and_still_never_answers(
    host: HostProcess, agent_log: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    editor = Editor(after_the_card(host, chosen("0")))
    with anyio.fail_after(60):
        async with proxied(editor, host.url, agent_log) as conn:  # the admin's URL
            session = await start_session(conn)
            for _ in range(2):
                await ask(conn, session, [PKG])
                await pending(host, 0)
    warnings = [line for line in capfd.readouterr().err.splitlines() if "can answer" in line]
    assert warnings == [
        f"the token for {host.base}/ can answer questions (its role is admin), so an agent "
        "holding it could answer its own; give agents an asker's token, which can ask but never "
        "answer: the `export UQ_URL=...` line `uq serve` prints, or one made with `uq token add "
        "NAME --role asker`"
    ]
    records = await history(host)
    assert [(r["outcome"], r["by"]) for r in records] == [("withdrawn", "owner")] * 2
