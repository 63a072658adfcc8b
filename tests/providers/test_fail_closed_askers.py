"""`connect()`'s approval cards (the framework adapters' `decide`) and the Claude Agent SDK
bridge's `decide`, against a host that misbehaves one way per case (tests/standin.py): never an
allow but from the honest control, and an end within the documented deadline, timed here.

The deadlines (docs/security.md, "Fail closed"), with this module's limits: a refusal at the
handshake (a redirect, a token that can answer, a close code that stops) within one connection
attempt (`CONNECT`); a host that stays of no use within `LIMIT` (the unreachable limit) plus a
pause and an attempt; a host that accepts the card and never settles it within the decision's
deadline (`DECIDE`) plus the withdrawal's window.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from tests.e2e.host_process import free_port
from tests.standin import CASES, StandIn
from user_questions import Context, ErrorCode, UserQuestionError, UserQuestionService, connect
from user_questions.bridges.claude import PermissionAllow, PermissionDeny, decide
from user_questions.integrations import _asking
from user_questions.providers.remote import BACKOFF_MAX, RemoteProvider

pytestmark = pytest.mark.anyio

CONNECT = 0.3
"""`connect_timeout`: one connection attempt, and the host's answer to a frame."""
LIMIT = 0.6
"""`unreachable_limit`: how long a host may give nothing useful."""
DECIDE = 1.2
"""The decision's own deadline (`question_timeout`, `decision_timeout`)."""
MARGIN = 2.0
"""Seconds for the event loop and a loaded machine."""
AT_ONCE = 2 * CONNECT + MARGIN
UNREACHABLE = LIMIT + BACKOFF_MAX + 2 * CONNECT + MARGIN
UNDECIDED = DECIDE + CONNECT + MARGIN
TOOL, INPUT = "Bash", {"command": "npm test"}


@dataclass(frozen=True)
class Expected:
    code: str | None
    """The error the decision fails with; `None`: decided (allowed only for `allow`)."""
    bound: float


REFUSED = Expected(ErrorCode.HOST_UNREACHABLE, AT_ONCE)
HOST_GONE = Expected(ErrorCode.HOST_UNREACHABLE, UNREACHABLE)
BAD_ANSWER = Expected(ErrorCode.BAD_ANSWER, AT_ONCE)
NEVER_SETTLED = Expected(ErrorCode.HOST_UNREACHABLE, UNREACHABLE)

EXPECTED: dict[str, Expected] = {
    "allow": Expected(None, AT_ONCE),
    "deny": Expected(None, AT_ONCE),
    "redirect-same": REFUSED,
    "redirect-other": REFUSED,
    "error-500-empty": HOST_GONE,
    "error-503-body": HOST_GONE,
    "garbage": HOST_GONE,
    "drip": HOST_GONE,
    "silent": HOST_GONE,
    # Without `require_asker` a role it cannot read is used, with a warning.
    "two-roles": Expected(ErrorCode.ASK_TIMED_OUT, UNDECIDED),
    "unknown-role": Expected(ErrorCode.ASK_TIMED_OUT, UNDECIDED),
    "silent-after": NEVER_SETTLED,
    "store-unavailable": NEVER_SETTLED,
    "oversize": NEVER_SETTLED,
    **{f"close-{code}": NEVER_SETTLED for code in (1000, 1001, 1006, 1009, 1011, 1013, 4000)},
    "close-4401": Expected(ErrorCode.UNAUTHORIZED, AT_ONCE),
    "close-4403": Expected(ErrorCode.FORBIDDEN, AT_ONCE),
    "ws-other-rpc": NEVER_SETTLED,
    "ws-no-rpc": NEVER_SETTLED,
    "ws-ask-error-type": NEVER_SETTLED,
    "ws-other-question": BAD_ANSWER,
    "ws-no-item-id": BAD_ANSWER,
    "ws-two-items": BAD_ANSWER,
    "ws-always-not-offered": BAD_ANSWER,
    "ws-allow-and-text": BAD_ANSWER,
    "ws-unreadable-answered": BAD_ANSWER,
}
"""What each case ends with through `connect()`. The quick path's cases (`decide-*`) are left
out: these gates do not use `/api/decide`."""
AT_ONCE_FOR_A_GATE = {
    "error-500-empty",
    "error-503-body",
    "garbage",
    "drip",
    "silent",
    "two-roles",
    "unknown-role",
    "closed-port",
}
"""With `require_asker`, a host that does not answer the first attempt, or says a role it cannot
read, is refused at once."""


