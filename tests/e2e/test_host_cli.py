"""`uq serve` and `uq demo` as a person runs them: the printed URL, restarts, signals, errors."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.e2e.host_process import ROOT, HostProcess, answer_body, free_port

URL = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9._~-]+)$")


def uq(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "user_questions.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_serve_prints_the_admin_url_and_the_agents_url_with_the_real_port(tmp_path: Path) -> None:
    host = HostProcess(tmp_path / "host.db")
    first = host.start()
    match = URL.match(first)
    assert match is not None, first
    assert match.group(1) != "0"
    assert host.asker_url.startswith(f"{host.base}/?token=")
    assert host.asker_url != first
    assert httpx.get(f"{host.base}/healthz", timeout=10).json() == {"ok": True}
    assert httpx.get(f"{host.base}/api/pending", timeout=10).status_code == 401
    me = httpx.get(f"{host.base}/api/me", headers=host.asker_auth, timeout=10).json()
    assert me == {"name": "agents", "role": "asker"}
    assert httpx.get(f"{host.base}/api/me", headers=host.auth, timeout=10).json()["role"] == "admin"
    assert host.stop(signal.SIGINT) == 0
    assert host.rest_of_stdout == ""  # the two lines, and nothing else on stdout

    again = HostProcess(tmp_path / "host.db")
    again.start()
    assert again.token == host.token
    assert again.asker_url.partition("?")[2] == host.asker_url.partition("?")[2]  # kept
    assert again.stop() == 0


def test_the_token_can_be_chosen_by_flag_or_environment(tmp_path: Path) -> None:
    host = HostProcess(tmp_path / "host.db", args=("--token", "chosen-by-flag"))
    assert host.start().endswith("?token=chosen-by-flag")
    assert host.stop() == 0
    host = HostProcess(tmp_path / "host.db", env={"UQ_TOKEN": "chosen-by-env"})
    assert host.start().endswith("?token=chosen-by-env")
    assert host.stop() == 0
    host = HostProcess(tmp_path / "host.db")  # the last one chosen is kept
    assert host.start().endswith("?token=chosen-by-env")
    assert host.stop() == 0


def test_listening_beyond_loopback_warns_loudly(tmp_path: Path) -> None:
    host = HostProcess(tmp_path / "host.db", args=("--host", "0.0.0.0"))
    host.start()
    assert host.stop() == 0
    assert host.stderr is not None
    assert host.stderr.startswith("warning: the host listens on 0.0.0.0, so other machines")
    assert "put TLS in front of it" in host.stderr


def test_start_up_problems_are_one_line_with_an_exit_status(tmp_path: Path) -> None:
    bad_token = uq("serve", "--store", str(tmp_path / "a.db"), "--token", "no spaces please")
    assert bad_token.returncode == 2
    assert (
        bad_token.stderr
        == "uq serve: a host token must be 8 to 512 characters from A-Z a-z 0-9 . _ ~ -\n"
    )
    assert not (tmp_path / "a.db").exists()

    host = HostProcess(tmp_path / "host.db")
    host.start()
    try:
        locked = uq("serve", "--store", str(tmp_path / "host.db"), "--port", "0")
        assert locked.returncode == 1
        assert "another host is using the store" in locked.stderr
        port = host.base.rsplit(":", 1)[1]
        busy = uq("serve", "--store", str(tmp_path / "other.db"), "--port", port)
        assert busy.returncode == 1
        assert busy.stderr.startswith(f"uq serve: cannot listen on 127.0.0.1:{port}")
        for result in (locked, busy):
            assert "Traceback" not in result.stderr
            assert result.stdout == ""
    finally:
        assert host.stop() == 0
    unknown = uq("serve", "--store", "mysql://example/questions")
    assert unknown.returncode == 2
    assert unknown.stderr.count("\n") == 1


def test_demo_asks_through_the_host_and_prints_what_it_receives() -> None:
    demo = HostProcess(None, command="demo")
    demo.start()
    try:
        (batch,) = demo.wait_pending(1)
        payload = batch["payload"]
        assert payload["sessionId"] == "demo-agent"
        questions = {question["id"]: question for question in payload["questions"]}
        assert questions["package-manager"]["options"][0]["label"].endswith("(Recommended)")
        assert questions["checks"]["multiSelect"] is True
        assert "options" not in questions["service-name"]
        receipt = demo.respond(
            answer_body(
                batch["rpcId"],
                "demo-agent",
                {"id": "package-manager", "selected": ["uv (Recommended)"]},
                {"id": "checks", "selected": ["Lint", "Unit tests"]},
                {"id": "service-name", "selected": [], "custom": "limiter"},
            )
        )
        assert receipt == {"accepted": True}
        printed = demo.line()
        assert printed.startswith("[round 1] ask_user_question -> ")
        assert json.loads(printed.split(" -> ", 1)[1]) == {
            "answers": [
                {"id": "package-manager", "selected": ["uv (Recommended)"]},
                {"id": "checks", "selected": ["Unit tests", "Lint"]},
                {"id": "service-name", "selected": [], "custom": "limiter"},
            ]
        }

        (plan,) = demo.wait_pending(1)
        (question,) = plan["payload"]["questions"]
        assert question["intent"] == {"kind": "plan-review", "approve": "Approve"}
        assert "<table>" in plan["rendered"]["plan-review"]
        demo.respond(
            answer_body(plan["rpcId"], "demo-agent", {"id": "plan-review", "selected": ["Approve"]})
        )
        assert demo.line() == (
            "[round 1] exit_plan_mode -> "
            "The user approved the plan. Leave plan mode and carry it out."
        )
        demo.wait_pending(1)  # and it asks again, until stopped
    finally:
        assert demo.stop() == 0


def test_behind_a_proxy_the_host_prints_its_public_url_and_takes_that_origin(
    tmp_path: Path,
) -> None:
    public = "https://uq.example.com/team/"
    port = free_port()
    host = HostProcess(tmp_path / "host.db", port=port, args=("--public-url", public))
    printed = host.start()
    assert printed.startswith(f"{public}?token=")
    # What a proxy at the public address forwards: the browser's Origin, the proxy's own Host.
    headers = {"Origin": "https://uq.example.com", "Authorization": f"Bearer {host.token}"}
    listening = f"http://127.0.0.1:{port}"
    assert httpx.get(f"{listening}/api/pending", headers=headers, timeout=10).status_code == 200
    headers["Origin"] = "https://evil.example.com"
    assert httpx.get(f"{listening}/api/pending", headers=headers, timeout=10).status_code == 403
    assert host.stop() == 0
