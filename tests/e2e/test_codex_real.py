"""The real Codex running uq's hook, answered at a real host: opt-in.

Set `UQ_CODEX` to a Codex binary (the `codex` of the npm package `@openai/codex`, linux-x64
build; checked with 0.171.0) to run these; they are skipped otherwise. The model's side is
`tests/e2e/responses_api.py` on loopback. `codex exec --approve-for-me` sends approvals to its
automatic reviewer, and `PermissionRequest` hooks run before that reviewer, so the hook decides;
`--dangerously-bypass-hook-trust` stands for trusting the hook in `/hooks`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.host_process import HostProcess, answer_body, free_port

CODEX = os.environ.get("UQ_CODEX", "")
UQ = str(Path(sys.executable).with_name("uq"))
ROOT = Path(__file__).resolve().parents[2]
ESCALATED = {
    "name": "exec_command",
    "arguments": {
        "cmd": "rm -rf build && echo removed",
        "sandbox_permissions": "require_escalated",
        "justification": "Remove the build folder",
    },
}

if not CODEX:
    pytest.skip("set UQ_CODEX to a Codex binary to run", allow_module_level=True)


def run_codex(tmp_path: Path, host: HostProcess, answer: dict[str, Any]) -> list[str]:
    """Run `codex exec` whose model asks to run a command outside the sandbox; the card is
    answered with `answer`. The function call outputs Codex sent back to the model."""
    codex_home, project = tmp_path / "codex-home", tmp_path / "project"
    codex_home.mkdir()
    (project / "build").mkdir(parents=True)
    port, log = free_port(), tmp_path / "api.log"
    (codex_home / "config.toml").write_text(
        'model = "gpt-5-codex"\nmodel_provider = "loopback"\n[model_providers.loopback]\n'
        f'name = "loopback"\nbase_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
        'env_key = "LOOPBACK_KEY"\n',
        encoding="utf-8",
    )
    environ = {**os.environ, "CODEX_HOME": str(codex_home), "UQ_URL": host.asker_url}
    install = [UQ, "hook", "install", "codex", "--store", str(host.db), "--url", host.base]
    subprocess.run(install, env=environ, check=True, timeout=60)  # an asker token of its own
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"call": ESCALATED}, {"text": "Done."}]), encoding="utf-8")
    api = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.responses_api", str(port), str(script), str(log)],
        cwd=ROOT,
    )
    try:
        codex = subprocess.Popen(
            [
                CODEX,
                "exec",
                "--skip-git-repo-check",
                "--approve-for-me",
                "--dangerously-bypass-hook-trust",
                "go",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=project,
            env={**environ, "LOOPBACK_KEY": "sk-loopback"},
        )
        (frame,) = host.wait_pending(1, seconds=60)
        assert frame["payload"]["sessionId"].startswith("codex:")
        card = frame["payload"]["questions"][0]
        assert card["question"] == "Allow Codex to run Bash: rm -rf build && echo removed?"
        item = {"id": "approval", **answer}
        assert host.respond(answer_body(frame["rpcId"], frame["payload"]["sessionId"], item)) == {
            "accepted": True
        }
        assert codex.wait(timeout=60) == 0
    finally:
        api.terminate()
        api.wait(timeout=30)
    return [
        item["output"]
        for line in log.read_text(encoding="utf-8").splitlines()
        for item in json.loads(line)
        if item.get("type") == "function_call_output"
    ]


def test_codex_runs_the_command_allowed_in_the_inbox(tmp_path: Path, host: HostProcess) -> None:
    outputs = run_codex(tmp_path, host, {"selected": ["Allow"]})
    assert "removed" in outputs[-1]
    assert not (tmp_path / "project" / "build").exists()


def test_codex_tells_the_model_the_reason_for_a_denial(tmp_path: Path, host: HostProcess) -> None:
    outputs = run_codex(tmp_path, host, {"selected": [], "custom": "keep the build"})
    assert "The user denied this Bash call and said: keep the build" in outputs[-1]
    assert (tmp_path / "project" / "build").exists()
