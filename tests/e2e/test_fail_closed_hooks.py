"""`uq hook codex` and `uq hook claude`, run as the CLIs run them, against a host that misbehaves
one way per case (tests/standin.py): never an allow but from the honest control, never a deny
the person did not give, and an end within the documented deadline.

The deadline (docs/security.md, "Fail closed"): the quick path's whole request within
`--connect-timeout`; the whole hook within `--timeout`, plus at most twice `--connect-timeout` and
`CLOSE_TIMEOUT` to take the card down from a host that will not confirm it. Each run is timed
from spawn to exit, with `STARTUP` added for the interpreter's start on a loaded machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from tests.e2e.test_uq_hook import UQ, fixture_text
from tests.standin import StandIn
from user_questions.providers.remote import CLOSE_TIMEOUT

TIMEOUT = 2.5
"""`--timeout`: what the hook may take in all."""
CONNECT = 0.5
"""`--connect-timeout`: the quick path's whole request, and then each connection."""
STARTUP = 2.5
"""Seconds allowed for starting Python and importing what the hook needs, under load."""
WHOLE = TIMEOUT + 2 * CONNECT + CLOSE_TIMEOUT + STARTUP
"""The most any run may take: `--timeout`, the card's withdrawal, and the start."""
AT_ONCE = 2 * CONNECT + STARTUP
"""The most a run may take when the host refuses at the handshake: the quick path's request and
one connection attempt."""

ALLOWED = {"behavior": "allow"}
DENIED = {"behavior": "deny", "message": "The user denied this Bash call."}
"""What the stand-in's honest person (`deny`) gives: the full path's reading, nothing else."""


@dataclass(frozen=True)
class Expected:
    decision: dict[str, str] | None
    """The hook's decision; `None`: nothing on stdout, the CLI asks in its own terminal."""
    said: str = ""
    """What stderr says (when nothing is decided)."""
    bound: float = WHOLE


QUICK_PATH_WRONG = [
    "decide-other-rpc",
    "decide-no-rpc",
    "decide-other-question",
    "decide-no-item-id",
    "decide-ask-error-type",
    "decide-two-items",
    "decide-always-not-offered",
    "decide-allow-and-text",
    "decide-unreadable-answered",
    "decide-http10",
    "decide-short-length",
    "decide-chunked",
    "decide-two-lengths",
]
"""Replies to `/api/decide` the quick path must read as no decision: the full path then asks,
and the stand-in's person denies."""

CASES: dict[str, Expected] = {
    "allow": Expected(ALLOWED, bound=AT_ONCE),
    "deny": Expected(DENIED, bound=AT_ONCE),
    **{case: Expected(DENIED, bound=AT_ONCE + CONNECT) for case in QUICK_PATH_WRONG},
    # The full path's wrong settlements: no decision (a bad answer; or none at all, below).
    "ws-other-question": Expected(None, "no such question", AT_ONCE),
    "ws-no-item-id": Expected(None, "", AT_ONCE),
    "ws-two-items": Expected(None, "no such question", AT_ONCE),
    "ws-always-not-offered": Expected(None, "is not one of its options", AT_ONCE),
    "ws-allow-and-text": Expected(None, "both a label and custom text", AT_ONCE),
    "ws-unreadable-answered": Expected(None, "", AT_ONCE),
    # Refusals at the handshake.
    "redirect-same": Expected(None, "redirected the asker connection (HTTP 302) to ws://", AT_ONCE),
    "redirect-other": Expected(
        None, "redirected the asker connection (HTTP 302) to ws://", AT_ONCE
    ),
    "error-500-empty": Expected(None, "HTTP 500", AT_ONCE),
    "error-503-body": Expected(None, "HTTP 503", AT_ONCE),
    "garbage": Expected(None, "did not receive a valid HTTP response", AT_ONCE),
    "drip": Expected(None, "timed out during opening handshake", AT_ONCE),
    "silent": Expected(None, "timed out during opening handshake", AT_ONCE),
    "two-roles": Expected(None, "said the token's role unreadably", AT_ONCE),
    "unknown-role": Expected(None, "said the token's role unreadably", AT_ONCE),
    # After a handshake that succeeds: stopped at once, or (`UNTIL_TIMEOUT`) reconnected to with
    # backoff until --timeout.
    "close-4401": Expected(None, "no longer accepts the token (close code 4401)", AT_ONCE),
    "close-4403": Expected(None, "refused the connection (close code 4403)", AT_ONCE),
}


UNTIL_TIMEOUT = [
    "ws-other-rpc",
    "ws-no-rpc",
    "ws-ask-error-type",
    "silent-after",
    "store-unavailable",
    "oversize",
    "close-1000",
    "close-1009",
    "close-1013",
]
"""The cases where nothing ever comes that ends the ask: the hook gives up at `--timeout`."""


