"""Collaboration between sessions: agent-to-agent messages and the session tools.

- :mod:`clawline.collab.policy`: ``tools.agentToAgent`` and ``tools.sessions.visibility``;
- :mod:`clawline.collab.send`: ``sessions_send`` (and :mod:`clawline.collab.a2a`, the
  ping-pong and announce step that follow it);
- :mod:`clawline.collab.session_tools`: ``sessions_list``, ``sessions_history``,
  ``sessions_yield``;
- :mod:`clawline.collab.spawn`: ``sessions_spawn``; :mod:`clawline.collab.subagents_tool`:
  ``subagents``; :mod:`clawline.collab.subagents` (run records), :mod:`clawline.collab.announce`
  (the durable completion inbox), :mod:`clawline.collab.recovery`, :mod:`clawline.collab.sweepers`.

:func:`collab_tools` and :func:`subagent_tools` return these tools for the tool registry.
"""

from __future__ import annotations

from clawline.agents.tools.base import Tool

__all__ = ["collab_tools", "subagent_tools"]


def collab_tools() -> list[Tool]:
    """``sessions_send``, ``sessions_list``, ``sessions_history`` and ``sessions_yield``."""
    from clawline.collab.send import SessionsSendTool
    from clawline.collab.session_tools import (
        SessionsHistoryTool,
        SessionsListTool,
        SessionsYieldTool,
    )

    return [SessionsSendTool(), SessionsListTool(), SessionsHistoryTool(), SessionsYieldTool()]


def subagent_tools() -> list[Tool]:
    """``sessions_spawn`` and ``subagents``."""
    from clawline.collab.spawn import SessionsSpawnTool
    from clawline.collab.subagents_tool import SubagentsTool

    return [SessionsSpawnTool(), SubagentsTool()]
