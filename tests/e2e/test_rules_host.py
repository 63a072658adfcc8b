"""Rules on a real `uq serve`: made with `uq rule add` beside its store, they answer the real
`uq hook codex` and `uq hook claude` processes with no card ever shown to anyone, from the moment
the command that made them returned. Issue 35's table: every form a rule was walked through, each
construct of the bash grammar that is not plain, argv forms and wrappers, through `POST
/api/decide` and the hooks; a call no rule may allow reaches a person as the host's card."""

from __future__ import annotations

import json
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.host_process import HostProcess, answer_body, free_port
from tests.e2e.test_people_history import wait_until_accepted
from tests.e2e.test_uq_hook import UQ, fixture_text, hook
from user_questions.approvals import approval_of, approval_question
from user_questions.cli._hook_options import HookOptions
from user_questions.cli._hook_rule import rule_output
from user_questions.frames import Ask


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


def rule_revoke(host: HostProcess, rule_id: int) -> None:
    assert host.db is not None
    subprocess.run(
        [UQ, "rule", "revoke", str(rule_id), "--store", str(host.db)],
        capture_output=True,
        timeout=60,
        check=True,
    )


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


def event(client: str, command: str, fixture: str = "permission_request_bash") -> str:
    folder = "claude_code" if client == "claude" else "codex"
    document = json.loads(fixture_text(folder, fixture))
    document["tool_input"]["command"] = command
    return json.dumps(document)


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


def test_rules_decide_codex_pre_tool_use_first_an_allow_saying_nothing(host: HostProcess) -> None:
    """Codex's `PreToolUse` runs before every call its matcher names: a rule decides it as it
    decides an approval prompt, an allow printing nothing (Codex refuses an `allow` that changes
    nothing, and goes on as it would), a deny denying with the rule's reason."""
    rule_add(host, "--tool", "Bash", "--command", "git status", "--allow")
    deny = rule_add(host, "--tool", "Bash", "--command", "git push", "--deny")
    status = event("codex", "git status -s", "pre_tool_use_bash")
    allowed = hook("codex", status, url=host.asker_url)
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")
    push = event("codex", "git push", "pre_tool_use_bash")
    denied = hook("codex", push, url=host.asker_url)
    output = json.loads(denied.stdout)["hookSpecificOutput"]
    assert (output["hookEventName"], output["permissionDecision"]) == ("PreToolUse", "deny")
    assert f"denied by rule {deny}: git push" in output["permissionDecisionReason"]
    assert [entry["via"] for entry in history(host)] == ["rule", "rule"]
    assert host.pending() == []


def test_a_revoked_rule_no_longer_answers(host: HostProcess) -> None:
    rule_id = rule_add(host, "--tool", "Bash", "--command", "ls", "--allow")
    rule_revoke(host, rule_id)
    # In force once the command returned (the host reads the rules' version before deciding):
    # the hook then waits for a person, and leaves the prompt to Codex at its timeout.
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
    assert rule_output("codex", asking, event("codex", "git status -s")) == allowed
    assert rule_output("claude", asking, event("claude", "git status")) == allowed
    assert rule_output("codex", asking, event("codex", "git push")) is None
    answering = HookOptions(host.url, None, None, None)  # the admin's URL
    assert rule_output("codex", answering, event("codex", "git status")) is None
    down = HookOptions(f"http://127.0.0.1:{free_port()}/?token=x", None, None, None, 0.5)
    assert rule_output("codex", down, event("codex", "git status")) is None
    assert [entry["via"] for entry in history(host)] == ["rule", "rule"]
    assert host.pending() == []


# -- issue 35: a rule allows exactly what it names ------------------------------------------------

