"""The real Claude Code running uq's hooks, answered at a real host: opt-in.

Set `UQ_CLAUDE_CODE` to a Claude Code binary (the `claude` of the npm package
`@anthropic-ai/claude-code-linux-x64`; checked with 2.1.332 and 2.1.333) to run these; they are
skipped otherwise, since CI has no Claude Code. The model's side is `tests/e2e/messages_api.py` on
loopback (the API is the only thing replaced); Claude Code runs in its SDK mode (stream-json on
stdin and stdout), where it offers `AskUserQuestion` and runs its hooks as in a terminal. A
scripted answer is given at the host, as a page would, and the test reads the tool result Claude
Code sent back to the model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.host_process import HostProcess, answer_body, free_port

CLAUDE = os.environ.get("UQ_CLAUDE_CODE", "")
UQ = str(Path(sys.executable).with_name("uq"))
ROOT = Path(__file__).resolve().parents[2]
QUESTION = {
    "question": "Which database should the shop use?",
    "header": "Database",
    "options": [
        {"label": "PostgreSQL", "description": "Durable"},
        {"label": "SQLite", "description": "One file"},
    ],
    "multiSelect": False,
}
BASH = {"command": "rm -rf build && echo removed", "description": "Remove the build folder"}

if not CLAUDE:
    pytest.skip("set UQ_CLAUDE_CODE to a Claude Code binary to run", allow_module_level=True)


def run_claude(
    tmp_path: Path, host: HostProcess, script: list[dict[str, Any]], answer: Any, *args: str
) -> list[Any]:
    """Run Claude Code on `script` with uq's hooks; `answer(frame)` answers the one card. The
    tool results Claude Code sent to the model, in order, once it has sent one per tool call
    of the script."""
    calls = sum(1 for turn in script if "text" not in turn)
    home, project = tmp_path / "home", tmp_path / "project"
    (project / "build").mkdir(parents=True, exist_ok=True)
    environ = {**os.environ, "HOME": str(home), "UQ_URL": host.asker_url}
    install = [UQ, "hook", "install", "claude", "--store", str(host.db), "--url", host.base]
    subprocess.run(install, env=environ, check=True, timeout=60)  # an asker token of its own
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    port, log = free_port(), tmp_path / "api.log"
    api = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.e2e.messages_api",
            str(port),
            str(tmp_path / "script.json"),
            str(log),
        ],
        cwd=ROOT,
    )
    try:
        environ |= {
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": "sk-loopback",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        claude = subprocess.Popen(
            [
                CLAUDE,
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-prompt-tool",
                "stdio",
                *args,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=project,
            env=environ,
            text=True,
        )
        assert claude.stdin is not None
        claude.stdin.write(
            json.dumps({"type": "user", "message": {"role": "user", "content": "go"}}) + "\n"
        )
        claude.stdin.flush()
        (frame,) = host.wait_pending(1, seconds=60)
        assert host.respond(answer(frame)) == {"accepted": True}
        deadline = time.monotonic() + 60
        while len(_results(log)) < calls and time.monotonic() < deadline:
            time.sleep(0.1)  # Claude Code's next API request carries the result: poll its log
        claude.stdin.close()
        claude.wait(timeout=60)
    finally:
        api.terminate()
        api.wait(timeout=30)
    return _results(log)


def _results(log: Path) -> list[Any]:
    """The tool results in the requests logged so far, once each (each request repeats the
    conversation)."""
    found: dict[str, Any] = {}
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    for messages in map(json.loads, lines):
        for message in messages:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    found.setdefault(block["tool_use_id"], block)
    return list(found.values())


def test_claude_code_gets_the_answer_given_in_the_inbox(tmp_path: Path, host: HostProcess) -> None:
    script: list[dict[str, Any]] = [
        {"tool_use": {"name": "AskUserQuestion", "input": {"questions": [QUESTION]}}},
        {"text": "Noted."},
    ]

    def pick_sqlite(frame: dict[str, Any]) -> dict[str, Any]:
        assert frame["payload"]["sessionId"].startswith("claude-code:")
        return answer_body(
            frame["rpcId"], frame["payload"]["sessionId"], {"id": "q1", "selected": ["SQLite"]}
        )

    (result,) = run_claude(tmp_path, host, script, pick_sqlite)
    assert '"Which database should the shop use?"="SQLite"' in str(result["content"])


def test_dont_ask_again_writes_claude_codes_own_rule(tmp_path: Path, host: HostProcess) -> None:
    script: list[dict[str, Any]] = [
        {"tool_use": {"name": "Bash", "input": BASH}},
        {"text": "Done."},
    ]

    def always(frame: dict[str, Any]) -> dict[str, Any]:
        item = {"id": "approval", "selected": ["Allow and don't ask again"]}
        return answer_body(frame["rpcId"], frame["payload"]["sessionId"], item)

    (result,) = run_claude(tmp_path, host, script, always)
    assert result["content"] == "removed"
    local = json.loads((tmp_path / "project" / ".claude" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == [f"Bash({BASH['command']})"]


def test_keep_planning_sends_the_feedback_to_the_model(tmp_path: Path, host: HostProcess) -> None:
    script: list[dict[str, Any]] = [
        {"write_plan": "# Add a cache\n\n1. Put a Cache in front of the store.\n"},
        {"tool_use": {"name": "ExitPlanMode", "input": {}}},
        {"text": "Planning more."},
    ]

    def feedback(frame: dict[str, Any]) -> dict[str, Any]:
        assert frame["payload"]["questions"][0]["detail"].startswith("# Add a cache")
        item = {"id": "plan-review", "selected": [], "custom": "Cache reads only."}
        return answer_body(frame["rpcId"], frame["payload"]["sessionId"], item)

    results = run_claude(tmp_path, host, script, feedback, "--permission-mode", "plan")
    assert "said: Cache reads only." in str(results[-1]["content"])
    assert results[-1]["is_error"] is True
