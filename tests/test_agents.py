"""Live agents: roots may ask a human; owned agents may not; disposal takes an agent out."""

from __future__ import annotations

import pytest

from user_questions import Agent, Context, HarnessError


def test_entered_agents_are_live_and_roots_have_no_owner(ctx: Context) -> None:
    root, child = Agent(id="root"), Agent(id="child")
    ctx.agents.enter(root)
    ctx.agents.enter(child, owner=root)
    assert ctx.agents.get("root") is root
    assert ctx.agents.list() == [root, child]
    assert ctx.agents.roots() == [root]
    assert ctx.agents.owner_of("child") is root
    assert ctx.agents.is_owned_by("child", root)
    assert ctx.agents.is_owned_by("child", "root")
    assert not ctx.agents.is_owned_by("root", child)


def test_ownership_is_transitive(ctx: Context) -> None:
    a, b, c = Agent(id="a"), Agent(id="b"), Agent(id="c")
    ctx.agents.enter(a)
    ctx.agents.enter(b, owner=a)
    ctx.agents.enter(c, owner=b)
    assert ctx.agents.is_owned_by("c", a)


def test_the_disposer_takes_the_agent_out_and_is_idempotent(ctx: Context) -> None:
    agent = Agent(id="a")
    leave = ctx.agents.enter(agent)
    leave()
    leave()
    assert ctx.agents.get("a") is None
    again = Agent(id="a")
    ctx.agents.enter(again)
    leave()
    assert ctx.agents.get("a") is again


def test_a_second_live_agent_with_the_same_id_is_refused(ctx: Context) -> None:
    ctx.agents.enter(Agent(id="a"))
    with pytest.raises(HarnessError) as caught:
        ctx.agents.enter(Agent(id="a"))
    assert caught.value.code == "AGENT_ALREADY_LIVE"


def test_an_owner_must_be_the_live_instance(ctx: Context) -> None:
    with pytest.raises(HarnessError) as caught:
        ctx.agents.enter(Agent(id="child"), owner=Agent(id="ghost"))
    assert caught.value.code == "OWNER_NOT_LIVE"


def test_an_orphan_is_not_promoted_to_a_root(ctx: Context) -> None:
    root, child = Agent(id="root"), Agent(id="child")
    leave_root = ctx.agents.enter(root)
    ctx.agents.enter(child, owner=root)
    leave_root()
    assert ctx.agents.roots() == []
    assert not ctx.agents.is_root(child)


def test_agents_entered_by_a_plugin_leave_when_it_is_unloaded(ctx: Context) -> None:
    fiber = ctx.plugin(lambda plugin_ctx: plugin_ctx.agents.enter(Agent(id="worker")))
    assert ctx.agents.get("worker") is not None
    fiber.dispose()
    assert ctx.agents.get("worker") is None