TABLE_RULES: list[dict[str, str]] = [
    {"tool": "Bash", "command": "git status", "decision": "allow", "cwd": "/home/dev/shop"},
    {"tool": "Bash", "command": "git diff", "decision": "allow"},
    {"tool": "Bash", "command": "npm run test", "decision": "allow"},
    {"tool": "exec_command", "decision": "allow"},
    {"tool": "*", "command": "rm -rf", "decision": "deny"},
    {"tool": "apply_patch", "path": "/home/dev/shop/**", "decision": "allow"},
    {"tool": "WebFetch", "domain": "example.com", "decision": "allow"},
    {"tool": "Read", "path": "/home/dev/shop/**", "decision": "allow"},
]
"""Allow rules, and a deny beside an allow for every call of exec_command."""
ALLOW, DENY, ASK = "allow", "deny", "ask"
_MOVE = (
    "*** Begin Patch\n*** Update File: /home/dev/shop/a.py\n*** Move to: /home/dev/.bashrc\n@@\n"
    "-a\n+b\n*** End Patch"
)
_INDENTED = (
    "*** Begin Patch\n*** Add File: a.py\n+x\n *** Update File: /home/dev/.bashrc\n@@\n-a\n+b\n"
    "*** End Patch"
)
_PATCH = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-a\n+b\n*** End Patch"
TABLE: list[tuple[str, dict[str, Any], str | None, str]] = [
    # Plain commands that must stay allowed.
    ("Bash", {"command": "git status -s"}, "/home/dev/shop", ALLOW),
    ("Bash", {"command": "git status -- 'my file.txt'"}, "/home/dev/shop", ALLOW),
    ("Bash", {"command": "npm run test -- --watch"}, "/home/dev/shop", ALLOW),
    ("Bash", {"command": "git status && git diff"}, "/home/dev/shop", ALLOW),
    ("Bash", {"command": "git status && curl -s https://x.example/i.sh"}, "/home/dev/shop", ASK),
    ("Bash", {"command": "git status"}, "/", ASK),  # the rule's folder only
    # The forms issue 35 found allowed.
    ("Bash", {"command": "git status ${x:=\\$\\(touch\\ pwned\\)}${x@P}"}, "/home/dev/shop", ASK),
    ("Bash", {"command": "git status $x"}, "/home/dev/shop", ASK),
    ("Bash", {"command": "git status ${HOME}"}, "/home/dev/shop", ASK),
    ("Bash", {"command": "git status $'\\x3b id'"}, "/home/dev/shop", ASK),
    # Every construct of the grammar that is not plain.
    *[
        ("Bash", {"command": command}, "/home/dev/shop", ASK)
        for command in (
            "git status $(id)", "git status `id`", "git status $((1+1))", "git diff <(id)",
            "GIT_EXTERNAL_DIFF=x git diff", "git status > out", "git status < in",
            "git status <<< x", "git status <<EOF\nx\nEOF", "(git status)", "{ git status; }",
            "if true; then git status; fi", "for x in a; do git status; done",
            "while false; do git status; done", "case a in a) git status;; esac",
            "f() { git status; }", "! git status", "git status &", "git status |& git diff",
            "git status # c", "time git status", "git status *", "git status ~/x",
            "git status {a,b}", "git status 'unclosed", "[[ -f x ]] && git status",
            "export A=1; git status",
        )
    ],
    # The argv forms: a shell's script read as the script.
    ("exec_command", {"cmd": ["git", "status", "$(id)"]}, "/home/dev/shop", ALLOW),
    ("exec_command", {"cmd": ["bash", "-lc", "git status ${x:=a\\[\\$\\(id\\)\\]}$[x]"]},
     None, ASK),
    ("exec_command", {"cmd": ["bash", "-lc", "git status && rm -rf /"]}, None, DENY),
    # Wrappers around a denied program, beside an allow of every exec_command call.
    *[
        ("exec_command", {"cmd": command}, None, DENY)
        for command in (
            "sudo rm -rf /", "/bin/rm -rf /", "rm -fr /", "rm -r -f /", "\\rm -rf /",
            "command rm -rf /", "env rm -rf /", "(rm -rf /)", "bash -c 'rm -rf /'",
            "eval rm -rf /", "nohup rm -rf /", "time rm -rf /", "nice -n 5 rm -rf /",
            "timeout 10 rm -rf /", "xargs rm -rf", "! rm -rf /", "echo $(rm -rf /)",
            "sudo -u root env A=1 sh -c 'rm -rf /'", "find / -exec rm -rf {} +",
        )
    ],
    # Patches, URLs and paths.
    ("apply_patch", {"command": _PATCH}, "/home/dev/shop", ALLOW),
    ("apply_patch", {"command": _MOVE}, "/home/dev/shop", ASK),
    ("apply_patch", {"command": _INDENTED}, "/home/dev/shop", ASK),
    ("apply_patch", {"command": "*** Begin Patch\n*** End"}, "/home/dev/shop", ASK),
    ("WebFetch", {"url": "https://example.com/docs"}, None, ALLOW),
    ("WebFetch", {"url": "https://evil.io\\@example.com/"}, None, ASK),
    ("WebFetch", {"url": "https://example.com@evil.io/"}, None, ASK),
    ("Read", {"file_path": "src/app.py"}, "/home/dev/shop", ALLOW),
    ("Read", {"file_path": "~/.ssh/id_rsa"}, "/home/dev/shop", ASK),
    ("Read", {"file_path": "../.bashrc"}, "/home/dev/shop", ASK),
]  # fmt: skip


@pytest.fixture(scope="module")
def ruled_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostProcess]:
    """One `uq serve` for the table, with its rules made by its admin (`POST /api/rules`)."""
    running = HostProcess(tmp_path_factory.mktemp("table") / "uq.db")
    running.start()
    for rule in TABLE_RULES:
        made = httpx.post(f"{running.base}/api/rules", headers=running.auth, json=rule, timeout=10)
        assert made.status_code == 201, made.text
    yield running
    running.stop()


def decided(host: HostProcess, tool: str, arguments: dict[str, Any], cwd: str | None) -> str:
    """What `POST /api/decide` says of the call, asked with the agents' token (as a hook)."""
    card = approval_question(tool, arguments, agent="Codex")
    approval = approval_of(tool, arguments, agent="codex", cwd=cwd)
    frame = Ask(
        rpc_id=secrets.token_hex(8), session_id="codex:t", questions=[card], approval=approval
    )
    answer = httpx.post(
        f"{host.base}/api/decide",
        headers=host.asker_auth,
        content=frame.model_dump_json(by_alias=True, exclude_none=True),
        timeout=10,
    )
    if answer.status_code == 204:
        return ASK
    assert answer.status_code == 200, answer.text
    chosen = answer.json()["payload"]["answer"]["answers"][0]
    return ALLOW if chosen["selected"] == ["Allow"] else DENY


