"""The rules a store keeps (both backends): added, listed, used, revoked, heard of by every host;
and the approval a request carries, kept with it."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from tests.host.conftest import StoreFactory
from user_questions.approvals import approval_question
from user_questions.frames import Approval
from user_questions.host.hub import Hub
from user_questions.host.rules import Rules
from user_questions.host.stores import Decision, NewQuestion, Rule, Settlement, Store
from user_questions.outcomes import Outcome, Surface
from user_questions.types import AskUserQuestionItem, AskUserQuestionOption

pytestmark = pytest.mark.anyio

CREATED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
CARD = AskUserQuestionItem(
    id="approval",
    question="Allow Codex to run Bash: git status?",
    options=[AskUserQuestionOption(label="Allow"), AskUserQuestionOption(label="Deny")],
)


async def test_rules_are_added_listed_used_and_revoked_with_every_field_kept(store: Store) -> None:
    expires = CREATED + timedelta(days=7)
    first = await store.add_rule(
        Rule(
            "Bash",
            Decision.ALLOW,
            CREATED,
            command="npm run test",
            asker="ci",
            cwd="/home/dev/shop",
            created_by="alice",
            expires_at=expires,
        )
    )
    second = await store.add_rule(Rule("*", Decision.DENY, CREATED, command="rm -rf"))
    assert second.id > first.id
    assert first.rule == Rule(
        "Bash",
        Decision.ALLOW,
        CREATED,
        command="npm run test",
        asker="ci",
        cwd="/home/dev/shop",
        created_by="alice",
        expires_at=expires,
    )
    await store.rule_used(first.id)
    await store.rule_used(first.id)
    listed = {rule.id: rule for rule in await store.rules()}
    assert listed[first.id].hits == 2
    assert listed[first.id].last_used_at is not None
    assert listed[second.id].hits == 0
    assert listed[second.id].last_used_at is None
    revoked = await store.revoke_rule(first.id)
    assert revoked is not None
    assert revoked.revoked_at is not None
    assert await store.revoke_rule(first.id) is None  # revoked once only
    assert await store.revoke_rule(9999) is None
    assert [r.id for r in await store.rules() if r.revoked_at is None] == [second.id]


async def test_a_request_keeps_what_it_approves_and_a_plain_question_approves_nothing(
    store: Store,
) -> None:
    approval = Approval(
        tool="Bash", input={"command": "git status"}, agent="codex", cwd="/home/dev/shop"
    )
    asked = NewQuestion("r1", "s", [CARD], CREATED, approval=approval)
    created, _ = await store.submit(asked)
    assert created.approval == approval
    await store.submit(NewQuestion("r2", "s", [CARD], CREATED))
    read = await store.get("r1")
    plain = await store.get("r2")
    assert read is not None
    assert read.approval == approval
    assert plain is not None
    assert plain.approval is None
    settled = await store.settle("r1", Settlement(Outcome.DISMISSED))
    assert settled is not None
    assert settled.approval == approval


async def test_a_rule_made_or_revoked_beside_a_host_decides_there_once_made(
    make_store: StoreFactory,
) -> None:
    """`uq rule add` and `uq rule revoke` (a command beside the host), or another node: the
    host reads the rules' version before each decision, so the first call decided after the
    change has returned is decided by it, with nothing waited for."""
    approval = Approval(tool="Bash", input={"command": "git status -s"})
    async with make_store() as host, make_store(host=False) as command, Rules(host) as rules:
        for _ in range(3):  # whatever the host's notices of the changes are doing meanwhile
            made = await command.add_rule(
                Rule("Bash", Decision.ALLOW, CREATED, command="git status")
            )
            allowed = await rules.decide(approval, None)
            assert allowed is not None
            assert allowed.match is not None
            assert allowed.match.rule.id == made.id
            await command.revoke_rule(made.id)
            revoked = await rules.decide(approval, None)
            assert revoked is not None
            assert revoked.match is None
        deny = await command.add_rule(Rule("Bash", Decision.DENY, CREATED, command="git"))
        denied = await rules.decide(approval, None)
        assert denied is not None
        assert denied.match is not None
        assert (denied.match.rule.id, denied.match.allowed) == (deny.id, False)


async def test_the_rules_version_moves_with_each_rule_added_or_revoked_and_not_with_a_hit(
    store: Store,
) -> None:
    before = await store.rules_version()
    made = await store.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="ls"))
    added = await store.rules_version()
    assert added > before
    await store.rule_used(made.id)
    assert await store.rules_version() == added
    await store.revoke_rule(made.id)
    assert await store.rules_version() > added


async def test_a_request_a_rule_decides_is_stored_settled_and_never_shown_on_any_node(
    make_store: StoreFactory, tells_changes: bool
) -> None:
    """Stored settled in one statement: another node (PostgreSQL) hears of it only as settled,
    so no page anywhere gets its card, even for an instant."""
    card = approval_question("Bash", {"command": "git status"}, agent="Codex")
    approval = Approval(tool="Bash", input={"command": "git status"})
    async with make_store() as store, Rules(store) as rules, Hub(store, rules=rules) as hub:
        made = await store.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="git status"))
        await rules.reload()
        async with contextlib.AsyncExitStack() as others:
            pages = [hub.subscribe()]
            if tells_changes:  # a second node on the same database, with a page open
                other = await others.enter_async_context(make_store())
                pages.append((await others.enter_async_context(Hub(other))).subscribe())
            record, _ = await hub.submit("r1", "s", [card], approval=approval)
            assert (record.outcome, record.settled_via) == (Outcome.ANSWERED, Surface.RULE)
            assert record.settled_by == f"rule:{made.id}"
            await anyio.sleep(0.5)  # time for the other node to hear of it
            for page in pages:
                assert page.snapshot == []
                with pytest.raises(anyio.WouldBlock):
                    page.frames.receive_nowait()
        stored = await store.get("r1")
        assert stored is not None
        assert (stored.outcome, stored.settled_by, stored.shown_at) == (
            Outcome.ANSWERED,
            f"rule:{made.id}",
            None,
        )
        assert stored.answer == record.answer
