"""A small Cordis-style kernel: contexts, plugins, services, effects and events.

An app is a tree of fibers. `ctx.plugin(p)` applies a plugin in a new fiber, a child of the
fiber of `ctx`, and hands it a context bound to that fiber. Everything registered through that
context (effects, event listeners, child plugins, services, and what services record through it,
such as a provider or a tool) belongs to the fiber; `fiber.dispose()` undoes it all in reverse
order, so loading then unloading a plugin leaves the app as it was.

Services live on the app, one per name (`ctx.user_questions`, `ctx.agents`, `ctx.tools`). The
kernel knows none of them: a service is reached by its name (`ctx.get(name)`, or an attribute);
`user_questions.context.Context` is this context with this package's services typed. Reaching
a service through a context yields a view of the one instance that remembers that context as its
`caller`, which is how a registration made through a plugin's context lands on that plugin's fiber.

A plugin that declares `inject = ["tools", ...]` is applied only while those services exist: it is
torn down when one goes (or is replaced) and applied again when it returns.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Self, TypeAlias

from user_questions._lifecycle.disposer import Disposer, nothing
from user_questions._lifecycle.listeners import Listeners
from user_questions.errors import ErrorCode, HarnessError

__all__ = ["Context", "Disposer", "Fiber", "Service"]

logger = logging.getLogger(__name__)

Plugin: TypeAlias = Any
"""A function `apply(ctx, config)`, a module or object with `apply`, or a `Service` subclass."""


class Service:
    """Base of a service: a plugin that provides one attribute of every context of its app.

    Subclasses set `provides` (the attribute name) and may set `inject`. The instance is built
    with the context of its own fiber, kept as `self.ctx`; `self.caller` is the context the
    service was reached through, which owns what a method registers on the caller's behalf.
    """

    __slots__ = ("__dict__", "__weakref__", "_caller")

    provides: ClassVar[str]
    inject: ClassVar[Sequence[str]] = ()

    def __init__(self, ctx: Context, config: Any = None) -> None:
        self.ctx = ctx
        self.config = config
        self._caller = ctx

    @property
    def caller(self) -> Context:
        """The context this view of the service was reached through."""
        return self._caller

    def _view_for(self, caller: Context) -> Self:
        # Shares the instance's __dict__ (all state) and differs only in the `_caller` slot.
        view = object.__new__(type(self))
        view.__dict__ = self.__dict__
        view._caller = caller
        return view


class _App:
    """State shared by every context of one app."""

    def __init__(self) -> None:
        self.services: dict[str, object] = {}
        self.listeners: dict[str, Listeners[...]] = {}
        self.gated: list[Fiber] = []
        self._refreshing = False
        self._dirty = False

    def refresh_gated(self) -> None:
        """Re-evaluate every gated fiber until nothing changes (teardowns may cascade)."""
        if self._refreshing:
            self._dirty = True
            return
        self._refreshing = True
        try:
            self._dirty = True
            while self._dirty:
                self._dirty = False
                for fiber in tuple(self.gated):
                    fiber._refresh()
        finally:
            self._refreshing = False


class Fiber:
    """One application of one plugin: owns its registrations and its child plugins."""

    def __init__(
        self,
        app: _App,
        parent: Fiber | None,
        name: str,
        apply: Callable[[Context, Any], object] | None,
        config: Any,
        inject: Sequence[str],
    ) -> None:
        self.name = name
        self.config = config
        self.inject = tuple(inject)
        self.parent = parent
        # A child's context is of its parent's class, so a typed subclass stays typed.
        self.ctx: Context = (Context if parent is None else type(parent.ctx))._bound(app, self)
        self._app = app
        self._apply = apply
        self._owned: dict[int, Disposer] = {}
        self._next_key = 0
        self._injected: dict[str, object] = {}
        self._unlink: Disposer = nothing
        self.active = False
        self.disposed = False

    def __repr__(self) -> str:
        state = "disposed" if self.disposed else "active" if self.active else "waiting"
        return f"<Fiber {self.name} {state}>"

    def own(self, undo: Disposer) -> Disposer:
        """Make `undo` part of this fiber's teardown; returns an idempotent disposer for it.

        On a fiber that is disposed or waiting for its services, `undo` runs at once: nothing
        registered by a stray task outlives the plugin that made it.
        """
        if not self.active:
            undo()
            return nothing
        key = self._next_key
        self._next_key += 1
        done = False

        def dispose() -> None:
            nonlocal done
            if done:
                return
            done = True
            self._owned.pop(key, None)
            undo()

        self._owned[key] = dispose
        return dispose

    def dispose(self) -> None:
        """Undo all this fiber registered, children included, in reverse order. Idempotent."""
        if self.disposed:
            return
        self.disposed = True
        self._teardown()
        if self in self._app.gated:
            self._app.gated.remove(self)
        self._unlink()

    def _teardown(self) -> None:
        self.active = False
        while self._owned:
            dispose = self._owned[next(reversed(self._owned))]
            try:
                dispose()
            except Exception:
                logger.exception("disposing a registration of plugin %s raised", self.name)
        self._injected = {}

    def _activate(self) -> None:
        self.active = True
        self._injected = {name: self._app.services[name] for name in self.inject}
        if self._apply is None:
            return
        try:
            self._apply(self.ctx, self.config)
        except BaseException:
            self._teardown()
            raise

    def _refresh(self) -> None:
        services = self._app.services
        ready = all(name in services for name in self.inject)
        if self.active and (
            not ready or any(services[name] is not self._injected[name] for name in self.inject)
        ):
            self._teardown()
        if ready and not self.active and not self.disposed:
            try:
                self._activate()
            except Exception:
                logger.exception("re-applying plugin %s raised; it stays inactive", self.name)


def _plugin_parts(plugin: Plugin) -> tuple[str, Callable[[Context, Any], object], Sequence[str]]:
    """Name, apply function and injected services of any supported plugin shape."""
    if isinstance(plugin, type) and issubclass(plugin, Service):
        service_class = plugin

        def apply_service(ctx: Context, config: Any) -> None:
            ctx.provide(service_class.provides, service_class(ctx, config))

        return plugin.__name__, apply_service, plugin.inject
    if inspect.isfunction(plugin) or inspect.ismethod(plugin):
        apply, name = plugin, plugin.__name__
    elif callable(getattr(plugin, "apply", None)):
        apply = plugin.apply
        name = str(
            getattr(plugin, "name", None) or getattr(plugin, "__name__", type(plugin).__name__)
        )
    else:
        raise TypeError(
            f"a plugin is a function, a module or object with apply(), or a Service subclass; "
            f"got {plugin!r}"
        )
    inject = getattr(plugin, "inject", ())
    if isinstance(inject, str) or not all(isinstance(n, str) for n in inject):
        raise TypeError(f"plugin {name} must declare inject as a list of service names")
    return str(name), _with_config(apply), inject


def _with_config(apply: Callable[..., object]) -> Callable[[Context, Any], object]:
    """Let `apply(ctx)` and `apply(ctx, config)` both be plugins."""
    try:
        parameters = inspect.signature(apply).parameters.values()
    except (TypeError, ValueError):
        return apply
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    takes_varargs = any(p.kind is p.VAR_POSITIONAL for p in parameters)
    if len(positional) >= 2 or takes_varargs:
        return apply
    return lambda ctx, config: apply(ctx)


class Context:
    """The handle a plugin works through; `Context()` makes a new, empty app."""

    __slots__ = ("_app", "_fiber", "_views")

    _views: dict[str, Service]

    def __init__(self) -> None:
        app = _App()
        root = Fiber(app, None, "root", None, None, ())
        root.active = True
        self._app, self._fiber, self._views = app, root, {}
        root.ctx = self

    @classmethod
    def _bound(cls, app: _App, fiber: Fiber) -> Context:
        ctx = object.__new__(cls)
        ctx._app, ctx._fiber, ctx._views = app, fiber, {}
        return ctx

    def __repr__(self) -> str:
        return f"<Context of {self._fiber!r}>"

    @property
    def fiber(self) -> Fiber:
        """The fiber that owns what is registered through this context."""
        return self._fiber

    def plugin(self, plugin: Plugin, config: Any = None) -> Fiber:
        """Apply `plugin` now in a new child fiber (later, if its injected services are missing).

        Raises what the plugin's `apply` raises, after undoing what it had registered.
        """
        name, apply, inject = _plugin_parts(plugin)
        fiber = Fiber(self._app, self._fiber, name, apply, config, inject)
        fiber._unlink = self._fiber.own(fiber.dispose)
        if fiber.disposed:  # applied through the context of a plugin that is not running
            return fiber
        if fiber.inject:
            self._app.gated.append(fiber)
        if all(name in self._app.services for name in fiber.inject):
            try:
                fiber._activate()
            except BaseException:
                fiber.dispose()
                raise
        return fiber

    def effect(self, setup: Callable[[], Disposer | None]) -> Disposer:
        """Run `setup()` now; the disposer it returns runs when this context's fiber goes."""
        undo = setup()
        return self._fiber.own(undo or nothing)

    def on(self, event: str, listener: Callable[..., object]) -> Disposer:
        """Listen to `event` on the whole app while this context's fiber lives."""
        listeners = self._app.listeners.get(event)
        if listeners is None:
            listeners = self._app.listeners[event] = Listeners(
                logger, f"a listener of {event} raised"
            )
        stop = listeners.add(_synchronous(event, listener))

        def remove() -> None:
            stop()
            if not listeners and self._app.listeners.get(event) is listeners:
                del self._app.listeners[event]

        return self._fiber.own(remove)

    def emit(self, event: str, *args: object) -> None:
        """Call every listener of `event` now, in registration order.

        A listener that raises is logged and does not stop the others, nor the emitter: an
        audit log or a notifier must never break the operation it observes.
        """
        listeners = self._app.listeners.get(event)
        if listeners:
            listeners.tell(*args)

    def provide(self, name: str, service: object) -> Disposer:
        """Make `service` the app's `name` while this context's fiber lives."""
        services = self._app.services
        if name in services and services[name] is not service:
            raise HarnessError(
                f"a service named {name} is already provided", ErrorCode.DUPLICATE_SERVICE
            )
        services[name] = service
        self._app.refresh_gated()

        def withdraw() -> None:
            if services.get(name) is service:
                del services[name]
                self._app.refresh_gated()

        return self._fiber.own(withdraw)

    def get(self, name: str) -> Any:
        """The service `name` as seen from this context, or `None` when it is not provided."""
        service = self._app.services.get(name)
        if not isinstance(service, Service):
            return service
        cached = self._views.get(name)
        if cached is None or cached.__dict__ is not service.__dict__:
            cached = self._views[name] = service._view_for(self)
        return cached

    def __getattr__(self, name: str) -> Any:
        service = None if name.startswith("_") else self.get(name)
        if service is None:
            raise AttributeError(f"no service named {name!r} is provided in this context")
        return service


def _synchronous(event: str, listener: Callable[..., object]) -> Callable[..., None]:
    """`listener`, refusing to run as a coroutine: an `async def` listener is logged, its
    coroutine closed unrun (nothing would ever await it)."""

    def told(*args: object) -> None:
        result = listener(*args)
        if inspect.iscoroutine(result):
            result.close()
            logger.error("a listener of %s is async; listeners must be synchronous", event)

    return told