def test_every_case_of_the_stand_in_but_the_quick_paths_is_expected() -> None:
    asked = {case for case in CASES if not case.startswith("decide-")}
    assert asked - {"redirect-target", "pending"} == set(EXPECTED)


async def test_an_approval_nobody_answers_ends_at_its_deadline_and_is_withdrawn(
    stand_in: StandIn,
) -> None:
    seen = stand_in.contacts("pending").frames
    earlier = len(seen)  # other tests ask this case too
    started = time.monotonic()
    async with connect(stand_in.url("pending"), connect_timeout=CONNECT) as asker:
        with pytest.raises(UserQuestionError) as failed:
            await _asking.decide(asker, TOOL, INPUT, question_timeout=DECIDE)
    assert failed.value.code == ErrorCode.ASK_TIMED_OUT
    assert time.monotonic() - started < UNDECIDED
    assert [frame["type"] for frame in seen[earlier:]] == ["ask", "withdraw"]


@pytest.mark.parametrize("case", sorted(EXPECTED))
async def test_connects_decide_never_allows_on_a_failure_and_ends_in_time(
    stand_in: StandIn, case: str
) -> None:
    expected = EXPECTED[case]
    handshakes = len(stand_in.contacts(case).handshakes)
    started = time.monotonic()
    async with connect(
        stand_in.url(case), unreachable_limit=LIMIT, connect_timeout=CONNECT
    ) as asker:
        if expected.code is None:
            decision = await _asking.decide(asker, TOOL, INPUT, question_timeout=DECIDE)
            assert decision.allowed == (case == "allow")
        else:
            with pytest.raises(UserQuestionError) as failed:
                await _asking.decide(asker, TOOL, INPUT, question_timeout=DECIDE)
            assert failed.value.code == expected.code, failed.value.message
    took = time.monotonic() - started
    assert took < expected.bound, f"took {took:.2f} s, more than {expected.bound:g} s"
    # A pause after every failed or dropped connection, 0.05 s doubling: a handful in the
    # unreachable limit, where a storm was about 1,250 a second.
    assert len(stand_in.contacts(case).handshakes) - handshakes <= 8


BRIDGE_CASES = [
    *sorted(AT_ONCE_FOR_A_GATE),
    "allow",
    "deny",
    "redirect-other",
    "silent-after",
    "store-unavailable",
    "close-1000",
    "close-4401",
    "ws-other-rpc",
    "ws-two-items",
]
"""The gate's own behaviour (refusing at once), and one of each other kind: past the
handshake the bridge waits as `connect()`'s asker does, on the same `RemoteProvider`."""


@pytest.mark.parametrize("case", BRIDGE_CASES)
async def test_the_sdk_bridges_decide_denies_every_failure_in_time(
    stand_in: StandIn, case: str
) -> None:
    """With `require_asker`, as the bridge's documentation says to: a host that never answered
    is refused at once (a closed port included), and so is a role it cannot read."""
    url = (
        f"http://127.0.0.1:{free_port()}/?token=t" if case == "closed-port" else stand_in.url(case)
    )
    expected = EXPECTED.get(case, REFUSED)
    provider = RemoteProvider(
        url, unreachable_limit=LIMIT, connect_timeout=CONNECT, require_asker=True
    )
    ctx = Context()
    ctx.plugin(UserQuestionService)
    ctx.user_questions.register_provider(provider)
    started = time.monotonic()
    async with provider:
        permission = await decide(ctx.user_questions, TOOL, INPUT, decision_timeout=DECIDE)
    took = time.monotonic() - started
    if case == "allow":
        assert permission == PermissionAllow(dict(INPUT))
    elif case == "deny":
        assert permission == PermissionDeny("The user denied this Bash call.")
    else:
        assert isinstance(permission, PermissionDeny), permission
        assert permission.message.startswith("Error: "), permission
    bound = AT_ONCE if case in AT_ONCE_FOR_A_GATE else expected.bound
    assert took < bound, f"took {took:.2f} s, more than {bound:g} s"
