"""The room as `create_app` mounts it: without the SDK both A2A routes say how to install it,
and nothing else of the host changes."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from user_questions.host.app import create_app
from user_questions.host.config import HostConfig

TOKEN = "test-token-a2a"
MISSING = "this host speaks A2A with its a2a extra: pip install 'user-questions[a2a]'"


@pytest.fixture
def without_the_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "a2a" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)  # as the room asks for it
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))) as client:
        yield client


def test_without_the_sdk_both_routes_say_how_to_install_it(without_the_sdk: TestClient) -> None:
    card = without_the_sdk.get("/.well-known/agent-card.json")
    assert (card.status_code, card.json()["error"]) == (
        404,
        {"code": "NOT_FOUND", "message": MISSING},
    )
    rpc = without_the_sdk.post("/a2a", json={}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert (rpc.status_code, rpc.json()["error"]["message"]) == (404, MISSING)
    assert without_the_sdk.get("/healthz").json() == {"ok": True}
