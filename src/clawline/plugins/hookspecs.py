"""Every hook a clawline plugin can implement, in one place (pluggy project ``clawline``).

A plugin is a module or object with functions marked ``@hookimpl`` (``from clawline.plugins
import hookimpl``), installed through the entry-point group ``clawline`` or listed in config.
clawline's own built-ins (gateway methods, tools, channels, providers) register through the same
registration hooks.

Two kinds of hooks:

- **registration** hooks run once, at start-up, and add things to a registry;
- **lifecycle** hooks are told what happened. They receive ``event`` (a JSON object in
  OpenClaw's camelCase shape, documented per hook) and ``ctx`` (:class:`HookContext`). A
  lifecycle hook may be a plain function or a coroutine function; its return value is ignored
  except where noted. A hook that raises is logged and isolated: the other plugins still run and
  the gateway carries on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from clawline.agents.providers.registry import ProviderRegistry
    from clawline.agents.tools.registry import ToolRegistry
    from clawline.channels.registry import ChannelRegistry
    from clawline.gateway.registry import MethodRegistry
    from clawline.plugins.context import HookContext
    from clawline.runtime import Runtime

PROJECT = "clawline"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

# --- registration ----------------------------------------------------------------------------


@hookspec
def register_gateway_methods(methods: MethodRegistry) -> None:
    """Add gateway methods: ``methods.add(name, handler, scope=…, schema=…)`` or the
    ``@methods.method(...)`` decorator. A name already taken is refused (logged)."""


@hookspec
def register_tools(tools: ToolRegistry) -> None:
    """Add agent tools: ``tools.register(tool)``."""


@hookspec
def register_channels(channels: ChannelRegistry) -> None:
    """Add channel adapters: ``channels.register(adapter)``."""


@hookspec
def register_providers(providers: ProviderRegistry) -> None:
    """Add model providers: ``providers.register(name, provider)`` serves ``name/<model>``."""


@hookspec
def startup(services: Runtime) -> Any:
    """The gateway's services are open (store, catalog, runs); runs before it serves. May be a
    coroutine."""


@hookspec
def shutdown(services: Runtime) -> Any:
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
