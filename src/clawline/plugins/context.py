"""What a lifecycle hook is told besides its event: :class:`HookContext`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawline.runtime import Runtime

__all__ = ["HookContext"]

_NO_CONFIG: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class HookContext:
    """The context of one lifecycle hook call, made for each plugin.

    ``services`` gives the plugin the gateway's store, catalog, runs and event bus: blocking
    store work goes through ``await ctx.services.call(fn, ...)`` (e.g. the extension API of
    :mod:`clawline.plugins.extensions`). ``plugin_id`` is the name the plugin was loaded
    under, ``config`` its table ``[plugins.entries.<plugin_id>.config]`` (empty when none).
    ``session_key``, ``run_id`` and ``agent_id`` are set when the event concerns one
    session or run.
    """

    services: Runtime
    plugin_id: str = ""
    session_key: str | None = None
    run_id: str | None = None
    agent_id: str | None = None
    config: Mapping[str, Any] = field(default_factory=lambda: _NO_CONFIG)
