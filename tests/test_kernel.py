"""The Cordis-style kernel: plugins of every shape, effects, events, services, inject gating,
LIFO disposal, and no residue after unloading."""

from __future__ import annotations

import types
from typing import Any

import pytest

from user_questions import Context, HarnessError, Service


def snapshot(ctx: Context) -> tuple[dict[str, object], dict[str, list[object]]]:
    app = ctx._app
    return dict(app.services), {k: list(v) for k, v in app.listeners.items()}


def test_function_plugin_gets_its_context_and_config() -> None:
    ctx = Context()
    seen: list[object] = []

    def plugin(plugin_ctx: Context, config: Any) -> None:
        seen.append((plugin_ctx.fiber.parent is ctx.fiber, config))

    fiber = ctx.plugin(plugin, {"x": 1})
    assert seen == [(True, {"x": 1})]
    assert fiber.name == "plugin"
    assert fiber.active


def test_module_and_object_plugins_use_apply_name_and_inject() -> None:
    ctx = Context()
    module = types.ModuleType("my_plugin")
    calls: list[str] = []
    module.apply = lambda plugin_ctx: calls.append("module")  # type: ignore[attr-defined]

    class ObjectPlugin:
        name = "object-plugin"

        def apply(self, plugin_ctx: Context, config: Any) -> None:
            calls.append(f"object {config}")

    assert ctx.plugin(module).name == "my_plugin"
    assert ctx.plugin(ObjectPlugin(), 3).name == "object-plugin"
    assert calls == ["module", "object 3"]


def test_something_that_is_not_a_plugin_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="a plugin is a function"):
        Context().plugin(42)


def test_effects_and_listeners_are_undone_in_reverse_order() -> None:
    ctx = Context()
    order: list[str] = []

    def plugin(plugin_ctx: Context) -> None:
        plugin_ctx.effect(lambda: lambda: order.append("first"))
        plugin_ctx.on("tick", lambda: None)
        plugin_ctx.effect(lambda: lambda: order.append("second"))

    fiber = ctx.plugin(plugin)
    fiber.dispose()
    fiber.dispose()
    assert order == ["second", "first"]
    assert ctx._app.listeners == {}


def test_effect_runs_at_once_and_its_disposer_is_idempotent() -> None:
    ctx = Context()
    calls: list[str] = []

    def setup() -> Any:
        calls.append("setup")
        return lambda: calls.append("undo")

    dispose = ctx.effect(setup)
    assert calls == ["setup"]
    dispose()
    dispose()
    ctx.fiber.dispose()
    assert calls == ["setup", "undo"]


def test_events_reach_listeners_registered_through_every_context_of_the_app() -> None:
    ctx = Context()
    heard: list[str] = []
    child = ctx.plugin(lambda c: c.on("ping", lambda who: heard.append(f"child:{who}")))
    ctx.on("ping", lambda who: heard.append(f"root:{who}"))
    child.ctx.emit("ping", "a")
    ctx.emit("ping", "b")
    assert heard == ["child:a", "root:a", "child:b", "root:b"]


def test_a_raising_listener_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ctx = Context()
    heard: list[str] = []

    def broken() -> None:
        raise RuntimeError("listener bug")

    ctx.on("e", broken)
    ctx.on("e", lambda: heard.append("ok"))
    ctx.emit("e")
    assert heard == ["ok"]
    assert "a listener of e raised" in caplog.text


def test_an_async_listener_is_reported_not_left_unawaited(caplog: pytest.LogCaptureFixture) -> None:
    ctx = Context()

    async def listener() -> None:
        return None

    ctx.on("e", listener)
    ctx.emit("e")
    assert "listeners must be synchronous" in caplog.text


def test_disposing_a_parent_disposes_its_child_plugins_first() -> None:
    ctx = Context()
    order: list[str] = []

    def child(plugin_ctx: Context) -> None:
        plugin_ctx.effect(lambda: lambda: order.append("child"))

    def parent(plugin_ctx: Context) -> None:
        plugin_ctx.effect(lambda: lambda: order.append("parent before"))
        plugin_ctx.plugin(child)
        plugin_ctx.effect(lambda: lambda: order.append("parent after"))

    ctx.plugin(parent).dispose()
    assert order == ["parent after", "child", "parent before"]


def test_a_plugin_that_raises_is_rolled_back_and_the_error_propagates() -> None:
    ctx = Context()
    before = snapshot(ctx)

    def plugin(plugin_ctx: Context) -> None:
        plugin_ctx.on("e", lambda: None)
        raise RuntimeError("apply failed")

    with pytest.raises(RuntimeError, match="apply failed"):
        ctx.plugin(plugin)
    assert snapshot(ctx) == before
    assert ctx.fiber._owned == {}


