"""`uq serve --tls-cert --tls-key`: https and wss, and every client verifying the host's
certificate, trusting a private authority only when told to (`--ca`, `ca=`, `SSL_CERT_FILE`).

The certificates are made by trustme for each test (`tests/e2e/certificates.py`); the browser's
side is in tests/e2e/web/test_web_deploy.py.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.e2e.certificates import Certificates, make_certificates
from tests.e2e.host_process import HostProcess, answer_body
from tests.e2e.test_uq_hook import fixture_text, hook
from user_questions import AbortController, ErrorCode, UserQuestionError, connect
from user_questions._host_link.tls import client_context
from user_questions.cli._acp_proxy import HostInbox
from user_questions.cli._hook_options import HookOptions
from user_questions.cli._hook_rule import rule_output
from user_questions.cli._host_client import host_address
from user_questions.service import AskUserQuestionRequest
from user_questions.types import AskUserQuestionItem

UQ = str(Path(sys.executable).with_name("uq"))
PICK = {"id": "pick", "question": "Which?", "options": [{"label": "a"}, {"label": "b"}]}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certificates"))


@pytest.fixture(scope="module")
def tls_host(
    tmp_path_factory: pytest.TempPathFactory, certs: Certificates
) -> Iterator[HostProcess]:
    """One host for the module; each test leaves nothing pending."""
    running = HostProcess(
        tmp_path_factory.mktemp("host") / "uq.db",
        args=("--tls-cert", str(certs.chain), "--tls-key", str(certs.key)),
        verify=client_context(certs.ca),
    )
    running.start()
    yield running
    running.stop()


def uq(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    return subprocess.run(
        [UQ, *args], capture_output=True, text=True, env={**environ, **(env or {})}, timeout=60
    )


def test_the_host_serves_https_and_its_url_says_so(
    tls_host: HostProcess, certs: Certificates
) -> None:
    assert tls_host.url.startswith("https://127.0.0.1:")
    assert tls_host.pending() == []  # verified against the private authority
    page = httpx.get(tls_host.url, verify=client_context(certs.ca), timeout=10)
    assert page.headers["set-cookie"].endswith("; Secure")
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{tls_host.base}/healthz", timeout=10)  # the system's authorities only
    with pytest.raises(httpx.HTTPError):
        httpx.get(tls_host.base.replace("https", "http", 1) + "/healthz", timeout=10)


def test_an_asker_over_wss_trusts_the_private_authority_it_is_given(
    tls_host: HostProcess, certs: Certificates
) -> None:
    async def ask() -> dict[str, Any]:
        answers: list[dict[str, Any]] = []
        async with (
            connect(tls_host.url, session="tls", ca=certs.ca) as asker,
            anyio.create_task_group() as group,
        ):

            async def wait_for_answer() -> None:
                answer = await asker.ask([PICK])
                answers.append(answer.model_dump(mode="json"))

            group.start_soon(wait_for_answer)
            (frame,) = await anyio.to_thread.run_sync(tls_host.wait_pending, 1)
            body = answer_body(frame["rpcId"], "tls", {"id": "pick", "selected": ["b"]})
            assert await anyio.to_thread.run_sync(tls_host.respond, body) == {"accepted": True}
        return answers[0]

    assert anyio.run(ask) == {"answers": [{"id": "pick", "selected": ["b"]}]}


def test_an_asker_that_does_not_trust_the_host_fails_at_once_saying_how_to(
    tls_host: HostProcess,
) -> None:
    async def ask() -> None:
        async with connect(tls_host.url, session="untrusting") as asker:
            await asker.ask([PICK])

    with pytest.raises(UserQuestionError) as failed:
        anyio.run(ask)
    assert failed.value.code == ErrorCode.HOST_UNREACHABLE
    assert failed.value.message.startswith(f"the certificate of {tls_host.base}/ cannot be verif")
    assert "--ca FILE (ca= in Python) or SSL_CERT_FILE" in failed.value.message
    assert tls_host.pending() == []


def dismissed_hook(host: HostProcess, command: list[str], env: dict[str, str], folder: Path) -> str:
    """Run the hook `command` on a Claude Code `AskUserQuestion` event, dismiss the card it asks
    on `host`, and return the permission decision it printed."""
    (folder / "event.json").write_text(
        fixture_text("claude_code", "pre_tool_use_ask_user_question")
    )
    with (folder / "event.json").open() as stdin:
        asking = subprocess.Popen(
            command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
    try:
        (frame,) = host.wait_pending(1)
        dismissal = {
            "type": "client-response",
            "rpcId": frame["rpcId"],
            "result": {"ok": False, "error": {"code": "cancelled", "message": "not now"}},
        }
        assert host.respond(dismissal) == {"accepted": True}
        out, err = asking.communicate(timeout=30)
    finally:
        if asking.poll() is None:
            asking.kill()
            asking.communicate()
    assert asking.returncode == 0, err
    decision: str = json.loads(out)["hookSpecificOutput"]["permissionDecision"]
    return decision


def test_the_terminal_commands_verify_the_host(tls_host: HostProcess, certs: Certificates) -> None:
    trusted = uq("pending", "--url", tls_host.url, "--ca", str(certs.ca), "--json")
    assert (trusted.returncode, trusted.stdout, trusted.stderr) == (0, "", "")
    through_env = uq("history", "--url", tls_host.url, env={"SSL_CERT_FILE": str(certs.ca)})
    assert through_env.returncode == 0, through_env.stderr
    untrusted = uq("pending", "--url", tls_host.url)
    assert untrusted.returncode == 1
    assert untrusted.stderr.startswith(f"uq pending: the certificate of {tls_host.base}/ cannot")
    assert untrusted.stderr.count("\n") == 1
    bad_ca = uq("pending", "--url", tls_host.url, "--ca", str(certs.key))
    assert bad_ca.returncode == 2
    assert bad_ca.stderr.startswith(f"uq pending: cannot use the CA file '{certs.key}'")


def test_a_hook_asks_a_tls_host_it_trusts_and_leaves_one_it_does_not(
    tls_host: HostProcess, certs: Certificates, tmp_path: Path
) -> None:
    event = fixture_text("claude_code", "pre_tool_use_ask_user_question")
    left = hook("claude", event, url=tls_host.asker_url)
    assert (left.returncode, left.stdout) == (0, "")
    assert "cannot be verified" in left.stderr
    command = [UQ, "hook", "claude", "--ca", str(certs.ca)]
    environ = {**os.environ, "UQ_URL": tls_host.asker_url}
    assert dismissed_hook(tls_host, command, environ, tmp_path) == "deny"


def test_hook_install_trusts_the_authority_it_is_given_and_writes_it_into_the_hook(
    tls_host: HostProcess, certs: Certificates, tmp_path: Path
) -> None:
    home = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    settings = tmp_path / "claude" / "settings.json"
    untrusted = uq("hook", "install", "claude", "--url", tls_host.url, env=home)  # no --ca
    assert untrusted.returncode == 1
    assert "cannot be verified" in untrusted.stderr
    assert not settings.exists()
    install = ("hook", "install", "claude", "--url", tls_host.url)
    bad_ca = uq(*install, "--ca", str(certs.key), env=home)
    assert bad_ca.returncode == 2
    assert "cannot use the CA file" in bad_ca.stderr
    assert not settings.exists()

    made = uq(*install, "--ca", str(certs.ca), env=home)
    assert made.returncode == 0, made.stderr
    (group,) = json.loads(settings.read_text())["hooks"]["PermissionRequest"]
    words = shlex.split(group["hooks"][0]["command"])
    assert words[words.index("--ca") + 1] == str(certs.ca.resolve())
    assert words[words.index("--url") + 1] != tls_host.url  # an asker's token, made for it

    environ = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    assert dismissed_hook(tls_host, words, environ, tmp_path) == "deny"  # it trusted the host


@pytest.mark.anyio
async def test_uq_mcp_answers_through_a_tls_host_it_trusts(
    tls_host: HostProcess, certs: Certificates
) -> None:
    base, token, ca = tls_host.base, tls_host.token, str(certs.ca)
    refused = await anyio.to_thread.run_sync(lambda: uq("mcp", "--url", base, "--token", token))
    assert refused.returncode == 1
    assert "cannot be verified" in refused.stderr
    arguments = ["mcp", "--url", base, "--token", token, "--ca", ca, "--session", "mcp-tls"]
    params = StdioServerParameters(command=UQ, args=arguments)
    result: Any = None

    async def call(client: Client) -> None:
        nonlocal result
        result = await client.call_tool("ask_user_question", {"questions": [PICK]})

    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client, anyio.create_task_group() as group:
            group.start_soon(call, client)
            (frame,) = await anyio.to_thread.run_sync(tls_host.wait_pending, 1)
            body = answer_body(frame["rpcId"], "mcp-tls", {"id": "pick", "selected": ["a"]})
            assert await anyio.to_thread.run_sync(tls_host.respond, body) == {"accepted": True}
    assert result.content[0].text == '{"answers":[{"id":"pick","selected":["a"]}]}'


def test_uq_acp_asks_and_withdraws_through_a_tls_host_it_trusts(
    tls_host: HostProcess, certs: Certificates
) -> None:
    inbox = HostInbox(host_address(tls_host.asker_url, None, str(certs.ca)), "acp-tls")
    editor = AbortController()  # what the proxy aborts when the editor answers first
    question = AskUserQuestionItem.model_validate(PICK)
    request = AskUserQuestionRequest([question], signal=editor.signal)

    async def answered_in_the_editor() -> None:
        async with inbox.provider, anyio.create_task_group() as group:
            group.start_soon(inbox.provider.ask_with_id, "acp-1", request)
            await anyio.to_thread.run_sync(tls_host.wait_pending, 1)
            editor.abort("answered in the editor: b")
            group.cancel_scope.cancel()  # the withdrawal goes out over wss, shielded

    anyio.run(answered_in_the_editor)
    history = httpx.get(
        f"{tls_host.base}/api/history", headers=tls_host.auth, verify=tls_host.verify, timeout=10
    )
    (entry,) = [item for item in history.json()["items"] if item["rpcId"] == "acp-1"]
    assert (entry["outcome"], entry["note"]) == ("withdrawn", "answered in the editor: b")


def test_a_rule_answers_the_hook_of_a_tls_host_it_trusts_on_its_quick_path(
    tls_host: HostProcess, certs: Certificates
) -> None:
    assert tls_host.db is not None
    made = uq(
        "rule",
        "add",
        "--tool",
        "Bash",
        "--command",
        "make lint",
        "--allow",
        "--store",
        str(tls_host.db),
    )
    assert made.returncode == 0, made.stderr
    document = json.loads(fixture_text("codex", "permission_request_bash"))
    document["tool_input"]["command"] = "make lint"
    options = HookOptions(tls_host.asker_url, None, str(certs.ca), None)
    decision = rule_output("codex", options, json.dumps(document))  # in force once made
    assert decision is not None
    assert decision["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    untrusted = HookOptions(tls_host.asker_url, None, None, None)
    assert rule_output("codex", untrusted, json.dumps(document)) is None  # never unverified
