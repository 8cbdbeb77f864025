"""The collaboration layer's built-in plugin: :class:`CollabPlugin`, registered by the runtime
through the same hook as any plugin's tools.

Its ``register_tools`` hook adds the session tools of :class:`~clawline.collab.tools.CollabTools`
(built with their parts by the runtime): ``sessions_send``, ``sessions_list``,
``sessions_history``, ``sessions_yield``, ``sessions_spawn``, ``subagents`` and ``agents_list``.
The hook is ``tryfirst``, so the built-ins register before any other plugin and keep their
names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawline.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from clawline.agents.tools.registry import ToolRegistry
    from clawline.collab.tools import CollabTools

COLLAB_PLUGIN = "clawline.collab"
"""The plugin name :class:`CollabPlugin` is registered under."""


class CollabPlugin:
    """Registers ``tools``, the built-in session tools."""

    def __init__(self, *, tools: CollabTools) -> None:
        self._tools = tools

    @hookimpl(tryfirst=True)
    def register_tools(self, tools: ToolRegistry) -> None:
        for tool in self._tools.in_order():
            tools.register(tool)