class Counter(Service):
    provides = "counter"

    def __init__(self, ctx: Context, config: Any = None) -> None:
        super().__init__(ctx, config)
        self.value = 0

    def track(self) -> Any:
        def setup() -> Any:
            self.value += 1

            def undo() -> None:
                self.value -= 1

            return undo

        return self.caller.effect(setup)


def test_a_service_subclass_provides_its_attribute_until_its_fiber_goes() -> None:
    ctx = Context()
    fiber = ctx.plugin(Counter)
    assert isinstance(ctx.get("counter"), Counter)
    fiber.dispose()
    assert ctx.get("counter") is None
    with pytest.raises(AttributeError, match="no service named 'counter'"):
        _ = ctx.counter


def test_a_service_reached_through_a_plugin_records_on_that_plugins_fiber() -> None:
    ctx = Context()
    ctx.plugin(Counter)
    fiber = ctx.plugin(lambda plugin_ctx: plugin_ctx.get("counter").track())
    counter = ctx.get("counter")
    assert counter.value == 1
    fiber.dispose()
    assert counter.value == 0


def test_views_share_state_and_are_stable_per_context() -> None:
    ctx = Context()
    ctx.plugin(Counter)
    child = ctx.plugin(lambda plugin_ctx: None)
    root_view, child_view = ctx.get("counter"), child.ctx.get("counter")
    assert root_view is ctx.get("counter")
    child_view.value = 7
    assert root_view.value == 7
    assert child_view.caller is child.ctx


def test_providing_a_second_service_of_a_name_is_refused() -> None:
    ctx = Context()
    ctx.plugin(Counter)
    with pytest.raises(HarnessError) as caught:
        ctx.plugin(Counter)
    assert caught.value.code == "DUPLICATE_SERVICE"


def test_injected_plugin_waits_for_its_service_and_follows_it() -> None:
    ctx = Context()
    applied: list[str] = []

    def apply(plugin_ctx: Context) -> None:
        applied.append("apply")
        plugin_ctx.effect(lambda: lambda: applied.append("dispose"))

    dependent = types.SimpleNamespace(name="dependent", inject=["counter"], apply=apply)
    fiber = ctx.plugin(dependent)
    assert applied == []
    assert not fiber.active
    service = ctx.plugin(Counter)
    assert applied == ["apply"]
    service.dispose()
    assert applied == ["apply", "dispose"]
    assert not fiber.active
    ctx.plugin(Counter)
    assert applied == ["apply", "dispose", "apply"]
    fiber.dispose()
    assert applied == ["apply", "dispose", "apply", "dispose"]
    assert fiber not in ctx._app.gated


def test_inject_must_list_service_names() -> None:
    bad = types.SimpleNamespace(name="bad", inject="counter", apply=lambda c: None)
    with pytest.raises(TypeError, match="inject as a list"):
        Context().plugin(bad)


def test_registering_through_a_disposed_plugins_context_leaves_nothing_behind() -> None:
    ctx = Context()
    fiber = ctx.plugin(lambda plugin_ctx: None)
    fiber.dispose()
    undone: list[str] = []
    fiber.ctx.effect(lambda: lambda: undone.append("undone"))
    fiber.ctx.on("e", lambda: None)
    assert undone == ["undone"]
    assert ctx._app.listeners == {}


def test_loading_and_unloading_plugins_leaves_no_residue(ctx: Context) -> None:
    from user_questions import ScriptedProvider, tool_ask_user, tool_exit_plan_mode

    def harness(plugin_ctx: Context) -> None:
        plugin_ctx.on("user-questions/requested", lambda event: None)
        plugin_ctx.user_questions.register_provider(ScriptedProvider({}))
        plugin_ctx.plugin(tool_ask_user)
        plugin_ctx.plugin(tool_exit_plan_mode)

    before = snapshot(ctx), ctx.tools.list(), dict(ctx.fiber._owned), list(ctx._app.gated)
    fiber = ctx.plugin(harness)
    assert [tool.name for tool in ctx.tools.list()] == ["ask_user_question", "exit_plan_mode"]
    assert ctx.user_questions.provider is not None
    fiber.dispose()
    after = snapshot(ctx), ctx.tools.list(), dict(ctx.fiber._owned), list(ctx._app.gated)
    assert after == before
    assert ctx.user_questions.provider is None