def event_of(client: str) -> str:
    """The client's permission prompt for `npm test`, without Claude Code's suggestions (so its
    card offers no "don't ask again")."""
    folder = "claude_code" if client == "claude" else "codex"
    event = json.loads(fixture_text(folder, "permission_request_bash"))
    event.pop("permission_suggestions", None)
    return json.dumps(event)


def run_hook(
    client: str, url: str, *options: str, timeout: float = TIMEOUT, connect: float = CONNECT
) -> tuple[subprocess.CompletedProcess[str], float]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("UQ_")}
    limits = ["--timeout", f"{timeout:g}", "--connect-timeout", f"{connect:g}"]
    started = time.monotonic()
    ended = subprocess.run(
        [UQ, "hook", client, "--url", url, *limits, *options],
        input=event_of(client),
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
        start_new_session=True,
    )
    return ended, time.monotonic() - started


def check(ended: subprocess.CompletedProcess[str], took: float, expected: Expected) -> None:
    assert ended.returncode == 0, ended.stderr
    if expected.decision is None:
        assert ended.stdout == "", f"decided on a failure: {ended.stdout}"
        assert expected.said in ended.stderr
        assert ended.stderr.startswith("uq hook: ")
    else:
        output = json.loads(ended.stdout)
        assert output["hookSpecificOutput"]["decision"] == expected.decision
    assert took < expected.bound, f"took {took:.2f} s, more than {expected.bound:g} s"


@pytest.mark.parametrize("case", sorted(CASES))
def test_uq_hook_codex_fails_closed_in_time(stand_in: StandIn, case: str) -> None:
    ended, took = run_hook("codex", stand_in.url(case))
    check(ended, took, CASES[case])
    if case in QUICK_PATH_WRONG:  # no decision on the quick path: the full path asked
        assert len(stand_in.contacts(case).handshakes) >= 1


@pytest.mark.parametrize(
    "case",
    ["allow", "decide-always-not-offered", "decide-two-items", "decide-other-rpc", "two-roles"],
)
def test_uq_hook_claude_fails_closed_in_time(stand_in: StandIn, case: str) -> None:
    ended, took = run_hook("claude", stand_in.url(case))
    check(ended, took, CASES[case])


@pytest.mark.parametrize("case", ["redirect-same", "redirect-other"])
@pytest.mark.parametrize(("client", "scheme"), [("codex", "https"), ("claude", "http")])
def test_a_redirect_is_refused_naming_where_it_went_and_nothing_reaches_it(
    stand_in: StandIn, case: str, scheme: str, client: str
) -> None:
    ended, took = run_hook(client, stand_in.url(case, scheme=scheme), "--ca", str(stand_in.ca))
    target = "wss://" if scheme == "https" else "ws://"
    check(ended, took, Expected(None, f"redirected the asker connection (HTTP 302) to {target}"))
    assert "/redirect-target/ws/ask; an asker never follows a redirect" in ended.stderr
    assert stand_in.contacts("redirect-target").tokens == []  # neither followed ...
    assert stand_in.contacts("_other").tokens == []  # ... nor sent the token anywhere


def test_a_host_that_never_ends_the_ask_is_left_at_the_timeout_without_a_storm(
    stand_in: StandIn,
) -> None:
    """The cases run side by side (each is timed from its own spawn): a host that keeps
    closing, goes silent, cannot store, sends too much or settles something else is reconnected
    to with backoff, and left at `--timeout`."""
    earlier = {case: len(stand_in.contacts(case).handshakes) for case in UNTIL_TIMEOUT}
    with ThreadPoolExecutor(len(UNTIL_TIMEOUT)) as pool:
        runs = dict(
            zip(
                UNTIL_TIMEOUT,
                pool.map(lambda case: run_hook("codex", stand_in.url(case)), UNTIL_TIMEOUT),
                strict=True,
            )
        )
    for case, (ended, took) in runs.items():
        check(ended, took, Expected(None, "timed out"))
        # Pauses of 0.05 s doubling to 2 s: about 7 in 2.5 s, where a storm was 1,250 a second.
        assert len(stand_in.contacts(case).handshakes) - earlier[case] <= 12, case


def test_the_timeout_bounds_the_quick_path_too(stand_in: StandIn) -> None:
    """A `--connect-timeout` longer than what is left of `--timeout` gives way to it: a silent
    host on the quick path is left when `--timeout` passes, not the connect timeout."""
    ended, took = run_hook("codex", stand_in.url("silent"), timeout=1, connect=30)
    check(ended, took, Expected(None, "--timeout (1 s)", 1 + STARTUP))
