"""`uq serve --notify-webhook / --notify-command / --notify` as people run it, with real
processes on both ends: the receiver is docs/examples/webhook_receiver.py, checking every
signature with the secret `--print-notify-secret` showed; agents ask through `RemoteProvider`."""

from __future__ import annotations

import json
import os
import select
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.host_process import (
    ROOT,
    AskerProcess,
    HostProcess,
    answer_body,
    free_port,
)

EXAMPLE = ROOT / "docs" / "examples" / "webhook_receiver.py"
APPEND_STDIN = "import sys; open(sys.argv[1], 'ab').write(sys.stdin.buffer.read())"


def uq(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    return subprocess.run(
        [sys.executable, "-m", "user_questions.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        input=stdin,
        env=environment,
    )


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """The documented receiver, listening with the secret of the host's store in tmp_path."""
    shown = uq("serve", "--store", str(tmp_path / "host.db"), "--print-notify-secret")
    assert shown.returncode == 0, shown.stderr
    secret = shown.stdout.strip()
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE), str(port)],
        stdout=subprocess.PIPE,
        bufsize=0,
        env={**os.environ, "UQ_NOTIFY_SECRET": secret},
    )
    _wait_listening(port)
    yield process, f"http://127.0.0.1:{port}/hook"
    process.kill()
    process.communicate(timeout=30)


def test_serve_tells_a_webhook_and_a_command_of_every_question(
    tmp_path: Path, receiver: tuple[subprocess.Popen[bytes], str]
) -> None:
    process, url = receiver
    events = tmp_path / "events.jsonl"
    command = shlex.join([sys.executable, "-c", APPEND_STDIN, str(events)])
    host = HostProcess(
        tmp_path / "host.db", args=("--notify-webhook", url, "--notify-command", command)
    )
    host.start()
    agent = AskerProcess(host.url, ("deploy",), session="ci-bot")
    try:
        (frame,) = host.wait_pending(1)
        rpc_id = frame["rpcId"]
        answered = uq("answer", "--url", host.url, stdin="1\n")  # the line dialogue: "yes"
        assert answered.returncode == 0, answered.stderr
        assert agent.results() == {"deploy": {"answers": [{"id": "deploy", "selected": ["yes"]}]}}
        assert _printed(process, 2) == [
            f"question/pending {rpc_id} -",
            f"question/settled {rpc_id} answered",
        ]
        pending, settled = _events(events, 2)
    finally:
        agent.close()
        assert host.stop() == 0
    assert pending["type"] == "question/pending"
    assert pending["sessionId"] == "ci-bot"
    assert settled["type"] == "question/settled"
    assert settled["answer"] == {"answers": [{"id": "deploy", "selected": ["yes"]}]}
    assert settled["via"] == "terminal"  # `uq answer` says so with X-UQ-Surface
    assert pending["askedBy"] == settled["askedBy"] == "owner"  # both used the host's token
    assert settled["by"] == "owner"
    assert host.rest_of_stdout == ""  # the command's output never reaches the host's stdout


@pytest.mark.parametrize(
    ("flag", "url"),
    [
        ("--notify-webhook", "http://127.0.0.1:{port}/hook"),
        ("--notify", "ntfy://127.0.0.1:{port}/uq"),
    ],
)
def test_a_receiver_that_never_answers_does_not_delay_an_ask(
    tmp_path: Path, flag: str, url: str
) -> None:
    with socket.socket() as silent:  # accepts connections (in its backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        url = url.format(port=silent.getsockname()[1])
        host = HostProcess(tmp_path / "host.db", args=(flag, url))
        host.start()
        agent = AskerProcess(host.url, ("ship",), session="ci-bot")
        try:
            (frame,) = host.wait_pending(1)
            started = time.monotonic()
            chosen = {"id": "ship", "selected": ["yes"]}
            assert host.respond(answer_body(frame["rpcId"], "ci-bot", chosen)) == {"accepted": True}
            assert agent.results() == {"ship": {"answers": [chosen]}}
            elapsed = time.monotonic() - started
        finally:
            agent.close()
            assert host.stop() == 0
    # A webhook attempt waits up to 10 s for an answer, a service's 30 s; the ask never waited.
    assert elapsed < 5.0, f"the answer took {elapsed:.1f} s to reach the agent"


def _printed(process: subprocess.Popen[bytes], count: int) -> list[str]:
    """The first `count` lines the receiver prints (one per event it accepted)."""
    assert process.stdout is not None
    out = b""
    deadline = time.monotonic() + 15
    while out.count(b"\n") < count:
        ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"the receiver printed only {out!r}"
        out += os.read(process.stdout.fileno(), 4096)
    return out.decode().splitlines()


def _events(path: Path, count: int) -> list[dict[str, object]]:
    deadline = time.monotonic() + 15
    while True:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        lines = text.splitlines()
        if len(lines) >= count or time.monotonic() > deadline:
            assert len(lines) == count, text
            return [json.loads(line) for line in lines]
        time.sleep(0.05)  # polling a file another process writes, under a deadline


def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on port {port}"
            time.sleep(0.05)  # polling a port another process opens, under a deadline
