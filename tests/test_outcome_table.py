"""The one table of docs/protocol.md ("How a request ends") holds on every surface.

Each row is played for real: an asker asks through `/ws/ask`, a page watches `/ws`, and the
request ends as the row says (an answer or a dismissal over `POST /api/respond`, a withdrawal
over the asker's socket). Then every surface is read as its users read it: the store's state,
the page's `question/resolved` frame, the asker's `ask/settled` frame, `GET /api/history`, the
event JSON notifiers deliver, `uq history` (text and `--json`), and what the service tells an
agent whose asker got that `ask/settled`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from tests.cli.test_token import uq
from tests.host.conftest import PICK
from user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    Context,
    UserQuestionError,
    UserQuestionService,
)
from user_questions._host_link.ask_endings import settled_answer
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.hub import Hub
from user_questions.host.notify.events import event_of
from user_questions.host.stores import StoredQuestion
from user_questions.outcomes import Outcome
from user_questions.service import RESOLVED_EVENT

DOCS = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"
TOKEN = "outcome-table-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ANSWER = {"answers": [{"id": "pick", "selected": ["b"]}]}


def table() -> list[dict[str, str]]:
    """The rows of the table under "How a request ends", by column heading, backticks removed."""
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    start = lines.index("## How a request ends")
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("| Ending |"))
    heading = _cells(lines[first])
    rows = []
    for line in lines[first + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(heading, _cells(line), strict=True)))
    return rows


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def plain(cell: str) -> str:
    """A cell's one code value (`dismissed` -> dismissed)."""
    values: list[str] = re.findall(r"`([^`]+)`", cell)
    assert len(values) == 1, f"expected one value in {cell!r}"
    return values[0]


ROWS = table()


def test_the_table_has_a_row_for_every_outcome_and_no_other() -> None:
    assert sorted(plain(row["store `state`"]) for row in ROWS) == sorted(Outcome)


@pytest.mark.parametrize("row", ROWS, ids=[plain(row["store `state`"]) for row in ROWS])
def test_every_surface_names_the_ending_as_the_table_says(
    row: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = plain(row["store `state`"])
    events: list[dict[str, Any]] = []

    async def collect(hub: Hub) -> None:
        def heard(record: StoredQuestion) -> None:
            events.append(json.loads(event_of(record).model_dump_json()))

        stop = hub.on_event(heard)
        try:
            await anyio.sleep_forever()
        finally:
            stop()

    app = create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN, tasks=[collect]))
    with (
        TestClient(app) as client,
        client.websocket_connect("/ws/ask", headers=AUTH) as asker,
        client.websocket_connect("/ws", headers=AUTH) as page,
    ):
        ask = {
            "type": "ask",
            "rpcId": "r1",
            "sessionId": "agent-1",
            "questions": [PICK.model_dump(mode="json")],
        }
        asker.send_json(ask)
        assert asker.receive_json()["payload"] == {"type": "ask/pending"}
        assert page.receive_json()["rpcId"] == "r1"
        end(client, asker, state)
        settled = asker.receive_json()["payload"]
        resolved = page.receive_json()["payload"]
        assert client.portal is not None
        record = client.portal.call(app.state.store.get, "r1")
        (entry,) = client.get("/api/history", headers=AUTH).json()["items"]

    assert record is not None
    assert record.state == state
    assert resolved["type"] == "question/resolved"
    assert resolved["outcome"] == plain(row["page `question/resolved` `outcome`"])
    assert resolved["settled"] == plain(row["page `question/resolved` `settled`"])
    assert settled["type"] == "ask/settled"
    assert settled["outcome"] == plain(row["asker `ask/settled` `outcome`"])
    assert entry["outcome"] == plain(row["history `outcome`"])
    assert [event["type"] for event in events] == ["question/pending", "question/settled"]
    assert events[1]["outcome"] == plain(row["event `outcome`"])

    db = str(tmp_path / "host.db")
    status, out, err = uq(capsys, "history", "--store", db, "--json")
    assert (status, err) == (None, "")
    assert json.loads(out)["outcome"] == plain(row["`uq history`"])
    status, out, err = uq(capsys, "history", "--store", db)
    assert (status, err) == (None, "")
    assert f"  {plain(row['`uq history`'])}" in out.splitlines()[0]

    outcome, code = what_the_agent_sees(settled)
    assert outcome == plain(row["service event `outcome`"])
    expected = row["the asker's `ask()`"]
    assert code == ("answer" if expected == "returns the answer" else plain(expected))


def end(client: TestClient, asker: Any, state: str) -> None:
    """End request r1 the way the row's state says."""
    if state in ("answered", "dismissed"):
        result = (
            {"ok": True, "value": {"answer": ANSWER}}
            if state == "answered"
            else {"ok": False, "error": {"code": "cancelled"}}
        )
        response = {"type": "client-response", "rpcId": "r1", "result": result}
        assert client.post("/api/respond", headers=AUTH, json=response).json() == {"accepted": True}
        return
    withdraw: dict[str, str] = {"type": "withdraw", "rpcId": "r1"}
    if state == "timed-out":
        withdraw["reason"] = "timed-out"
    asker.send_json(withdraw)


def what_the_agent_sees(settled: dict[str, Any]) -> tuple[str, str]:
    """The service's `user-questions/resolved` outcome, and the answer or the error code, for an
    agent whose asker received the `ask/settled` payload `settled`."""

    class Settled:
        async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            answer = settled.get("answer")
            parsed = None if answer is None else AskUserQuestionAnswer.model_validate(answer)
            return settled_answer(Outcome(settled["outcome"]), parsed)

    ctx = Context()
    ctx.plugin(UserQuestionService)
    ctx.user_questions.register_provider(Settled())
    heard: list[dict[str, Any]] = []
    ctx.on(RESOLVED_EVENT, heard.append)

    async def ask() -> str:
        try:
            await ctx.user_questions.ask(AskUserQuestionRequest(questions=[PICK]))
        except UserQuestionError as error:
            return str(error.code)
        return "answer"

    code = anyio.run(ask)
    return str(heard[0]["outcome"]), code
