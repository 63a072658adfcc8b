"""`uq mcp --permission-tool`, driven through the MCP SDK's own client, against a host that
misbehaves one way per case (tests/standin.py): the `approve` tool never allows but for the
honest control, and answers within its documented deadline, timed here from the call; a host
refused at start stops `uq mcp` with one line, in time.

The deadlines (docs/security.md, "Fail closed"): at start, one connection attempt of
`min(10 s, --unreachable-limit)`; an `approve` call within `--permission-timeout`, or, on a host
that stays of no use, `--unreachable-limit` plus a pause and an attempt; either way plus the
withdrawal's window. The cases run side by side, each process timed on its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import TextContent

from tests.e2e.host_process import free_port
from tests.e2e.test_uq_hook import UQ
from tests.standin import StandIn
from user_questions.providers.remote import BACKOFF_MAX

pytestmark = pytest.mark.anyio

LIMIT = 1.0
"""`--unreachable-limit`, and so the connect timeout (`min(10 s, LIMIT)`)."""
DECIDE = 3.0
"""`--permission-timeout`."""
MARGIN = 3.0
"""Seconds for a loaded machine, on top of each documented bound."""
STARTUP = 6.0
"""Seconds for `uq mcp` to start (the MCP SDK is a large import) on a loaded machine."""
CALL = {"tool_name": "Bash", "input": {"command": "npm test"}, "tool_use_id": "toolu_01"}

AFTER_START: dict[str, tuple[str, float]] = {
    "allow": ("allow", MARGIN),
    "deny": ("The user denied this Bash call.", MARGIN),
    "pending": ("did not decide within 3 s", DECIDE + LIMIT + MARGIN),
    "ws-always-not-offered": ("is not one of its options", MARGIN),
    "silent-after": ("has been unreachable for 1 s", LIMIT + BACKOFF_MAX + 2 * LIMIT + MARGIN),
    "close-1000": ("closed with code 1000", LIMIT + BACKOFF_MAX + 2 * LIMIT + MARGIN),
    "close-4401": ("no longer accepts the token (close code 4401)", MARGIN),
}
"""What `approve` says (`allow`, or a fragment of its denial) and how long it may take."""

AT_START: dict[str, tuple[int, str]] = {
    "redirect-other": (1, "redirected the asker connection (HTTP 302) to ws://"),
    "error-503-body": (1, "HTTP 503"),
    "drip": (1, "timed out during opening handshake"),
    "two-roles": (0, "said the token's role unreadably"),
    "closed-port": (1, "did not answer"),
}
"""How `uq mcp` stops when the host is refused at start: its exit status (0 for a gate left to
the CLI's own prompt, 1 for a host it cannot use) and its one line."""


def arguments(url: str) -> list[str]:
    return [
        "mcp",
        "--url",
        url,
        "--permission-tool",
        "--unreachable-limit",
        f"{LIMIT:g}",
        "--permission-timeout",
        f"{DECIDE:g}",
    ]


async def approve(url: str) -> tuple[Any, float]:
    """`approve` called once through `uq mcp` at `url`: its decision, and how long the call took."""
    environ = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    params = StdioServerParameters(command=UQ, args=arguments(url), env=environ)
    async with Client(params, mode="legacy") as client:
        started = time.monotonic()
        result = await client.call_tool("approve", CALL)
        took = time.monotonic() - started
    (content,) = result.content
    assert isinstance(content, TextContent)
    return json.loads(content.text), took


@pytest.mark.parametrize("case", sorted(AFTER_START))
async def test_approve_never_allows_on_a_failure_and_answers_in_time(
    stand_in: StandIn, case: str
) -> None:
    said, bound = AFTER_START[case]
    with anyio.fail_after(STARTUP + bound + 10):
        decision, took = await approve(stand_in.url(case))
    if case == "allow":
        assert decision == {"behavior": "allow", "updatedInput": CALL["input"]}
    else:
        assert decision["behavior"] == "deny", decision
        assert said in decision["message"], decision
    assert took < bound, f"took {took:.2f} s, more than {bound:g} s"


@pytest.mark.parametrize("case", sorted(AT_START))
def test_a_host_refused_at_start_stops_uq_mcp_with_one_line_in_time(
    stand_in: StandIn, case: str
) -> None:
    status, said = AT_START[case]
    environ = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    url = (
        f"http://127.0.0.1:{free_port()}/?token=t" if case == "closed-port" else stand_in.url(case)
    )
    started = time.monotonic()
    ended = subprocess.run(
        [UQ, *arguments(url)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )
    took = time.monotonic() - started
    assert (ended.returncode, ended.stdout) == (status, ""), ended.stderr
    assert ended.stderr.startswith("uq mcp: "), ended.stderr
    assert said in ended.stderr
    assert ended.stderr.count("\n") == 1, ended.stderr  # one line, never a traceback
    assert took < STARTUP + LIMIT + MARGIN, f"took {took:.2f} s"
