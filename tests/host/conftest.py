"""Fixtures for the host: a hub over a fresh SQLite store, and client-responses as pages send."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from user_questions.frames import ClientResponse, JSONObject
from user_questions.host.hub import Hub, PageSubscription
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
