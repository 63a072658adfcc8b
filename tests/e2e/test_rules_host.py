"""Rules on a real `uq serve`: made with `uq rule add` beside its store, they answer the real
`uq hook codex` and `uq hook claude` processes with no card ever shown to anyone."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

import httpx
import pytest

from tests.e2e.host_process import HostProcess, free_port
from tests.e2e.test_people_history import wait_until_accepted
from tests.e2e.test_uq_hook import UQ, fixture_text, hook
from user_questions._hooks.events import Client
from user_questions.cli._hook_options import HookOptions
from user_questions.cli._hook_rule import rule_output


def rule_add(host: HostProcess, *args: str) -> int:
    assert host.db is not None
    made = subprocess.run(
        [UQ, "rule", "add", *args, "--store", str(host.db)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(made.stdout.strip())


def token_add(host: HostProcess, name: str, *args: str) -> str:
    """Make a token with `uq token add` beside the host's store; its page's URL."""
    assert host.db is not None
    made = subprocess.run(
        [UQ, "token", "add", name, *args, "--store", str(host.db), "--url", host.base],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    token, url = made.stdout.splitlines()
    wait_until_accepted(host, token)  # made beside the host: heard of within its watch
    return url


def event(client: str, command: str) -> str:
    folder = "claude_code" if client == "claude" else "codex"
    document = json.loads(fixture_text(folder, "permission_request_bash"))
    document["tool_input"]["command"] = command
    return json.dumps(document)


def decided_soon(client: Client, options: HookOptions, text: str) -> dict[str, Any]:
    """The quick path's output once the host has heard of a rule made beside it (within its
    watch of the store, 0.2 s); an undecided ask stores nothing, so asking again is harmless."""
    started = time.monotonic()
    while (output := rule_output(client, options, text)) is None:
        assert time.monotonic() - started < 10, "no rule decided the call"
        time.sleep(0.05)
    return output


def history(host: HostProcess) -> list[dict[str, object]]:
    answer = httpx.get(f"{host.base}/api/history", headers=host.auth, timeout=10)
    items: list[dict[str, object]] = answer.json()["items"]
    return items


@pytest.mark.parametrize("client", ["codex", "claude"])
def test_an_allow_rule_answers_the_hook_with_no_card_shown(host: HostProcess, client: str) -> None:
    rule_id = rule_add(host, "--tool", "Bash", "--command", "npm run test", "--allow")
    ended = hook(client, event(client, "npm run test -- --ci"), url=host.asker_url)
    assert ended.returncode == 0, ended.stderr
    output = json.loads(ended.stdout)
    assert output["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    (entry,) = history(host)
    assert (entry["via"], entry["by"], entry["outcome"]) == ("rule", f"rule:{rule_id}", "answered")
    assert "shownAt" not in entry  # no page, notification or person ever saw it
    listed = subprocess.run(
        [UQ, "rule", "list", "--json", "--store", str(host.db)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    (rule,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert rule["hits"] == 1


def test_a_deny_rule_denies_the_codex_hook_with_its_reason(host: HostProcess) -> None:
    rule_add(host, "--tool", "Bash", "--command", "rm", "--allow")
    deny = rule_add(host, "--tool", "*", "--command", "rm -rf", "--deny")
    ended = hook("codex", event("codex", "rm -rf dist && npm run build"), url=host.asker_url)
    decision = json.loads(ended.stdout)["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == "deny"
    assert f"denied by rule {deny}: rm -rf" in decision["message"]


def test_a_revoked_rule_no_longer_answers(host: HostProcess) -> None:
    rule_id = rule_add(host, "--tool", "Bash", "--command", "ls", "--allow")
    assert host.db is not None
    subprocess.run(
        [UQ, "rule", "revoke", str(rule_id), "--store", str(host.db)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    # The host hears of the revocation within its watch interval (0.2 s; waited for 5 times
    # over): the hook then waits for a person, and leaves the prompt to Codex at its timeout.
    time.sleep(1.0)
    ended = hook("codex", event("codex", "ls"), "--timeout", "1.5", url=host.asker_url)
    assert (ended.returncode, ended.stdout) == (0, "")
    (entry,) = history(host)
    assert entry["outcome"] == "timed-out"


def test_an_asker_tokens_deadline_times_the_hook_out_and_nothing_is_allowed(
    host: HostProcess,
) -> None:
    url = token_add(host, "ci", "--role", "asker", "--deadline", "2s")
    started = time.monotonic()
    ended = hook("codex", event("codex", "make deploy"), url=url)
    assert (ended.returncode, ended.stdout) == (0, "")  # Codex asks in its own terminal
    assert 2.0 <= time.monotonic() - started < 20
    (entry,) = history(host)
    assert (entry["outcome"], entry["via"]) == ("timed-out", "host")
    assert entry["note"] == "its asker's deadline passed"


def test_an_asker_tokens_escalation_step_shows_the_hooks_card_to_its_target(
    host: HostProcess,
) -> None:
    token_add(host, "alice")
    bobs = {"Authorization": f"Bearer {token_add(host, 'bob').partition('?token=')[2]}"}
    asking = ["--role", "asker", "--route", "alice", "--escalate", "2s:bob", "--deadline", "8s"]
    url = token_add(host, "ci", *asking)

    def bobs_pending() -> list[object]:
        answer = httpx.get(f"{host.base}/api/pending", headers=bobs, timeout=10)
        pending: list[object] = answer.json()["pending"]
        return pending

    ended: list[subprocess.CompletedProcess[str]] = []
    run = threading.Thread(
        target=lambda: ended.append(hook("codex", event("codex", "ls"), url=url))
    )
    run.start()
    host.wait_pending(1)  # asked: alice's (and the admin's), not yet bob's
    asked = time.monotonic()
    assert bobs_pending() == []
    while not bobs_pending():
        assert time.monotonic() - asked < 15, "the step never routed the card to bob"
        time.sleep(0.1)
    assert time.monotonic() - asked >= 0.5  # not before its step
    run.join(30)
    assert [(done.returncode, done.stdout) for done in ended] == [(0, "")]  # timed out after all
    answer = httpx.get(f"{host.base}/api/history", headers=bobs, timeout=10)
    (entry,) = answer.json()["items"]  # in bob's history too, as it was routed to him
    assert entry["outcome"] == "timed-out"


def test_the_quick_path_decides_what_a_rule_decides_and_leaves_the_rest_to_the_full_path(
    host: HostProcess,
) -> None:
    """`uq hook`'s quick path (one HTTP request, standard library only): the output of a call
    a rule decides, and `None` (nothing stored) for one no rule decides or a token that could
    answer, which the full path then asks about or refuses as it always does."""
    rule_add(host, "--tool", "Bash", "--command", "git status", "--allow")
    asking = HookOptions(host.asker_url, None, None, None)
    allowed = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {}}}
    allowed["hookSpecificOutput"]["decision"] = {"behavior": "allow"}
    assert decided_soon("codex", asking, event("codex", "git status -s")) == allowed
    assert rule_output("claude", asking, event("claude", "git status")) == allowed
    assert rule_output("codex", asking, event("codex", "git push")) is None
    answering = HookOptions(host.url, None, None, None)  # the admin's URL
    assert rule_output("codex", answering, event("codex", "git status")) is None
    down = HookOptions(f"http://127.0.0.1:{free_port()}/?token=x", None, None, None, 0.5)
    assert rule_output("codex", down, event("codex", "git status")) is None
    assert [entry["via"] for entry in history(host)] == ["rule", "rule"]
    assert host.pending() == []
