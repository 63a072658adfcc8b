"""The rules a store keeps (both backends): added, listed, used, revoked, heard of by every host;
and the approval a request carries, kept with it."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import anyio
import pytest

from tests.host.conftest import StoreFactory
from user_questions.approvals import approval_question
from user_questions.frames import Approval
from user_questions.host.hub import Hub
from user_questions.host.rules import Rules, answered_decision
from user_questions.host.stores import (
    Decision,
    NewQuestion,
    Rule,
    RuleRecord,
    RulesMoved,
    Settlement,
    Store,
)
from user_questions.outcomes import Outcome, RequestState, Surface
from user_questions.types import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionItem,
    AskUserQuestionOption,
)

pytestmark = pytest.mark.anyio

CREATED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
USED = CREATED + timedelta(days=1)
CARD = AskUserQuestionItem(
    id="approval",
    question="Allow Codex to run Bash: git status?",
    options=[AskUserQuestionOption(label="Allow"), AskUserQuestionOption(label="Deny")],
)
ALLOWED = AskUserQuestionAnswer(
    answers=[AskUserQuestionAnswerItem(id="approval", selected=["Allow"])]
)


def decided(rpc_id: str, *rules: RuleRecord, version: int | None = None) -> NewQuestion:
    """A request stored settled by `rules` at `USED`, decided at rules `version`, as the hub
    stores a call a rule decided."""
    settlement = Settlement(Outcome.ANSWERED, ALLOWED, Surface.RULE, f"rule:{rules[0].id}")
    used = tuple(rule.id for rule in rules)
    return NewQuestion(
        rpc_id, "s", [CARD], USED, settlement=settlement, rules_version=version, rules_used=used
    )


def call(command: str) -> tuple[AskUserQuestionItem, Approval]:
    """The card and approval of a Bash call of `command`, as a hook asks them."""
    arguments = {"command": command}
    return approval_question("Bash", arguments, agent="Codex"), Approval(
        tool="Bash", input=arguments
    )


def once(step: Callable[[], Awaitable[object]]) -> Callable[[], Awaitable[None]]:
    """`step`, run the first time only."""
    pending = [step]

    async def run() -> None:
        if pending:
            await pending.pop()()

    return run


class Watched:
    """A store as the host uses it, watched: the calls one task makes to it, by name, and a step
    run before each `submit` (another process's write between a decision and its commit)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.before_submit: Callable[[], Awaitable[None]] | None = None
        self._calls: list[str] = []
        self._task: int | None = None

    @property
    def typed(self) -> Store:
        return cast(Store, self)

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.store, name)
        if not inspect.iscoroutinefunction(found):
            return found

        async def called(*args: Any, **kwargs: Any) -> Any:
            if anyio.get_current_task().id == self._task:
                self._calls.append(name)
            if name == "submit" and self.before_submit is not None:
                await self.before_submit()
            return await found(*args, **kwargs)

        return called

    @contextlib.contextmanager
    def counting(self) -> Iterator[list[str]]:
        """The names of the store's methods this task calls meanwhile, in order."""
        self._calls, self._task = [], anyio.get_current_task().id
        try:
            yield self._calls
        finally:
            self._task = None


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
    await store.submit(decided("r1", first))
    await store.submit(decided("r2", first))
    listed = {rule.id: rule for rule in await store.rules()}
    assert listed[first.id].hits == 2
    assert listed[first.id].last_used_at == USED
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
    first call decided after the change has returned is decided by it, with nothing waited
    for. A call no rule of the host's copy decides is decided after a read of the rules'
    version; one a rule of the copy decides is committed only while the rules are still at the
    version it was decided at."""
    card, approval = call("git status -s")
    async with (
        make_store() as host,
        make_store(host=False) as command,
        Rules(host) as rules,
        Hub(host, rules=rules) as hub,
    ):
        for run in range(3):  # whatever the host's notices of the changes are doing meanwhile
            made = await command.add_rule(
                Rule("Bash", Decision.ALLOW, CREATED, command="git status")
            )
            allowed = await hub.decide(f"made{run}", "s", [card], approval)
            assert allowed is not None
            assert (allowed.outcome, allowed.settled_by) == (Outcome.ANSWERED, f"rule:{made.id}")
            await command.revoke_rule(made.id)
            assert await hub.decide(f"revoked{run}", "s", [card], approval) is None
            assert await host.get(f"revoked{run}") is None
        deny = await command.add_rule(Rule("Bash", Decision.DENY, CREATED, command="git"))
        denied = await hub.decide("denied", "s", [card], approval)
        assert denied is not None
        assert denied.settled_by == f"rule:{deny.id}"
        assert denied.answer is not None
        assert answered_decision(denied.questions, denied.answer) is Decision.DENY


async def test_a_request_a_rule_settled_counts_its_rules_uses_once_with_its_record(
    store: Store,
) -> None:
    first = await store.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="git status"))
    second = await store.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="npm test"))
    other = await store.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="ls"))
    version = await store.rules_version()
    record, created = await store.submit(decided("r1", first, second, version=version))
    assert created
    assert (record.outcome, record.settled_by) == (Outcome.ANSWERED, f"rule:{first.id}")
    again, created = await store.submit(decided("r1", first, second, version=version))
    assert not created  # a re-attachment: stored once, counted once
    assert again.settled_by == f"rule:{first.id}"
    listed = {rule.id: rule for rule in await store.rules()}
    assert [(listed[rule.id].hits, listed[rule.id].last_used_at) for rule in (first, second)] == [
        (1, USED),
        (1, USED),
    ]
    assert (listed[other.id].hits, listed[other.id].last_used_at) == (0, None)


async def test_a_request_decided_at_rules_that_moved_since_is_not_stored(
    make_store: StoreFactory,
) -> None:
    """Another process revokes the rule between the host's decision and its commit: the
    store writes nothing (no record, no audit record, no use counted) and says so."""
    async with make_store() as store, make_store(host=False) as command:
        made = await store.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="git status"))
        version = await store.rules_version()
        head = await store.audit_head()
        await command.revoke_rule(made.id)
        with pytest.raises(RulesMoved):
            await store.submit(decided("r1", made, version=version))
        assert await store.get("r1") is None
        assert await store.audit_head() == head
        assert [rule.hits for rule in await store.rules()] == [0]
        # A card for a person names the version it was decided at too.
        waiting = NewQuestion("r2", "s", [CARD], CREATED, rules_version=version)
        with pytest.raises(RulesMoved):
            await store.submit(waiting)
        now = replace(waiting, rules_version=await store.rules_version())
        stored, created = await store.submit(now)
        assert created
        assert stored.state is RequestState.PENDING


async def test_a_call_a_rule_decides_costs_one_store_call_which_counts_the_rules_use(
    make_store: StoreFactory,
) -> None:
    """The decision is made from the host's copy of the rules and committed with its rule's
    use; only a call no rule decides reads the rules' version first."""
    async with make_store() as real:
        made = await real.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="git status"))
        store = Watched(real)
        async with Rules(store.typed) as rules, Hub(store.typed, rules=rules) as hub:
            card, approval = call("git status -s")
            with store.counting() as calls:
                record = await hub.decide("r1", "s", [card], approval)
            assert record is not None
            assert record.settled_by == f"rule:{made.id}"
            assert calls == ["submit"]
            assert [rule.hits for rule in await real.rules()] == [1]
            assert (hub.metrics.asked, dict(hub.metrics.settled)) == (1, {("answered", "rule"): 1})
            card, approval = call("git push")
            with store.counting() as calls:
                assert await hub.decide("r2", "s", [card], approval) is None
            assert calls == ["rules_version"]


