"""Plugins the API tests load through config (``tests.plugins.sample_plugins:<name>``).

Module-level instances, so a test resets the one it inspects (:meth:`Recorder.reset`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from clawline.agents.providers.registry import ProviderRegistry
from clawline.agents.tools.registry import ToolRegistry
from clawline.channels.registry import ChannelRegistry
from clawline.gateway.registry import MethodRegistry
from clawline.plugins import HookContext, PluginHost, hookimpl

LIFECYCLE_HOOKS = (
    "startup",
    "shutdown",
    "session_start",
    "session_end",
    "agent_end",
    "subagent_spawning",
    "subagent_spawned",
    "subagent_ended",
)
REGISTRATION_HOOKS = (
    "register_gateway_methods",
    "register_tools",
    "register_channels",
    "register_providers",
)
ALL_HOOKS = REGISTRATION_HOOKS + LIFECYCLE_HOOKS


class PluginBroke(RuntimeError):
    pass


class RaisingSync:
    """Raises in every hook, from plain functions."""

    PLUGIN_ID = "raising-sync"

    def _fail(self, hook: str) -> None:
        raise PluginBroke(f"{self.PLUGIN_ID} broke in {hook}")

    @hookimpl
    def register_gateway_methods(self, methods: MethodRegistry) -> None:
        self._fail("register_gateway_methods")

    @hookimpl
    def register_tools(self, tools: ToolRegistry) -> None:
        self._fail("register_tools")

    @hookimpl
    def register_channels(self, channels: ChannelRegistry) -> None:
        self._fail("register_channels")

    @hookimpl
    def register_providers(self, providers: ProviderRegistry) -> None:
        self._fail("register_providers")

    @hookimpl
    def startup(self, host: PluginHost) -> None:
        self._fail("startup")

    @hookimpl
    def shutdown(self, host: PluginHost) -> None:
        self._fail("shutdown")

    @hookimpl
    def session_start(self, event: dict[str, Any], ctx: HookContext) -> None:
        self._fail("session_start")

    @hookimpl
    def session_end(self, event: dict[str, Any], ctx: HookContext) -> None:
        self._fail("session_end")

    @hookimpl
    def agent_end(self, event: dict[str, Any], ctx: HookContext) -> None:
        self._fail("agent_end")

    @hookimpl
    def subagent_spawning(self, event: dict[str, Any], ctx: HookContext) -> None:
        self._fail("subagent_spawning")

    @hookimpl
    def subagent_spawned(self, event: dict[str, Any], ctx: HookContext) -> None:
        self._fail("subagent_spawned")

    @hookimpl
    def subagent_ended(self, event: dict[str, Any], ctx: HookContext) -> None:
        self._fail("subagent_ended")


class RaisingAsync:
    """Raises in every hook, from coroutine functions (registration hooks may not be
    coroutines at all: refused)."""

    PLUGIN_ID = "raising-async"

    async def _fail(self, hook: str) -> None:
        await asyncio.sleep(0)
        raise PluginBroke(f"{self.PLUGIN_ID} broke in {hook}")

    @hookimpl
    async def register_gateway_methods(self, methods: MethodRegistry) -> None:
        await self._fail("register_gateway_methods")

    @hookimpl
    async def register_tools(self, tools: ToolRegistry) -> None:
        await self._fail("register_tools")

    @hookimpl
    async def register_channels(self, channels: ChannelRegistry) -> None:
        await self._fail("register_channels")

    @hookimpl
    async def register_providers(self, providers: ProviderRegistry) -> None:
        await self._fail("register_providers")

    @hookimpl
    async def startup(self, host: PluginHost) -> None:
        await self._fail("startup")

    @hookimpl
    async def shutdown(self, host: PluginHost) -> None:
        await self._fail("shutdown")

    @hookimpl
    async def session_start(self, event: dict[str, Any], ctx: HookContext) -> None:
        await self._fail("session_start")

    @hookimpl
    async def session_end(self, event: dict[str, Any], ctx: HookContext) -> None:
        await self._fail("session_end")

    @hookimpl
    async def agent_end(self, event: dict[str, Any], ctx: HookContext) -> None:
        await self._fail("agent_end")

    @hookimpl
    async def subagent_spawning(self, event: dict[str, Any], ctx: HookContext) -> None:
        await self._fail("subagent_spawning")

    @hookimpl
    async def subagent_spawned(self, event: dict[str, Any], ctx: HookContext) -> None:
        await self._fail("subagent_spawned")

    @hookimpl
    async def subagent_ended(self, event: dict[str, Any], ctx: HookContext) -> None:
        await self._fail("subagent_ended")


class Slow:
    """Every lifecycle hook takes far longer than the configured timeout."""

    PLUGIN_ID = "slow"

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    async def _linger(self, hook: str) -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.append(hook)
            raise

    @hookimpl
    async def session_start(self, event: dict[str, Any], ctx: HookContext) -> None:
        await self._linger("session_start")

    @hookimpl
    async def agent_end(self, event: dict[str, Any], ctx: HookContext) -> None:
        await self._linger("agent_end")


class Recorder:
    """Records every lifecycle hook call: ``(hook, event, ctx)``."""

    PLUGIN_ID = "recorder"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], HookContext]] = []

    def reset(self) -> None:
        self.calls.clear()

    def of(self, hook: str) -> list[tuple[dict[str, Any], HookContext]]:
        return [(event, ctx) for name, event, ctx in self.calls if name == hook]

    @hookimpl
    def startup(self, host: PluginHost) -> None:
        self.calls.append(("startup", {}, HookContext(host)))

    @hookimpl
    async def session_start(self, event: dict[str, Any], ctx: HookContext) -> None:
        self.calls.append(("session_start", event, ctx))

    @hookimpl
    def session_end(self, event: dict[str, Any], ctx: HookContext) -> None:
        self.calls.append(("session_end", event, ctx))

    @hookimpl
    async def agent_end(self, event: dict[str, Any], ctx: HookContext) -> None:
        self.calls.append(("agent_end", event, ctx))

    @hookimpl
    def subagent_spawning(self, event: dict[str, Any], ctx: HookContext) -> None:
        self.calls.append(("subagent_spawning", event, ctx))

    @hookimpl
    def subagent_spawned(self, event: dict[str, Any], ctx: HookContext) -> None:
        self.calls.append(("subagent_spawned", event, ctx))

    @hookimpl
    async def subagent_ended(self, event: dict[str, Any], ctx: HookContext) -> None:
        self.calls.append(("subagent_ended", event, ctx))


class Refuser:
    """Refuses every spawn whose task mentions "forbidden"."""

    PLUGIN_ID = "refuser"

    @hookimpl
    async def subagent_spawning(self, event: dict[str, Any], ctx: HookContext) -> object:
        if "forbidden" in event["task"]:
            return {"status": "error", "error": f"no spawning from {ctx.session_key}"}
        return {"status": "ok"}


raising_sync = RaisingSync()
raising_async = RaisingAsync()
slow = Slow()
recorder = Recorder()
refuser = Refuser()
