"""The real app on a temporary SQLite store, with the admin token `TOKEN`, for the API tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from user_questions.host.app import create_app
from user_questions.host.config import HostConfig

TOKEN = "test-token-123"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))) as test_client:
        yield test_client
