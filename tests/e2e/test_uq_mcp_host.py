"""`uq mcp --url`: the MCP tool answered in a real `uq serve` host, and withdrawn on cancel.

Runs once `uq serve` exists (the host is built separately); until then it is skipped.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.anyio
UQ = str(Path(sys.executable).with_name("uq"))
SESSION = "mcp-e2e"
ARGS = {"questions": [{"id": "pkg", "question": "Which?", "options": [{"label": "pnpm"}]}]}


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Any]:
    probe = subprocess.run([UQ, "serve", "--help"], capture_output=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("uq serve is not available yet")
    from tests.e2e.web.conftest import Host

    running = Host(tmp_path)
    running.start()
    yield running
    running.stop()


async def pending_of(host: Any) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = await anyio.to_thread.run_sync(host.pending)
    return [frame for frame in frames if frame["payload"]["sessionId"] == SESSION]


async def wait_until(host: Any, count: int) -> list[dict[str, Any]]:
    """Poll the host, under the caller's deadline, until `count` questions of ours are pending."""
    while True:
        frames = await pending_of(host)
        if len(frames) == count:
            return frames
        await anyio.sleep(0.05)  # the host has no push for askers' tests; poll under a deadline


async def test_a_question_asked_over_mcp_is_answered_in_the_host(host: Any) -> None:
    params = StdioServerParameters(
        command=UQ, args=["mcp", "--url", host.base, "--token", host.token, "--session", SESSION]
    )
    result: Any = None

    async def call(client: Client) -> None:
        nonlocal result
        result = await client.call_tool("ask_user_question", ARGS)

    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client, anyio.create_task_group() as group:
            group.start_soon(call, client)
            (frame,) = await wait_until(host, 1)
            answer = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
            receipt = host.respond(
                {
                    "type": "client-response",
                    "rpcId": frame["rpcId"],
                    "result": {"ok": True, "value": {"sessionId": SESSION, "answer": answer}},
                }
            )
            assert receipt == {"accepted": True}
    assert result.content[0].text == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'


async def test_cancelling_the_mcp_call_withdraws_the_question_from_the_host(host: Any) -> None:
    params = StdioServerParameters(
        command=UQ, args=["mcp", "--url", host.base, "--token", host.token, "--session", SESSION]
    )
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "ask_user_question", ARGS)
                await wait_until(host, 1)
                group.cancel_scope.cancel()
            assert await wait_until(host, 0) == []


async def _decide_over_mcp(host: Any, call: dict[str, Any], answer: dict[str, Any]) -> Any:
    """Call `approve` through `uq mcp --permission-tool` and answer its card at the host."""
    params = StdioServerParameters(
        command=UQ,
        args=["mcp", "--url", host.asker_url, "--session", SESSION, "--permission-tool"],
    )
    result: Any = None

    async def approve(client: Client) -> None:
        nonlocal result
        result = await client.call_tool("approve", call)

    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client, anyio.create_task_group() as group:
            assert "approve" in [tool.name for tool in (await client.list_tools()).tools]
            group.start_soon(approve, client)
            (frame,) = await wait_until(host, 1)
            card = frame["payload"]["questions"][0]
            assert card["question"] == "Allow Claude to run Bash: rm -rf build?"
            assert card["detail"] == "Clean the build\n\n```sh\nrm -rf build\n```"
            response = {"sessionId": SESSION, "answer": {"answers": [answer]}}
            receipt = host.respond(
                {
                    "type": "client-response",
                    "rpcId": frame["rpcId"],
                    "result": {"ok": True, "value": response},
                }
            )
            assert receipt == {"accepted": True}
    return json.loads(result.content[0].text)


BASH_CALL = {
    "tool_name": "Bash",
    "input": {"command": "rm -rf build", "description": "Clean the build"},
    "tool_use_id": "toolu_01",
}


async def test_the_permission_tool_allows_with_the_input_when_the_person_allows(
    host: Any,
) -> None:
    decided = await _decide_over_mcp(host, BASH_CALL, {"id": "approval", "selected": ["Allow"]})
    assert decided == {"behavior": "allow", "updatedInput": BASH_CALL["input"]}


async def test_the_permission_tool_denies_with_the_reason_the_person_typed(host: Any) -> None:
    decided = await _decide_over_mcp(
        host, BASH_CALL, {"id": "approval", "selected": [], "custom": "not on main"}
    )
    assert decided == {
        "behavior": "deny",
        "message": "The user denied this Bash call and said: not on main",
    }
