"""Every hook a clawline plugin can implement, in one place (pluggy project ``clawline``).

A plugin is a module or object with functions marked ``@hookimpl`` (``from clawline.plugins
import hookimpl``), installed through the entry-point group ``clawline`` or listed in config.
clawline's own built-ins (gateway methods, tools, channels, providers) are plugin objects the
runtime builds with their parts, and register through the same registration hooks.

This module names nothing above the plugin API (no adapter, no domain part, not the runtime):
what the hooks receive is described by the plugin API's Protocols —
:class:`~clawline.plugins.registrars.MethodRegistrar`,
:class:`~clawline.plugins.registrars.ToolRegistrar`,
:class:`~clawline.plugins.registrars.ChannelRegistrar`,
:class:`~clawline.plugins.registrars.ProviderRegistrar` — and
:class:`~clawline.plugins.host.PluginHost`, what a plugin may use of the gateway.

Two kinds of hooks:

- **registration** hooks run once, at start-up, and add things to a registry;
- **lifecycle** hooks are told what happened. They receive ``event`` (a JSON object in
  OpenClaw's camelCase shape, documented per hook) and ``ctx`` (:class:`HookContext`, whose
  ``host`` is the :class:`~clawline.plugins.host.PluginHost`); ``startup`` and ``shutdown``
  receive the host itself. A lifecycle hook may be a plain function or a coroutine function;
  its return value is ignored except where noted. A hook that raises is logged and isolated:
  the other plugins still run and the gateway carries on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from clawline.plugins.context import HookContext
    from clawline.plugins.host import PluginHost
    from clawline.plugins.registrars import (
        ChannelRegistrar,
        MethodRegistrar,
        ProviderRegistrar,
        ToolRegistrar,
    )

__all__ = [
    "PROJECT",
    "agent_end",
    "hookimpl",
    "hookspec",
    "register_channels",
    "register_gateway_methods",
    "register_providers",
    "register_tools",
    "session_end",
    "session_start",
    "shutdown",
    "startup",
    "subagent_ended",
    "subagent_spawned",
    "subagent_spawning",
]

PROJECT = "clawline"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

# --- registration ----------------------------------------------------------------------------


@hookspec
def register_gateway_methods(methods: MethodRegistrar) -> None:
    """Add gateway methods: ``methods.add(name, handler, scope=…, schema=…)`` or the
    ``@methods.method(...)`` decorator. A name already taken is refused (logged)."""


@hookspec
def register_tools(tools: ToolRegistrar) -> None:
    """Add agent tools: ``tools.register(tool)``."""


@hookspec
def register_channels(channels: ChannelRegistrar) -> None:
    """Add channel adapters: ``channels.register(adapter)``."""


@hookspec
def register_providers(providers: ProviderRegistrar) -> None:
    """Add model providers: ``providers.register(name, provider)`` serves ``name/<model>``."""


@hookspec
def startup(host: PluginHost) -> Any:
    """The gateway's parts are open (store, catalog, runs); runs before it serves. ``host`` is
    what the plugin may use of the gateway: a plugin that needs it outside a hook call (its
    tools, its gateway methods) keeps it here, and parses its configuration here, once. May be
    a coroutine."""


@hookspec
def shutdown(host: PluginHost) -> Any:
    """The gateway is stopping (after its runs ended). May be a coroutine."""


# --- lifecycle -------------------------------------------------------------------------------


@hookspec
def session_start(event: dict[str, Any], ctx: HookContext) -> Any:
    """A session got its first run, or its first run after a reset.
    ``event = {sessionKey, sessionId, runId, resumedFrom?}``. Awaited (within the hook
    timeout) before the run's model is called."""


@hookspec
def session_end(event: dict[str, Any], ctx: HookContext) -> Any:
    """A session was deleted or reset (``sessions.delete`` unless ``emitLifecycleHooks:
    false``, ``sessions.reset``). ``event = {sessionKey, sessionId (the ended incarnation),
    reason: "deleted"|"reset"}``."""


@hookspec
def agent_end(event: dict[str, Any], ctx: HookContext) -> Any:
    """A run ended. ``event = {sessionKey, sessionId, runId, success: bool, status: done|failed|
    killed|timeout, error?, output (the reply text), messages: [transcript messages of the run],
    durationMs}``. Runs as a task after the run's end is written (it delays nothing)."""


@hookspec
def subagent_spawning(event: dict[str, Any], ctx: HookContext) -> Any:
    """``sessions_spawn`` is about to create a child. ``event = {requesterSessionKey,
    childSessionKey, agentId, label?, mode, runtime, task}``. Return
    ``{"status": "error", "error": "<text>"}`` to refuse the spawn (the first refusal wins)."""


@hookspec
def subagent_spawned(event: dict[str, Any], ctx: HookContext) -> Any:
    """A child was created and its run started. ``event = {requesterSessionKey,
    childSessionKey, runId, agentId, label?, mode, runtime}``."""


@hookspec
def subagent_ended(event: dict[str, Any], ctx: HookContext) -> Any:
    """A child's run record ended. ``event = {requesterSessionKey, childSessionKey, runId,
    outcome: ok|error|timeout|killed|reset|deleted, error?, targetKind: subagent|acp}``."""
