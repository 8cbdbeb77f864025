"""The tools a turn may offer its model, and which of them a session gets.

OpenClaw's policy by depth, applied by :meth:`ToolRegistry.tools_for`:

1. main sessions (depth 0) get every registered tool;
2. subagent sessions (depth >= 1) never get :data:`SUBAGENT_DENY_ALWAYS`; leaves also lose
   :data:`SUBAGENT_DENY_LEAF`, so with ``maxSpawnDepth >= 2`` a depth-1 orchestrator keeps
   ``sessions_spawn``, ``subagents``, ``sessions_list`` and ``sessions_history``;
3. ``tools.subagents.tools`` then applies to subagents: a name in its ``allow`` is taken off
   the default deny lists, its ``deny`` is added, and a non-empty ``allow`` is an allow-list;
4. the agent's own ``tools.{allow,deny}`` applies to every session of the agent.

Deny wins at every step. Names may use ``*`` wildcards.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from clawline.agents.tools.base import Tool
from clawline.config import AgentConfig, matches_pattern

if TYPE_CHECKING:
    from clawline.records.session import SessionEntry

SUBAGENT_DENY_ALWAYS = frozenset(
    {"sessions_send", "agents_list", "session_status", "gateway", "cron"}
)
"""Session/system tools no subagent gets."""
SUBAGENT_DENY_LEAF = frozenset({"sessions_spawn", "subagents", "sessions_list", "sessions_history"})
"""Taken from leaf subagents too (orchestrators keep them)."""
SESSION_TOOLS = frozenset(
    {"sessions_spawn", "sessions_send", "sessions_list", "sessions_history", "subagents"}
)


def session_depth(entry: SessionEntry | None) -> int:
    if entry is None or entry.spawn_depth is None:
        return 0
    return entry.spawn_depth


def is_leaf(agent: AgentConfig, entry: SessionEntry | None) -> bool:
    """A subagent that may not spawn: its recorded role, else depth >= ``maxSpawnDepth``."""
    depth = session_depth(entry)
    if depth == 0:
        return False
    if entry is not None and entry.subagent_role in ("leaf", "orchestrator"):
        return entry.subagent_role == "leaf"
    return depth >= agent.subagents.max_spawn_depth


def tool_allowed(name: str, agent: AgentConfig, entry: SessionEntry | None) -> bool:
    """Whether a session of ``agent`` with ``entry`` may use tool ``name`` (module docstring)."""
    if not agent.tools.permits(name):
        return False
    if session_depth(entry) == 0:
        return True
    override = agent.subagent_tools
    base = SUBAGENT_DENY_ALWAYS | (SUBAGENT_DENY_LEAF if is_leaf(agent, entry) else frozenset())
    if name in base and not matches_pattern(name, override.allow):
        return False
    return override.permits(name)


class ToolRegistry:
    """Tools by name, registered once at start-up through the plugins' ``register_tools``
    hook (clawline's own tools through its built-in plugins)::

        tools.register(ShoutTool())
    """

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        """Add ``tool`` under ``tool.spec.name``; a second tool of that name is a
        ``ValueError`` unless ``replace``."""
        name = tool.spec.name
        if name in self._tools and not replace:
            raise ValueError(f"a tool named {name!r} is already registered")
        self._tools[name] = tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def tools_for(self, agent: AgentConfig, entry: SessionEntry | None) -> list[Tool]:
        """The tools a session may use, in registration order."""
        return [tool for name, tool in self._tools.items() if tool_allowed(name, agent, entry)]
