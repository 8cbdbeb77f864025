"""The plugin manager (``services.plugins``): loads plugins and calls their hooks in isolation.

- **Registration** hooks (``register_gateway_methods``, ``register_tools``,
  ``register_channels``, ``register_providers``) are called once per registry, when the
  registry is made at start-up. The built-ins register first (their hooks are ``tryfirst``),
  so a plugin cannot take a built-in's name: the registry refuses it and that is logged.
- **Lifecycle** hooks are called one plugin at a time, in pluggy's order. A hook that raises,
  sync or async, is logged with the plugin's name and skipped: the caller and the other
  plugins carry on (a typed clawline error is one line at INFO or WARNING, any other exception
  is ERROR with its traceback: :mod:`clawline.failure_log`). A coroutine is awaited for at most
  ``hook_timeout_seconds`` (then cancelled and logged), so a slow plugin cannot stall a run.
  Each plugin gets its own copy of the event and its own :class:`HookContext`.

Hooks are called on the event loop; a plugin does blocking store work through
``await ctx.services.call(...)``.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pluggy

from clawline.config import Settings
from clawline.failure_log import log_failure
from clawline.plugins import hookspecs
from clawline.plugins.context import HookContext
from clawline.plugins.loading import (
    EntryPoints,
    LoadFailure,
    PluginSettings,
    discover,
)

if TYPE_CHECKING:
    from clawline.agents.providers.registry import ProviderRegistry
    from clawline.agents.tools.registry import ToolRegistry
    from clawline.channels.registry import ChannelRegistry
    from clawline.gateway.registry import MethodRegistry
    from clawline.runtime import Runtime

__all__ = ["PluginInfo", "PluginManager"]

log = logging.getLogger("clawline.plugins")

REFUSED_BY_PLUGIN = "subagent spawn refused by plugin {name}"
"""The refusal text when a ``subagent_spawning`` refusal carries no ``error`` text."""


@dataclass(frozen=True, slots=True)
class PluginInfo:
    name: str
    source: str
    """``builtin``, ``entry point``, ``config`` or ``api`` (:meth:`PluginManager.add`)."""
    origin: str
    hooks: tuple[str, ...]


class PluginManager:
    def __init__(self, settings: PluginSettings | None = None) -> None:
        self.settings = settings or PluginSettings()
        self._pm = pluggy.PluginManager(hookspecs.PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self._sources: dict[str, tuple[str, str]] = {}
        self.failures: list[LoadFailure] = []
        """Plugins that could not be loaded or registered."""
        self.services: Runtime | None = None
        """Bound by :attr:`Runtime.plugins`; lifecycle hooks get it in their context."""

    @classmethod
    def from_settings(
        cls, settings: Settings, *, entry_points: EntryPoints | None = None
    ) -> PluginManager:
        """The built-ins, the entry points and the plugins of ``[plugins]``, loaded."""
        plugin_settings = PluginSettings.from_raw(settings.raw)
        manager = cls(plugin_settings)
        found, failures = (
            discover(plugin_settings)
            if entry_points is None
            else discover(plugin_settings, entry_points=entry_points)
        )
        manager.failures.extend(failures)
        for candidate in found:
            manager.add(
                candidate.plugin, candidate.name, source=candidate.source, origin=candidate.origin
            )
        return manager

    # --- plugins ---------------------------------------------------------------------------

    def add(self, plugin: object, name: str, *, source: str = "api", origin: str = "") -> bool:
        """Register ``plugin`` under ``name``; a failure (a name taken, a hook that matches
        no spec or takes unknown arguments) is logged and recorded, never raised."""
        try:
            if self._pm.has_plugin(name):
                raise ValueError(f"a plugin named {name!r} is already loaded")
            self._pm.register(plugin, name=name)
            unknown = [
                hook for hook in self._hooks_of(name) if getattr(self._pm.hook, hook).spec is None
            ]
            if unknown:
                self._pm.unregister(name=name)
                raise ValueError(f"unknown hooks: {', '.join(unknown)}")
        except Exception as error:
            log.error("plugin %s (%s) was not registered: %s", name, source, error)
            self.failures.append(LoadFailure(name, source, f"{type(error).__name__}: {error}"))
            return False
        self._sources[name] = (source, origin or getattr(plugin, "__name__", repr(plugin)))
        return True

    def _hooks_of(self, name: str) -> list[str]:
        plugin = self._pm.get_plugin(name)
        callers = self._pm.get_hookcallers(plugin) or []
        return sorted(caller.name for caller in callers)

    def plugins(self) -> list[PluginInfo]:
        """The loaded plugins in load order."""
        return [
            PluginInfo(name, source, origin, tuple(self._hooks_of(name)))
            for name, (source, origin) in self._sources.items()
        ]

    def plugin_config(self, plugin_id: str) -> Mapping[str, Any]:
        return self.settings.configs.get(plugin_id, {})

    def implements(self, hook: str) -> bool:
        """Whether any loaded plugin implements ``hook`` (callers skip building its event)."""
        return bool(self._impls(hook))

    def _impls(self, hook: str) -> list[pluggy.HookImpl]:
        """The hook's implementations in calling order (tryfirst first, then newest first)."""
        caller: pluggy.HookCaller = getattr(self._pm.hook, hook)
        impls = reversed(caller.get_hookimpls())
        return [impl for impl in impls if not (impl.hookwrapper or impl.wrapper)]

    # --- registration ----------------------------------------------------------------------

    def register_gateway_methods(self, methods: MethodRegistry) -> None:
        self._register("register_gateway_methods", methods=methods)

    def register_tools(self, tools: ToolRegistry) -> None:
        self._register("register_tools", tools=tools)

    def register_channels(self, channels: ChannelRegistry) -> None:
        self._register("register_channels", channels=channels)

    def register_providers(self, providers: ProviderRegistry) -> None:
        self._register("register_providers", providers=providers)

    def _register(self, hook: str, **kwargs: object) -> None:
        for impl in self._impls(hook):
            try:
                result = impl.function(*(kwargs[name] for name in impl.argnames))
                if inspect.isawaitable(result):
                    _discard(result)
                    raise TypeError("a registration hook must not be a coroutine")
            except Exception:
                log.exception("plugin %s: %s failed", impl.plugin_name, hook)

    # --- lifecycle -------------------------------------------------------------------------

    async def startup(self, services: Runtime) -> None:
        await self._call("startup", {"services": services})

    async def shutdown(self, services: Runtime) -> None:
        await self._call("shutdown", {"services": services})

    async def session_start(self, event: Mapping[str, Any], ctx: HookContext) -> None:
        await self._notify("session_start", event, ctx)

    async def session_end(self, event: Mapping[str, Any], ctx: HookContext) -> None:
        await self._notify("session_end", event, ctx)

    async def agent_end(self, event: Mapping[str, Any], ctx: HookContext) -> None:
        await self._notify("agent_end", event, ctx)

    async def subagent_spawning(self, event: Mapping[str, Any], ctx: HookContext) -> str | None:
        """The first refusal's text (``{"status":"error","error":…}``), or ``None``."""
        refusal: str | None = None

        def refuses(name: str, result: object) -> bool:
            nonlocal refusal
            if not isinstance(result, Mapping) or result.get("status") != "error":
                return False
            text = result.get("error")
            refusal = text if isinstance(text, str) and text.strip() else None
            refusal = refusal or REFUSED_BY_PLUGIN.format(name=name)
            return True

        await self._notify("subagent_spawning", event, ctx, stop_when=refuses)
        return refusal

    async def subagent_spawned(self, event: Mapping[str, Any], ctx: HookContext) -> None:
        await self._notify("subagent_spawned", event, ctx)

    async def subagent_ended(self, event: Mapping[str, Any], ctx: HookContext) -> None:
        await self._notify("subagent_ended", event, ctx)

    def context(self, **fields: Any) -> HookContext:
        """A context for a hook call (its ``plugin_id`` and ``config`` are set per plugin)."""
        if self.services is None:
            raise RuntimeError("the plugin manager is not bound to services")
        return HookContext(self.services, **fields)

    async def _notify(
        self,
        hook: str,
        event: Mapping[str, Any],
        ctx: HookContext,
        *,
        stop_when: Callable[[str, object], bool] | None = None,
    ) -> None:
        for impl in self._impls(hook):
            name = impl.plugin_name
            own = replace(ctx, plugin_id=name, config=self.plugin_config(name))
            values = {"event": copy.deepcopy(dict(event)), "ctx": own}
            done, result = await self._run(impl, hook, values)
            if done and stop_when is not None and stop_when(name, result):
                return

    async def _call(self, hook: str, values: dict[str, object]) -> None:
        for impl in self._impls(hook):
            await self._run(impl, hook, values)

    async def _run(
        self, impl: pluggy.HookImpl, hook: str, values: Mapping[str, object]
    ) -> tuple[bool, object]:
        """Call one implementation; ``(True, result)``, or ``(False, None)`` if it failed."""
        name = impl.plugin_name
        try:
            result = impl.function(*(values[arg] for arg in impl.argnames))
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(result, self.settings.hook_timeout_s)
        except TimeoutError:
            log.error(
                "plugin %s: %s hook timed out after %gs", name, hook, self.settings.hook_timeout_s
            )
            return False, None
        except Exception as error:
            # a typed refusal (bad input, missing session) is one line; a plugin's bug is ERROR
            log_failure(log, error, f"plugin {name}: {hook} hook failed")
            return False, None
        return True, result


def _discard(awaitable: object) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()
