"""`uq ask` as a process with pipes: what a shell script or a CI job gets, and every exit status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from anyio.abc import Process

UQ = str(Path(sys.executable).with_name("uq"))
ASK = [UQ, "ask", "Deploy to production?", "-o", "Yes", "-o", "No"]
WAIT_SECONDS = 30


def run(args: list[str], stdin: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )


def test_a_piped_reply_answers_and_stdout_holds_only_the_answer() -> None:
    result = run([*ASK, "--json"], "2\n")
    assert (result.returncode, result.stdout) == (0, '{"answers":[{"id":"1","selected":["No"]}]}\n')
    assert result.stderr.endswith("> 2\n  -> No\n")


def test_no_input_at_all_is_a_dismissal() -> None:
    result = run(ASK, None)
    assert (result.returncode, result.stdout) == (3, "")
    assert result.stderr.endswith("uq ask: the user cancelled ask_user_question\n")


def test_a_request_on_stdin_without_a_terminal_to_answer_on_is_bad_input() -> None:
    result = subprocess.run(
        [UQ, "ask", "--request", "-"],
        input='{"questions": [{"id": "a", "question": "Go?"}]}',
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
        start_new_session=True,  # no controlling terminal, so no /dev/tty
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "uq ask: --request - reads stdin, so the answers must come from the terminal, and there "
        "is none (no /dev/tty); give it a file instead\n"
    )


async def _waiting(args: list[str]) -> tuple[Process, bytes]:
    """Start `args` with a pipe held open as stdin; return once it waits for a reply."""
    process = await anyio.open_process(args, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stderr is not None
    seen = b""
    with anyio.fail_after(WAIT_SECONDS):
        while not seen.endswith(b"> "):
            seen += await process.stderr.receive()
    return process, seen


async def _finish(process: Process) -> tuple[int, bytes]:
    assert process.stderr is not None
    rest = b""
    with anyio.fail_after(WAIT_SECONDS):
        async for chunk in process.stderr:
            rest += chunk
        status = await process.wait()
    return status, rest


@pytest.mark.anyio
async def test_a_timeout_exits_4_while_input_stays_open() -> None:
    process, _ = await _waiting([*ASK, "--timeout", "0.5"])
    async with process:
        status, rest = await _finish(process)
    assert status == 4
    assert rest.endswith(b"uq ask: ask_user_question timed out before the user answered\n")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("signum", "status", "message"),
    [
        (signal.SIGINT, 130, b"uq ask: interrupted\n"),
        (signal.SIGTERM, 143, b"uq ask: stopped by SIGTERM\n"),
        (signal.SIGHUP, 129, b"uq ask: stopped by SIGHUP\n"),
    ],
)
async def test_a_signal_while_waiting_exits_with_its_status(
    signum: int, status: int, message: bytes
) -> None:
    process, _ = await _waiting(ASK)
    async with process:
        os.kill(process.pid, signum)
        assert await _finish(process) == (status, message)
