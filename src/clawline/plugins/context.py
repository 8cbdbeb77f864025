"""What a lifecycle hook is told besides its event: :class:`HookContext`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawline.plugins.host import PluginHost

_NO_CONFIG: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class HookContext:
    """The context of one lifecycle hook call, made for each plugin.

    ``host`` is what the plugin may use of the gateway (:class:`~clawline.plugins.host.
    PluginHost`): sessions, its session extensions, the task registry, the agents'
    workspaces, the clock, and ``await ctx.host.run(fn, ...)`` for blocking store work.
    ``plugin_id`` is the name the plugin was loaded under, ``config`` its table
    ``[plugins.entries.<plugin_id>.config]`` (empty when none). ``session_key``, ``run_id``
    and ``agent_id`` are set when the event concerns one session or run.
    """

    host: PluginHost
    plugin_id: str = ""
    session_key: str | None = None
    run_id: str | None = None
    agent_id: str | None = None
    config: Mapping[str, Any] = field(default_factory=lambda: _NO_CONFIG)
