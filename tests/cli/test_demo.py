"""`uq demo`'s agent: a real kernel asking through the host, printing what comes back.

The whole command, with its host, is run in tests/e2e/test_host_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.host.conftest import answer, dismissal, next_frame
from user_questions.cli._demo import BATCH, demo_agent
from user_questions.host.hub import Hub
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.outcomes import Surface

pytestmark = pytest.mark.anyio


async def test_the_demo_agent_prints_each_answer_and_asks_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with (
        SQLiteStore(tmp_path / "host.db") as store,
        Hub(store) as hub,
        anyio.create_task_group() as task_group,
    ):
        page = hub.subscribe()
        task_group.start_soon(demo_agent, hub)

        batch = await next_frame(page)
        assert batch["payload"]["sessionId"] == "demo-agent"
        questions = batch["payload"]["questions"]
        assert [question["id"] for question in questions] == [
            question["id"] for question in BATCH["questions"]
        ]
        assert questions[0]["options"][0]["label"] == "uv (Recommended)"
        assert questions[1]["multiSelect"] is True
        await hub.respond(
            answer(
                batch["rpcId"],
                "demo-agent",
                {"id": "package-manager", "selected": ["pip + venv"]},
                {"id": "checks", "selected": []},
                {"id": "service-name", "selected": []},
            ),
            via=Surface.WEB,
        )
        await next_frame(page)  # resolved
        plan = await next_frame(page)
        assert plan["payload"]["questions"][0]["intent"]["approve"] == "Approve"
        await hub.respond(dismissal(plan["rpcId"]), via=Surface.WEB)
        await next_frame(page)  # resolved
        again = await next_frame(page)
        assert again["payload"]["questions"][0]["id"] == "package-manager"
        task_group.cancel_scope.cancel()

    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[round 1] ask_user_question -> ")
    assert json.loads(lines[0].split(" -> ", 1)[1])["answers"][0] == {
        "id": "package-manager",
        "selected": ["pip + venv"],
    }
    assert lines[1] == "[round 1] exit_plan_mode -> Error: the user cancelled ask_user_question"
    assert len(lines) == 2