async def test_a_rule_revoked_between_a_decision_and_its_commit_decides_nothing(
    make_store: StoreFactory,
) -> None:
    """Another process revokes the rule that decided a call after the host decided it from
    its copy, before the commit: the call is decided again from the rules as they are then
    (another rule allows it), and when none decides it, a person is asked."""
    card, approval = call("git status -s")
    async with make_store() as real, make_store(host=False) as command:
        first = await real.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="git status"))
        second = await real.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="git"))
        store = Watched(real)
        async with Rules(store.typed) as rules, Hub(store.typed, rules=rules) as hub:
            store.before_submit = once(lambda: command.revoke_rule(first.id))
            record = await hub.decide("r1", "s", [card], approval)
            assert record is not None
            assert record.settled_by == f"rule:{second.id}"
            store.before_submit = once(lambda: command.revoke_rule(second.id))
            asked, _ = await hub.submit("r2", "s", [card], approval=approval)
            assert asked.state is RequestState.PENDING
            assert hub.pending_count == 1
        assert [rule.hits for rule in await real.rules()] == [0, 1]


async def test_a_call_whose_rules_move_at_every_try_goes_to_a_person(
    make_store: StoreFactory,
) -> None:
    """Rules made elsewhere between every decision and its commit: after three tries the
    rules alone decide nothing (`POST /api/decide` says so) and an ask goes to a person."""
    card, approval = call("git status -s")
    async with make_store() as real, make_store(host=False) as command:
        await real.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="git status"))
        store = Watched(real)
        made = iter(range(100))

        async def another_rule() -> None:
            await command.add_rule(Rule("Bash", Decision.DENY, CREATED, command=f"rm{next(made)}"))

        async with Rules(store.typed) as rules, Hub(store.typed, rules=rules) as hub:
            store.before_submit = another_rule
            with store.counting() as calls:
                assert await hub.decide("r1", "s", [card], approval) is None
            assert calls.count("submit") == 3
            assert await real.get("r1") is None
            with store.counting() as calls:
                asked, _ = await hub.submit("r2", "s", [card], approval=approval)
            assert asked.state is RequestState.PENDING
            assert calls.count("submit") == 4
        assert {rule.hits for rule in await real.rules()} == {0}  # no rule decided anything


async def test_the_rules_version_moves_with_each_rule_added_or_revoked_and_not_with_a_hit(
    store: Store,
) -> None:
    before = await store.rules_version()
    made = await store.add_rule(Rule("Bash", Decision.ALLOW, CREATED, command="ls"))
    added = await store.rules_version()
    assert added > before
    await store.submit(decided("r1", made, version=added))
    assert [rule.hits for rule in await store.rules()] == [1]
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
            # A call no rule decides, asked next: once every page has its card, each has heard
            # all there was to hear of r1.
            push = Approval(tool="Bash", input={"command": "git push"})
            await hub.submit("r2", "s", [approval_question("Bash", push.input)], approval=push)
            for page in pages:
                assert page.snapshot == []
                with anyio.fail_after(10):
                    heard = [await page.frames.receive()]
                    while '"r2"' not in heard[-1]:
                        heard.append(await page.frames.receive())
                assert [frame for frame in heard if '"r1"' in frame] == []
        stored = await store.get("r1")
        assert stored is not None
        assert (stored.outcome, stored.settled_by, stored.shown_at) == (
            Outcome.ANSWERED,
            f"rule:{made.id}",
            None,
        )
        assert stored.answer == record.answer
