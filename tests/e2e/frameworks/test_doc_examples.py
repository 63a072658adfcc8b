"""The framework examples in docs/examples run against a real host and print what they promise.

Each example is run as its reader would run it, with `UQ_URL` naming the host; the person
answers each question as it appears, through the host.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import pytest

from tests.e2e.frameworks.conftest import WAIT_SECONDS
from tests.e2e.host_process import ROOT, HostProcess, answer_body

pytestmark = pytest.mark.anyio

EXAMPLES = ROOT / "docs" / "examples"

# Example file -> what the person answers, by question id, in turn; and the line it prints.
CASES: dict[str, tuple[list[dict[str, Any]], str]] = {
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


async def answer_in_turn(host: HostProcess, answers: list[dict[str, Any]]) -> None:
    """Answer each of `answers` once its question is pending on the host."""
    with anyio.fail_after(WAIT_SECONDS * len(answers)):
        for item in answers:
            while True:
                pending = await anyio.to_thread.run_sync(host.pending)
                frames = [
                    frame
                    for frame in pending
                    if [question["id"] for question in frame["payload"]["questions"]]
                    == [item["id"]]
                ]
                if frames:
                    break
                await anyio.sleep(0.05)  # polling the host over HTTP; there is nothing to wait on
            (frame,) = frames
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


async def test_the_ag_ui_example_resumes_its_run_with_the_answers(host: HostProcess) -> None:
    example = EXAMPLES / "ag_ui_interrupts.py"
    printed = "sent the email to a@b.com and archived the thread"
    assert printed in example.read_text(encoding="utf-8"), "the docstring says it"

    async def person() -> None:
        """Both interrupts are one request: allow the email, and say Yes."""
        with anyio.fail_after(WAIT_SECONDS):
            while True:
                pending = await anyio.to_thread.run_sync(host.pending)
                ids = [[q["id"] for q in frame["payload"]["questions"]] for frame in pending]
                if ["int-send", "int-archive"] in ids:
                    break
                await anyio.sleep(0.05)  # polling the host over HTTP; there is nothing to wait on
        frame = pending[ids.index(["int-send", "int-archive"])]
        allow = {"id": "int-send", "selected": ["Allow"]}
        body = answer_body(
            frame["rpcId"],
            frame["payload"]["sessionId"],
            allow,
            {"id": "int-archive", "selected": ["Yes"]},
        )
        assert await anyio.to_thread.run_sync(host.respond, body) == {"accepted": True}

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(person)
            result = await anyio.run_process(
                [sys.executable, str(example)],
                env={**os.environ, "UQ_URL": host.asker_url},
                check=False,
            )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines() == [printed]
