"""Made by the host, "Allow and don't ask again": the card offers exactly the rule it will
make, a winning answer with `remember: true` makes that rule once, and the next identical call
is settled by it (on another PostgreSQL node too); a losing answer, a plain question, a call no
rule can name, an answer that does not allow, or an asker's token makes none."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from starlette.testclient import TestClient

from tests.host.conftest import TOKEN, answer, next_frame
from tests.host.endpoints.test_rules_api import ADMIN, asker, person
from user_questions.approvals import ALLOW, ALLOW_ALWAYS, DENY, approval_of, approval_question
from user_questions.frames import Approval, Ask, ClientResponse
from user_questions.host.app import create_app
from user_questions.host.config import HostConfig
from user_questions.host.gate.tokens import Tokens, add_token
from user_questions.host.hub import Hub
from user_questions.host.rules import Rules, proposed_rule, rule_text
from user_questions.host.stores import Decision, Role, RuleRecord, TokenChange, open_store
from user_questions.host.stores.sqlite import SQLiteStore
from user_questions.host.web.history import entry_of
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem

pytestmark = pytest.mark.anyio

SHOP = "/home/dev/shop"
SHOWN = f"allow Bash npm run test for dev in {SHOP}"


@dataclass
class Host:
    hub: Hub
    store: SQLiteStore


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    async with (
        SQLiteStore(tmp_path / "host.db") as store,
        Rules(store) as rules,
        Hub(store, rules=rules) as hub,
    ):
        yield Host(hub, store)


def codex_call(command: str) -> tuple[AskUserQuestionItem, Approval]:
    """Codex's card for `command` in the shop, and what it approves (Codex offers no
    "don't ask again" of its own)."""
    arguments = {"command": command}
    card = approval_question("Bash", arguments, agent="Codex")
    return card, approval_of("Bash", arguments, agent="codex", cwd=SHOP)


def choosing(rpc_id: str, label: str, *, remember: bool) -> ClientResponse:
    chosen = answer(rpc_id, "codex:1", {"id": "approval", "selected": [label]})
    value = chosen.result.value.model_copy(update={"remember": remember})  # type: ignore[union-attr]
    result = chosen.result.model_copy(update={"value": value})
    return chosen.model_copy(update={"result": result})


async def ask(host: Host, rpc_id: str, command: str, asked_by: str | None = "dev") -> Any:
    card, approval = codex_call(command)
    record, _ = await host.hub.submit(
        rpc_id, "codex:1", [card], asked_by=asked_by, approval=approval
    )
    return record


async def rules_made(host: Host) -> list[RuleRecord]:
    return list(await host.store.rules())


async def test_the_card_offers_the_rule_and_a_winning_remember_makes_it_once(host: Host) -> None:
    page = host.hub.subscribe()
    await ask(host, "r1", "npm  run test")
    offered = (await next_frame(page))["remember"]
    assert offered == {
        "tool": "Bash",
        "decision": "allow",
        "command": "npm run test",
        "asker": "dev",
        "cwd": SHOP,
        "text": SHOWN,
    }
    receipt = await host.hub.respond(
        choosing("r1", ALLOW, remember=True), via=Surface.WEB, by="alice"
    )
    assert receipt.accepted
    again = await host.hub.respond(choosing("r1", ALLOW, remember=True), via=Surface.WEB, by="bob")
    assert (again.accepted, again.reason) == (False, "not-pending")
    [made] = await rules_made(host)
    assert rule_text(made.rule) == SHOWN
    assert (made.rule.decision, made.rule.created_by) == (Decision.ALLOW, "alice")
    stored = await host.store.get("r1")
    assert stored is not None
    assert stored.answer is not None
    assert stored.answer.answers[0].selected == [ALLOW]  # Codex is told to run it, once

    # The same call again is settled by the rule; no page hears of it.
    next_time = await ask(host, "r2", "npm run test")
    assert (next_time.outcome, next_time.settled_via) == (Outcome.ANSWERED, Surface.RULE)
    assert next_time.settled_by == f"rule:{made.id}"
    assert [rule.hits for rule in await rules_made(host)] == [1]
    # Another asker, another folder or another command is still asked.
    assert (await ask(host, "r3", "npm run test", asked_by="ci")).pending
    assert (await ask(host, "r4", "npm run build")).pending


async def test_of_two_remember_answers_at_once_one_wins_and_one_rule_is_made(host: Host) -> None:
    await ask(host, "r1", "npm run test")
    receipts = []

    async def answering(person: str) -> None:
        chosen = choosing("r1", ALLOW, remember=True)
        receipts.append(await host.hub.respond(chosen, via=Surface.WEB, by=person))

    async with anyio.create_task_group() as both:
        both.start_soon(answering, "alice")
        both.start_soon(answering, "bob")
    assert sorted(receipt.accepted for receipt in receipts) == [False, True]
    stored = await host.store.get("r1")
    assert stored is not None
    [made] = await rules_made(host)
    assert made.rule.created_by == stored.settled_by  # the winner made it


async def test_claude_codes_own_dont_ask_again_still_goes_back_as_chosen(host: Host) -> None:
    arguments = {"command": "pytest -x"}
    card = approval_question("Bash", arguments, agent="Claude", always="Bash(pytest:*)")
    approval = approval_of("Bash", arguments, agent="claude-code", cwd=SHOP)
    await host.hub.submit("r1", "codex:1", [card], asked_by="dev", approval=approval)
    chosen = choosing("r1", ALLOW_ALWAYS, remember=True)
    assert (await host.hub.respond(chosen, via=Surface.WEB, by="alice")).accepted
    stored = await host.store.get("r1")
    assert stored is not None
    assert stored.answer is not None
    assert stored.answer.answers[0].selected == [ALLOW_ALWAYS]  # its updatedPermissions
    assert [rule_text(r.rule) for r in await rules_made(host)] == [
        f"allow Bash pytest -x for dev in {SHOP}"
    ]


async def test_a_losing_remember_answer_makes_no_rule(host: Host) -> None:
    await ask(host, "r1", "npm run test")
    assert (await host.hub.respond(choosing("r1", DENY, remember=False), via=Surface.WEB)).accepted
    late = await host.hub.respond(choosing("r1", ALLOW, remember=True), via=Surface.WEB, by="bob")
    assert (late.accepted, late.reason) == (False, "not-pending")
    assert await rules_made(host) == []


async def test_remember_where_no_rule_is_offered_is_refused_and_the_request_waits(
    host: Host,
) -> None:
    page = host.hub.subscribe()
    # A plain question: never a rule.
    plain = AskUserQuestionItem.model_validate(
        {"id": "approval", "question": "Ship it?", "options": [{"label": ALLOW}, {"label": DENY}]}
    )
    await host.hub.submit("plain", "codex:1", [plain], asked_by="dev")
    assert "remember" not in await next_frame(page)
    # A compound command: an allow rule never matches one, so none is offered.
    await ask(host, "compound", "npm run test && rm -rf /")
    assert "remember" not in await next_frame(page)
    for rpc_id in ("plain", "compound"):
        refused = await host.hub.respond(
            choosing(rpc_id, ALLOW, remember=True), via=Surface.WEB, by="alice"
        )
        assert (refused.accepted, refused.reason) == (False, "bad-response")
        assert refused.message == f'question "{rpc_id}" offers no rule to remember'
    # A denial, or nobody to make it: refused too.
    await ask(host, "r1", "npm run test")
    denied = await host.hub.respond(choosing("r1", DENY, remember=True), via=Surface.WEB, by="al")
    assert (denied.accepted, denied.message) == (
        False,
        "remember goes with an answer that allows the call",
    )
    nobody = await host.hub.respond(choosing("r1", ALLOW, remember=True), via=Surface.WEB)
    assert (nobody.accepted, nobody.message) == (False, "only a person's answer can make a rule")
    assert await rules_made(host) == []
    assert all(record.pending for record in await host.store.pending())


@pytest.mark.parametrize(
    ("tool", "arguments", "cwd", "shown"),
    [
        (
            "Bash",
            {"command": ["bash", "-lc", "git status"]},
            SHOP,
            f"allow Bash git status for dev in {SHOP}",
        ),
        ("exec_command", {"cmd": "ls -la"}, None, "allow exec_command ls -la for dev"),
        (
            "Read",
            {"file_path": "src/../app.py"},
            SHOP,
            f"allow Read {SHOP}/app.py for dev in {SHOP}",
        ),
        (
            "WebFetch",
            {"url": "https://Docs.Example.com/a?b"},
            None,
            "allow WebFetch docs.example.com for dev",
        ),
        (
            "mcp__github__list_prs",
            {"repo": "x"},
            SHOP,
            f"allow mcp__github__list_prs for dev in {SHOP}",
        ),
        ("Bash", {"command": "npm test | tee out"}, SHOP, None),
        ("Bash", {"command": "echo 'open"}, SHOP, None),
        ("Bash", {"description": "no command"}, SHOP, None),
        ("Read", {"file_path": "/etc/*"}, None, None),
        ("WebFetch", {"url": "not a url"}, None, None),
        ("Read", {"file_path": "a.py"}, "relative/dir", None),
    ],
)
def test_the_rule_offered_names_exactly_the_call(
    tool: str, arguments: dict[str, Any], cwd: str | None, shown: str | None
) -> None:
    rule = proposed_rule(Approval(tool=tool, input=arguments, cwd=cwd), "dev")
    assert (None if rule is None else rule_text(rule)) == shown


def test_an_asker_cannot_answer_so_cannot_remember_and_a_person_can(tmp_path: Path) -> None:
    card, approval = codex_call("npm run test")
    frame = Ask(rpc_id="r1", session_id="codex:1", questions=[card], approval=approval)
    with TestClient(create_app(HostConfig(store=tmp_path / "host.db", token=TOKEN))) as client:
        with client.websocket_connect("/ws/ask", headers=asker(client)) as socket:
            socket.send_text(frame.model_dump_json(exclude_none=True))
            assert '"ask/pending"' in socket.receive_text()
            body = choosing("r1", ALLOW, remember=True).model_dump(mode="json")
            refused = client.post("/api/respond", headers=asker(client), json=body)
            assert refused.status_code == 403
            assert client.get("/api/rules", headers=ADMIN).json() == {"rules": []}
            made = client.post("/api/respond", headers=person(client, "carol"), json=body)
            assert made.json() == {"accepted": True}
        [rule] = client.get("/api/rules", headers=ADMIN).json()["rules"]
        assert (rule["text"], rule["createdBy"]) == (
            f"allow Bash npm run test for agents in {SHOP}",
            "carol",
        )


async def test_history_offers_the_rule_that_decides_the_call_as_it_was_decided(
    host: Host,
) -> None:
    for rpc_id, command in (("allowed", "npm run lint"), ("denied", "git push"), ("typed", "ls")):
        await ask(host, rpc_id, command)
    await host.hub.respond(choosing("allowed", ALLOW, remember=False), via=Surface.WEB, by="al")
    await host.hub.respond(choosing("denied", DENY, remember=False), via=Surface.WEB, by="al")
    typed = answer("typed", "codex:1", {"id": "approval", "selected": [], "custom": "not now"})
    await host.hub.respond(typed, via=Surface.WEB, by="al")
    await ask(host, "compound", "ls; rm -rf /")
    await host.hub.respond(choosing("compound", ALLOW, remember=False), via=Surface.WEB, by="al")

    async def offered(rpc_id: str) -> str | None:
        record = await host.store.get(rpc_id)
        assert record is not None
        proposal = entry_of(record).remember
        return None if proposal is None else proposal.text

    assert await offered("allowed") == f"allow Bash npm run lint for dev in {SHOP}"
    assert await offered("denied") == f"deny Bash git push for dev in {SHOP}"
    assert await offered("typed") == f"deny Bash ls for dev in {SHOP}"
    assert await offered("compound") is None
    # Made (as the history page does, POST /api/rules), the same call is settled by it, and its
    # history entry offers nothing more.
    rule = proposed_rule(codex_call("git push")[1], "dev", Decision.DENY)
    assert rule is not None
    made = await host.store.add_rule(rule)
    assert host.hub.rules is not None
    await host.hub.rules.reload()
    again = await ask(host, "again", "git push")
    assert (again.outcome, again.settled_by) == (Outcome.ANSWERED, f"rule:{made.id}")
    assert entry_of(again).remember is None


async def test_a_rule_remembered_on_one_node_settles_the_next_call_on_another(pg_url: str) -> None:
    """PostgreSQL, two nodes: the answer wins on one, the same call asked on the other is
    settled by the rule it made, with no page there hearing of it."""
    async with contextlib.AsyncExitStack() as nodes:
        hubs = []
        for _ in range(2):
            store = await nodes.enter_async_context(open_store(pg_url))
            rules = await nodes.enter_async_context(Rules(store))
            hubs.append(await nodes.enter_async_context(Hub(store, rules=rules)))
        first, second = hubs
        card, approval = codex_call("npm run test")
        await first.submit("r1", "codex:1", [card], asked_by="dev", approval=approval)
        chosen = choosing("r1", ALLOW, remember=True)
        assert (await first.respond(chosen, via=Surface.WEB, by="alice")).accepted
        page = second.subscribe()  # no wait: the rule is in force once the answer returned
        again, _ = await second.submit("r2", "codex:1", [card], asked_by="dev", approval=approval)
        assert (again.outcome, again.settled_via) == (Outcome.ANSWERED, Surface.RULE)
        # r1's own notices may reach this node late, and its page with them: none names r2.
        heard = [*page.snapshot, *drained(page.frames)]
        assert [frame for frame in heard if '"r2"' in frame] == []


def drained(frames: MemoryObjectReceiveStream[str]) -> list[str]:
    """The frames `frames` holds now, without waiting for more."""
    held = []
    with contextlib.suppress(anyio.WouldBlock):
        while True:
            held.append(frames.receive_nowait())
    return held


async def test_a_remembered_rule_is_made_only_by_someone_who_may_answer_what_it_decides(
    tmp_path: Path,
) -> None:
    """The rule "Allow and don't ask again" makes is scoped to the card's asker, and made only
    when the person who answered may make it: bob sees ci's card (an escalation step routed it
    to him), but ci's requests are routed to alice, so its rules are hers (or an admin's)."""
    async with SQLiteStore(tmp_path / "host.db") as store:
        await add_token(store, "alice")
        await add_token(store, "bob")
        await add_token(store, "ci", TokenChange(role=Role.ASKER, routes=["alice"]))
        async with (
            Tokens(store, "owner-token-123", "agents-token-123") as tokens,
            Rules(store) as rules,
            Hub(store, rules=rules, tokens=tokens) as hub,
        ):
            card, approval = codex_call("npm run test")
            audience = ("alice", "bob")
            await hub.submit(
                "r1", "codex:1", [card], asked_by="ci", approval=approval, audience=audience
            )
            refused = await hub.respond(
                choosing("r1", ALLOW, remember=True), via=Surface.WEB, by="bob"
            )
            assert (refused.accepted, refused.reason, refused.message) == (
                False,
                "bad-response",
                "bob may not make this rule: the requests of ci are routed to others: its rules "
                "are theirs or an admin's",
            )
            assert await store.rules() == []
            mine = await hub.respond(
                choosing("r1", ALLOW, remember=True), via=Surface.WEB, by="alice"
            )
            assert mine.accepted
            [made] = await store.rules()
            assert (made.rule.asker, made.rule.created_by) == ("ci", "alice")