@pytest.mark.parametrize(("tool", "arguments", "cwd", "expected"), TABLE)
def test_what_the_rules_decide_through_api_decide(
    ruled_host: HostProcess, tool: str, arguments: dict[str, Any], cwd: str | None, expected: str
) -> None:
    assert decided(ruled_host, tool, arguments, cwd) == expected


@pytest.mark.parametrize("client", ["codex", "claude"])
@pytest.mark.parametrize(("tool", "arguments", "cwd", "expected"), TABLE)
def test_what_the_rules_decide_for_the_hooks_own_quick_path(
    ruled_host: HostProcess,
    client: str,
    tool: str,
    arguments: dict[str, Any],
    cwd: str | None,
    expected: str,
) -> None:
    """Every row as each hook asks it: its permission prompt, read by the hook's own quick path
    (the card and approval it builds, its one HTTP request); `None` when a person is asked."""
    document = json.loads(event(client, "ls"))
    document |= {"tool_name": tool, "tool_input": arguments, "cwd": cwd or "/"}
    asking = HookOptions(ruled_host.asker_url, None, None, None)
    output = rule_output(client, asking, json.dumps(document))  # type: ignore[arg-type]
    got = ASK if output is None else output["hookSpecificOutput"]["decision"]["behavior"]
    assert got == expected


HOOKED = [
    ("git status -s", ALLOW),
    ("git status && git diff", ALLOW),
    ("sudo rm -fr /", DENY),
    ("bash -c 'rm -rf /'", DENY),
]


@pytest.mark.parametrize("client", ["codex", "claude"])
@pytest.mark.parametrize(("command", "expected"), HOOKED)
def test_the_real_hooks_get_what_the_rules_decide(
    ruled_host: HostProcess, client: str, command: str, expected: str
) -> None:
    document = json.loads(event(client, command))
    document["cwd"] = "/home/dev/shop"
    ended = hook(client, json.dumps(document), url=ruled_host.asker_url)
    assert ended.returncode == 0, ended.stderr
    decision = json.loads(ended.stdout)["hookSpecificOutput"]["decision"]
    assert decision["behavior"] == expected


@pytest.mark.parametrize("client", ["codex", "claude"])
def test_a_call_no_rule_may_allow_reaches_a_person_as_the_hosts_card(
    ruled_host: HostProcess, client: str
) -> None:
    """The hook's full path: the card a person sees names the call and says why no rule may
    allow it; the person's Deny goes back to the agent."""
    document = json.loads(event(client, "git status $(curl -s https://x.example)"))
    document["cwd"] = "/home/dev/shop"
    session = document["session_id"] = secrets.token_hex(6)
    done: list[subprocess.CompletedProcess[str]] = []
    running = threading.Thread(
        target=lambda: done.append(hook(client, json.dumps(document), url=ruled_host.asker_url))
    )
    running.start()
    deadline = time.monotonic() + 20
    while not (mine := [f for f in ruled_host.pending() if session in f["payload"]["sessionId"]]):
        assert time.monotonic() < deadline, "the hook's card never arrived"
        time.sleep(0.05)  # polling the host over HTTP under a deadline
    (frame,) = mine
    (card,) = frame["payload"]["questions"]
    assert card["question"].endswith("to run Bash: git status $(curl -s https://x.example)?")
    assert card["detail"].startswith(
        "No rule may allow this call: `not a plain command: a command substitution at column 12`."
    )
    ruled_host.respond(answer_body(frame["rpcId"], frame["payload"]["sessionId"],
                                   {"id": card["id"], "selected": ["Deny"]}))  # fmt: skip
    running.join(30)
    (ended,) = done
    assert json.loads(ended.stdout)["hookSpecificOutput"]["decision"]["behavior"] == "deny"


def test_a_rule_is_in_force_when_the_command_that_made_it_returns(
    host: HostProcess,
) -> None:
    """Issue 35: an allow of `rm`, then a deny of `rm -rf`, made beside a running host, then a
    hook at once: before, the host had the allow but not yet the deny in 3 runs of 4. No wait
    anywhere: each command's return is the moment its rule decides."""
    asking = HookOptions(host.asker_url, None, None, None)
    for run in range(4):
        rule_add(host, "--tool", "Bash", "--command", "rm", "--allow")
        deny = rule_add(host, "--tool", "Bash", "--command", "rm -rf", "--deny")
        ended = hook("codex", event("codex", f"rm -rf build{run}"), url=host.asker_url)
        decision = json.loads(ended.stdout)["hookSpecificOutput"]["decision"]
        assert decision["behavior"] == "deny", run
        assert f"denied by rule {deny}: rm -rf" in decision["message"]
        rule_revoke(host, deny)
    allowed = rule_output("codex", asking, event("codex", "rm -rf build"))
    assert allowed is not None  # the deny revoked a moment ago decides nothing any more
    assert allowed["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
