"""Fixtures for the host: a hub over a fresh SQLite store, the host app in process (`client`, with
the admin token `TOKEN`), the frames pages and askers send, and a store of each backend
(`make_store`, `store`: the store contract and the hub's timers run against every one of
`STORES`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from user_questions.frames import ClientResponse, JSONObject
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.hub import Hub, PageSubscription
from user_questions.host.stores import Store, open_store
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption, PlanReviewIntent

PICK = AskUserQuestionItem(
    id="pick",
    question="Which one?",
    options=[AskUserQuestionOption(label="a"), AskUserQuestionOption(label="b")],
)
MANY = AskUserQuestionItem(
    id="many",
    question="Which ones?",
    multi_select=True,
    options=[AskUserQuestionOption(label="x"), AskUserQuestionOption(label="y")],
)
PLAN = AskUserQuestionItem(
    id="plan-review",
    question="Approve?",
    detail="# Plan\n<script>alert(1)</script>",
    options=[AskUserQuestionOption(label="Approve"), AskUserQuestionOption(label="Keep planning")],
    intent=PlanReviewIntent(approve="Approve"),
)


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    async with SQLiteStore(tmp_path / "host.db") as store, Hub(store) as running:
        yield running


def answer(rpc_id: str, session: str, *items: JSONObject) -> ClientResponse:
    """A page's client-response answering `rpc_id` with these answer items."""
    return ClientResponse.model_validate(
        {
            "type": "client-response",
            "rpcId": rpc_id,
            "result": {"ok": True, "value": {"sessionId": session, "answer": {"answers": items}}},
        }
    )


def dismissal(rpc_id: str) -> ClientResponse:
    """A page's client-response dismissing `rpc_id`."""
    return ClientResponse.model_validate(
        {
            "type": "client-response",
            "rpcId": rpc_id,
            "result": {"ok": False, "error": {"code": "cancelled", "message": "dismissed"}},
        }
    )


async def next_frame(subscription: PageSubscription) -> dict[str, Any]:
    """The next frame pushed to a page, parsed; fails after 5 s."""
    with anyio.fail_after(5):
        frame: dict[str, Any] = json.loads(await subscription.frames.receive())
    return frame


# -- the host app in process ------------------------------------------------------------------

TOKEN = "test-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """The host app on a temporary SQLite store, its start-up token `TOKEN`."""
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))) as test_client:
        yield test_client


def ask_frame(rpc_id: str, *questions: AskUserQuestionItem, session: str = "s") -> dict[str, Any]:
    return {
        "type": "ask",
        "rpcId": rpc_id,
        "sessionId": session,
        "questions": [question.model_dump(mode="json") for question in questions],
    }


def answer_frame(rpc_id: str, session: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "client-response",
        "rpcId": rpc_id,
        "result": {"ok": True, "value": {"sessionId": session, "answer": {"answers": list(items)}}},
    }


def dismiss_frame(rpc_id: str) -> dict[str, Any]:
    return {
        "type": "client-response",
        "rpcId": rpc_id,
        "result": {
            "ok": False,
            "error": {"code": "cancelled", "message": "dismissed in the browser"},
        },
    }


def ask(client: TestClient, rpc_id: str, *questions: AskUserQuestionItem) -> None:
    """Submit a request through the asker socket, as a `RemoteProvider` would."""
    with client.websocket_connect("/ws/ask", headers=AUTH) as asker:
        asker.send_json(ask_frame(rpc_id, *questions))
        assert asker.receive_json() == {"rpcId": rpc_id, "payload": {"type": "ask/pending"}}


# -- the store under test: each backend of `STORES` ----------------------------------------------

StoreFactory = Callable[..., Store]
"""`make_store()` opens a host's handle; `make_store(host=False)` a command's, beside it."""

STORES = ["sqlite", "postgresql"]
"""Backends the contract tests run against (PostgreSQL: a real server, see `tests/pg.py`)."""
TELLS_CHANGES = {"sqlite": False, "postgresql": True}
"""Whether a host's store of the backend tells its change listeners of writes made through other
handles: SQLite has one host per file, so it never calls them."""


@pytest.fixture(params=STORES)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Opens (with `async with`) new handles on one fresh store of the backend."""
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")  # a fresh database for this test
        return lambda host=True: open_store(url, host=host)
    return lambda host=True: open_store(tmp_path / "host.db", host=host)


@pytest.fixture
async def store(make_store: StoreFactory) -> AsyncIterator[Store]:
    async with make_store() as opened:
        yield opened


@pytest.fixture
def tells_changes(make_store: StoreFactory, request: pytest.FixtureRequest) -> bool:
    """Whether `make_store`'s backend calls change listeners (`TELLS_CHANGES`)."""
    return TELLS_CHANGES[request.node.callspec.params["make_store"]]
