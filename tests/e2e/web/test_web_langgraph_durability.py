"""A LangGraph agent killed while its question waits, started again, answered in the browser.

The agent (tests/e2e/langgraph_agent.py) keeps its graph in a SQLite checkpointer and asks
through the host. It is SIGKILLed while the question is on the page, started again, and the
person answers in Chromium: the restarted agent re-attaches to the same request (one card, one
record), and the graph resumes exactly once with that answer, which the side-effect file proves.
A third start finds nothing to ask and changes nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.e2e.host_process import ROOT, read_line
from tests.e2e.web.conftest import ANSWER_SECONDS, Host, OpenInbox


def start_agent(host: Host, session: str, tmp_path: Path) -> subprocess.Popen[bytes]:
    """The agent, once it follows its thread. Its output is read unbuffered: a text stream
    would read its last line ahead with the first, where `communicate` cannot see it."""
    command = [sys.executable, "-m", "tests.e2e.langgraph_agent", host.url, session]
    command += [str(tmp_path / "graph.db"), str(tmp_path / "effects.txt")]
    agent = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, bufsize=0)
    assert agent.stdout is not None
    assert read_line(agent.stdout, 60).split() == ["following", "durable"]
    return agent


def pending_of(host: Host, session: str) -> list[dict[str, Any]]:
    """The session's pending requests, once there is at least one."""
    deadline = time.monotonic() + ANSWER_SECONDS
    while True:
        frames = [frame for frame in host.pending() if frame["payload"]["sessionId"] == session]
        if frames or time.monotonic() > deadline:
            return frames
        time.sleep(0.05)  # polling the host under a deadline


def finish(agent: subprocess.Popen[bytes]) -> dict[str, Any]:
    out, _ = agent.communicate(timeout=60)
    assert agent.returncode == 0, out
    values: dict[str, Any] = json.loads(out.decode().splitlines()[-1])
    return values


def test_a_killed_agent_resumes_exactly_once_with_the_answer_given_in_the_browser(
    host: Host, open_inbox: OpenInbox, session: str, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    first = start_agent(host, session, tmp_path)
    try:
        (asked,) = pending_of(host, session)
    finally:
        first.kill()
        first.communicate(timeout=30)
    assert pending_of(host, session) == [asked]  # the question outlives its asker
    assert not effects.exists()

    second = start_agent(host, session, tmp_path)
    try:
        inbox = open_inbox()
        card = inbox.card(session)
        expect(card).to_have_count(1)
        expect(card).to_contain_text("Which package manager should the project use?")
        card.locator(".option", has_text="uv").click()
        card.get_by_role("button", name="Submit").click()
        assert finish(second) == {"pkg": "uv (Recommended)"}
    finally:
        if second.poll() is None:
            second.kill()
            second.communicate(timeout=30)
    assert effects.read_text(encoding="utf-8").splitlines() == ["uv (Recommended)"]

    history = httpx.get(
        f"{host.base}/api/history", params={"session": session}, headers=host.auth, timeout=10
    ).json()["items"]
    assert [(entry["rpcId"], entry["outcome"]) for entry in history] == [
        (asked["rpcId"], "answered")
    ]

    third = start_agent(host, session, tmp_path)
    assert finish(third) == {"pkg": "uv (Recommended)"}
    assert effects.read_text(encoding="utf-8").splitlines() == ["uv (Recommended)"]
    assert [frame for frame in host.pending() if frame["payload"]["sessionId"] == session] == []
