"""Quorum approvals end to end: a real `uq serve`, an asker token made with the pinned
`uq token add NAME --role asker --approvals 2`, and the real `uq hook claude` asking about a Bash
call. One person's Allow leaves the hook waiting and the request pending, the same person again
changes nothing, a second person settles it allowed; a Deny after one approval settles it
denied; and the count is kept across a restart of the host between the two approvals."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import start_hook
from tests.e2e.host_process import HostProcess, answer_body, free_port
from tests.e2e.pty_terminal import ENTER, PtyTerminal
from tests.e2e.test_fair_share import accepted
from tests.e2e.test_host_cli import uq
from tests.e2e.test_uq_hook import UQ, fixture_text
from user_questions.cli import _answer


def add_token(db: Path, name: str, *grants: str) -> str:
    made = uq("token", "add", name, *grants, "--store", str(db))
    assert made.returncode == 0, made.stderr
    return made.stdout.splitlines()[0]


def people(host: HostProcess, db: Path) -> dict[str, str]:
    """The asker `deploy` (a quorum of 2) and the persons alice and bob: their tokens, once the
    running host accepts them."""
    tokens = {
        "deploy": add_token(db, "deploy", "--role", "asker", "--approvals", "2"),
        "alice": add_token(db, "alice"),
        "bob": add_token(db, "bob"),
    }
    for token in tokens.values():
        accepted(host, token)
    return tokens


def hook_asking(
    host: HostProcess, token: str, hooks: list[subprocess.Popen[str]], folder: Path
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    event = fixture_text("claude_code", "permission_request_bash")
    url = f"{host.base}/?token={token}"
    asking = start_hook([UQ, "hook", "claude", "--url", url], event, folder)
    hooks.append(asking)
    (card,) = host.wait_pending(1)
    return asking, card


def approve(host: HostProcess, token: str, card: dict[str, Any], label: str) -> dict[str, Any]:
    body = answer_body(
        card["rpcId"], card["payload"]["sessionId"], {"id": "approval", "selected": [label]}
    )
    response = httpx.post(
        f"{host.base}/api/respond",
        json=body,
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    receipt: dict[str, Any] = response.json()
    return receipt


def decision(hook: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = hook.communicate(timeout=30)
    assert (hook.returncode, err) == (0, "")
    printed: dict[str, Any] = json.loads(out)["hookSpecificOutput"]["decision"]
    return printed


def test_two_people_allow_the_call_the_hook_waiting_for_the_second(
    host: HostProcess, hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    assert host.db is not None
    tokens = people(host, host.db)
    asking, card = hook_asking(host, tokens["deploy"], hooks, tmp_path)
    first = approve(host, tokens["alice"], card, "Allow")
    assert first == {"accepted": True, "message": "1 of 2 approved: alice"}
    again = approve(host, tokens["alice"], card, "Allow")
    assert again["message"] == "your approval was counted already; 1 of 2 approved: alice"
    assert asking.poll() is None
    assert [frame["rpcId"] for frame in host.pending()] == [card["rpcId"]]
    waiting = uq("pending", "--url", host.base, "--token", tokens["bob"])
    assert waiting.returncode == 0, waiting.stderr
    assert waiting.stdout.rstrip().endswith("(1 of 2 approved: alice)"), waiting.stdout
    as_json = uq("pending", "--url", host.base, "--token", tokens["bob"], "--json")
    assert json.loads(as_json.stdout)["quorum"] == {"needed": 2, "approvedBy": ["alice"]}
    assert approve(host, tokens["bob"], card, "Allow") == {"accepted": True}
    assert decision(asking) == {"behavior": "allow"}
    listed = uq("token", "list", "--store", str(host.db)).stdout
    assert "approvals 2" in next(line for line in listed.splitlines() if line.startswith("deploy"))


def test_a_deny_after_one_approval_denies_the_call(
    host: HostProcess, hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    assert host.db is not None
    tokens = people(host, host.db)
    asking, card = hook_asking(host, tokens["deploy"], hooks, tmp_path)
    assert approve(host, tokens["alice"], card, "Allow")["message"] == "1 of 2 approved: alice"
    assert approve(host, tokens["bob"], card, "Deny") == {"accepted": True}
    assert decision(asking)["behavior"] == "deny"
    assert host.pending() == []


def test_the_count_survives_a_restart_between_the_approvals(
    hooks: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    """The hook gives up when its host goes away (Claude Code asks in its own terminal), but the
    request, and alice's approval of it, are the store's: after the restart her approval is
    still counted and bob's settles it."""
    db, port = tmp_path / "uq.db", free_port()
    host = HostProcess(db, port=port)
    host.start()
    try:
        tokens = people(host, db)
        _, card = hook_asking(host, tokens["deploy"], hooks, tmp_path)
        assert approve(host, tokens["alice"], card, "Allow")["message"] == "1 of 2 approved: alice"
        assert host.stop() == 0
        host = HostProcess(db, port=port)
        host.start()
        (again,) = host.wait_pending(1)
        assert again["rpcId"] == card["rpcId"]
        assert again["quorum"] == {"needed": 2, "approvedBy": ["alice"]}
        repeated = approve(host, tokens["alice"], card, "Allow")
        assert repeated["message"] == "your approval was counted already; 1 of 2 approved: alice"
        assert approve(host, tokens["bob"], card, "Allow") == {"accepted": True}
        history = httpx.get(f"{host.base}/api/history", headers=host.auth, timeout=10).json()
        (entry,) = history["items"]
        assert (entry["outcome"], entry["by"]) == ("answered", "bob")
        assert entry["answer"]["answers"][0]["selected"] == ["Allow"]
    finally:
        if host.process is not None and host.process.poll() is None:
            assert host.stop() == 0


def test_uq_answer_says_the_approval_was_counted_and_where_the_quorum_stands(
    host: HostProcess,
    hooks: list[subprocess.Popen[str]],
    spawn: type[PtyTerminal],
    tmp_path: Path,
) -> None:
    assert host.db is not None
    tokens = people(host, host.db)
    asking, _ = hook_asking(host, tokens["deploy"], hooks, tmp_path)
    terminal = spawn([UQ, "answer"], env={"UQ_URL": f"{host.base}/?token={tokens['alice']}"})
    terminal.wait_for("1. Allow")
    terminal.send("1" + ENTER)
    assert terminal.wait_exit() == _answer.EXIT_ANSWERED
    assert (
        terminal.display.splitlines()[-1] == "uq answer: approval counted: 1 of 2 approved: alice"
    )
    assert asking.poll() is None
