"""`uq mcp` as a subprocess, driven by the MCP SDK's own client over stdio."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from user_questions import tool_ask_user

pytestmark = pytest.mark.anyio
UQ = str(Path(sys.executable).with_name("uq"))
ARGS = {"questions": [{"id": "pkg", "question": "Which?", "options": [{"label": "pnpm"}]}]}


def uq_mcp(tmp_path: Path, script: dict[str, Any], *extra: str) -> StdioServerParameters:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    return StdioServerParameters(command=UQ, args=["mcp", "--scripted", str(path), *extra])


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_stdio_server_lists_and_answers_ask_user_question(
    tmp_path: Path, mode: str
) -> None:
    params = uq_mcp(tmp_path, {"answers": {"pkg": "pnpm"}})
    with anyio.fail_after(60):
        async with Client(params, mode=mode) as client:
            tools = (await client.list_tools()).tools
            ok = await client.call_tool("ask_user_question", ARGS)
            bad = await client.call_tool("ask_user_question", {"questions": [{"question": "?"}]})
    assert [(t.name, t.input_schema) for t in tools] == [
        ("ask_user_question", tool_ask_user.PARAMETERS)
    ]
    assert (ok.is_error, ok.content[0].text) == (  # type: ignore[union-attr]
        False,
        '{"answers":[{"id":"pkg","selected":["pnpm"]}]}',
    )
    assert (bad.is_error, bad.content[0].text) == (  # type: ignore[union-attr]
        True,
        'Error: invalid arguments: missing required property "questions[0].id"',
    )


async def test_progress_arrives_over_stdio_while_the_answer_is_pending(tmp_path: Path) -> None:
    params = uq_mcp(
        tmp_path, {"answers": {"pkg": "pnpm"}, "delay": 1.0}, "--progress-interval", "0.05"
    )
    ticks: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        ticks.append(progress)

    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool(
                "ask_user_question", ARGS, progress_callback=on_progress
            )
    assert not result.is_error
    assert ticks[:3] == [1, 2, 3]


async def test_a_cancelled_call_leaves_the_server_answering_the_next_one(tmp_path: Path) -> None:
    params = uq_mcp(
        tmp_path, {"answers": {"pkg": "pnpm"}, "delay": 0.5}, "--progress-interval", "0.05"
    )
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            async with anyio.create_task_group() as group:
                group.start_soon(
                    lambda: client.call_tool(
                        "ask_user_question", ARGS, progress_callback=on_progress
                    )
                )
                await started.wait()
                group.cancel_scope.cancel()
            result = await client.call_tool("ask_user_question", ARGS)
    assert result.content[0].text == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'  # type: ignore[union-attr]


def test_without_a_terminal_or_a_host_it_says_how_to_answer(tmp_path: Path) -> None:
    result = subprocess.run(
        [UQ, "mcp"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,  # no controlling terminal, as under an MCP client
    )
    assert result.returncode == 2
    assert "uq mcp: no terminal to ask on" in result.stderr
    assert "--url URL" in result.stderr


async def test_the_http_server_answers_over_streamable_http(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"answers": {"pkg": "pnpm"}}), encoding="utf-8")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [UQ, "mcp", "--http", "--port", str(port), "--scripted", str(script)]
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        async with await anyio.open_process(command, stdout=sink, stderr=sink) as server:
            try:
                with anyio.fail_after(60):
                    result = await _call_when_listening(f"http://127.0.0.1:{port}/mcp")
            finally:
                server.terminate()
    assert result.content[0].text == '{"answers":[{"id":"pkg","selected":["pnpm"]}]}'
    assert f"uq mcp: serving MCP at http://127.0.0.1:{port}/mcp" in log.read_text()


async def _call_when_listening(url: str) -> Any:
    while True:
        try:
            async with Client(url, mode="legacy") as client:
                return await client.call_tool("ask_user_question", ARGS)
        except Exception:  # not listening yet: poll under the caller's deadline
            await anyio.sleep(0.05)
