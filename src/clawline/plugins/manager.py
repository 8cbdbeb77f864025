"""The plugin manager (``runtime.plugins``): loads plugins and calls their hooks in isolation.

- **Registration** hooks (``register_gateway_methods``, ``register_tools``,
  ``register_channels``, ``register_providers``) are called once per registry, by the runtime
  (or the gateway) once the parts the built-ins need exist. The built-ins — plugin objects the
  runtime builds with their parts and adds with source ``builtin`` — register first (their
  hooks are ``tryfirst``), so a plugin cannot take a built-in's name: the registry refuses it
  and that is logged.
- **Lifecycle** hooks are called one plugin at a time, in pluggy's order. A hook that raises,
  sync or async, is logged with the plugin's name and skipped: the caller and the other
  plugins carry on (a typed clawline error is one line at INFO or WARNING, any other exception
  is ERROR with its traceback: :mod:`clawline.failure_log`). A coroutine is awaited for at most
  ``hook_timeout_seconds`` (then cancelled and logged), so a slow plugin cannot stall a run.
  Each plugin gets its own copy of the event and its own :class:`HookContext`.

Lifecycle hooks need the :class:`~clawline.plugins.host.PluginHost` the runtime binds
(:meth:`PluginManager.bind`): ``startup``/``shutdown`` receive it and every context carries it.
Hooks are called on the event loop; a plugin does blocking store work through
``await ctx.host.run(...)``.
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

from clawline.config import PluginsConfig, Settings
from clawline.failure_log import log_failure
from clawline.plugins import hookspecs
from clawline.plugins.context import HookContext
from clawline.plugins.loading import (
    BUILTIN_PLUGINS,
    EntryPoints,
    LoadFailure,
    builtin_class,
    discover,
)

if TYPE_CHECKING:
    from clawline.plugins.host import PluginHost
    from clawline.plugins.registrars import (
        ChannelRegistrar,
        MethodRegistrar,
        ProviderRegistrar,
        ToolRegistrar,
    )

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
    def __init__(self, settings: PluginsConfig | None = None) -> None:
        self.settings = settings or PluginsConfig()
        self._pm = pluggy.PluginManager(hookspecs.PROJECT)
        self._pm.add_hookspecs(hookspecs)
        self._sources: dict[str, tuple[str, str]] = {}
        self.failures: list[LoadFailure] = []
        """Plugins that could not be loaded or registered."""
        self._host: PluginHost | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings, *, entry_points: EntryPoints | None = None
    ) -> PluginManager:
        """The entry points and the plugins of ``[plugins]``, loaded (the runtime adds the
        built-ins)."""
        plugin_settings = settings.config.plugins
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

    @staticmethod
    def builtin_plugins() -> list[PluginInfo]:
        """The built-in plugin objects the runtime and a gateway add, described from their
        classes without building one (``clawline plugins``)."""
        marker = f"{hookspecs.PROJECT}_impl"
        infos: list[PluginInfo] = []
        for builtin in BUILTIN_PLUGINS:
            cls = builtin_class(builtin)
            hooks = [name for name in dir(cls) if hasattr(getattr(cls, name, None), marker)]
            infos.append(PluginInfo(builtin.name, "builtin", builtin.origin, tuple(sorted(hooks))))
        return infos

    def _hooks_of(self, name: str) -> list[str]:
        plugin = self._pm.get_plugin(name)
        callers = self._pm.get_hookcallers(plugin) or []
        return sorted(caller.name for caller in callers)

    def get(self, name: str) -> object | None:
        """The plugin object registered under ``name``, if any."""
        plugin: object | None = self._pm.get_plugin(name)
        return plugin

    def plugins(self) -> list[PluginInfo]:
        """The loaded plugins: the built-ins first, in the order of :data:`BUILTIN_PLUGINS`
        (the gateway's methods are added when a gateway is built, yet listed first), then the
        others in load order."""
        loaded = [
            PluginInfo(name, source, origin, tuple(self._hooks_of(name)))
            for name, (source, origin) in self._sources.items()
        ]
        rank = {builtin.name: n for n, builtin in enumerate(BUILTIN_PLUGINS)}
        return sorted(
            loaded,
            key=lambda info: (info.source != "builtin", rank.get(info.name, len(rank))),
        )

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

    def register_gateway_methods(self, methods: MethodRegistrar) -> None:
        self._register("register_gateway_methods", methods=methods)

    def register_tools(self, tools: ToolRegistrar) -> None:
        self._register("register_tools", tools=tools)

    def register_channels(self, channels: ChannelRegistrar) -> None:
        self._register("register_channels", channels=channels)

    def register_providers(self, providers: ProviderRegistrar) -> None:
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

    def bind(self, host: PluginHost) -> None:
        """Give the plugins ``host``, what they may use of the gateway (the runtime does, once
        its parts exist); lifecycle hooks are called with it."""
        self._host = host

    @property
    def host(self) -> PluginHost:
        """The bound host (:meth:`bind`); ``RuntimeError`` before."""
        if self._host is None:
            raise RuntimeError("the plugin manager is not bound to a plugin host")
        return self._host

    async def startup(self) -> None:
        """Call every ``startup(host)`` hook."""
        await self._call("startup", {"host": self.host})

    async def shutdown(self) -> None:
        """Call every ``shutdown(host)`` hook."""
        await self._call("shutdown", {"host": self.host})

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
        return HookContext(self.host, **fields)

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
