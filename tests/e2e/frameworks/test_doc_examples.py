"""The framework examples in docs/examples run against a real host and print what they promise.

Each example is run as its reader would run it, with `UQ_URL` naming the host; the person
answers each question as it appears, through the host.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import pytest
from websockets.asyncio.connection import Connection

from tests.e2e.frameworks.conftest import WAIT_SECONDS
from tests.e2e.host_process import ROOT, HostProcess, answer_body

pytestmark = pytest.mark.anyio

EXAMPLES = ROOT / "docs" / "examples"

# Example file -> what the person answers, by question id, in turn; and the line it prints.
CASES: dict[str, tuple[list[dict[str, Any]], str]] = {
    "ag_ui_interrupts.py": (
        [
            {
                "id": "int-send",
                "selected": ["Allow"],
                "edited": {"to": "c@d.com", "subject": "Hi", "body": "The build is green."},
            },
            {"id": "int-file", "selected": [], "value": {"folder": "Archive", "days": 30}},
        ],
        "sent the email to c@d.com and filed the thread in Archive for 30 days",
    ),
    "langgraph_ask.py": (
        [{"id": "pkg", "selected": ["uv (Recommended)"]}],
        '{"pkg": "uv (Recommended)"}',
    ),
    "pydantic_ai_ask.py": (
        [{"id": "env", "selected": ["staging"]}, {"id": "approval", "selected": ["Allow"]}],
        "deployed to staging",
    ),
    "openai_agents_ask.py": (
        [
            {"id": "name", "selected": [], "custom": "shop"},
            {"id": "approval", "selected": ["Allow"]},
        ],
        "created shop",
    ),
}


def question_ids(frame: dict[str, Any]) -> list[str]:
    return [question["id"] for question in frame["payload"]["questions"]]


async def shown(page: Connection, ids: list[str]) -> dict[str, Any]:
    """The `question/requested` frame whose questions have `ids`, as the page is shown it (in
    the snapshot it gets on connecting, or pushed the moment the request is stored)."""
    while True:
        frame = json.loads(await page.recv())
        kind = frame["payload"]["type"]
        if kind == "question/replay":
            requests = frame["payload"]["requests"]
        elif kind == "question/requested":
            requests = [frame]
        else:
            continue
        for request in requests:
            if question_ids(request) == ids:
                return dict(request)


async def answer_in_turn(host: HostProcess, answers: list[dict[str, Any]]) -> None:
    """Answer each of `answers` the moment its question is shown on a page."""
    async with await host.page() as page:
        with anyio.fail_after(WAIT_SECONDS * len(answers)):
            for item in answers:
                frame = await shown(page, [item["id"]])
                body = answer_body(frame["rpcId"], frame["payload"]["sessionId"], item)
                assert await anyio.to_thread.run_sync(host.respond, body) == {"accepted": True}


@pytest.mark.parametrize("name", sorted(CASES))
async def test_the_framework_example_prints_what_it_promises(host: HostProcess, name: str) -> None:
    answers, printed = CASES[name]
    assert printed in (EXAMPLES / name).read_text(encoding="utf-8"), "the docstring says it"
    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(answer_in_turn, host, answers)
            result = await anyio.run_process(
                [sys.executable, str(EXAMPLES / name)],
                env={**os.environ, "UQ_URL": host.asker_url},  # the agents' line of uq serve
                check=False,
            )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines() == [printed]
