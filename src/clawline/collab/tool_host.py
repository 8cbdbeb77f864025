"""The gateway's :class:`~clawline.agents.tools.base.ToolHost`: what a plugin's tool may ask of
the gateway, answered by the built-in session tools.

Each operation is the built-in tool of that name invoked with the calling tool's context and
arguments — the same checks (visibility, agent-to-agent policy, spawn limits, …), the same
results and refusals a model gets from the tool:

- :meth:`CollabToolHost.spawn` — ``sessions_spawn``;
- :meth:`CollabToolHost.send` — ``sessions_send``;
- :meth:`CollabToolHost.list_sessions` — ``sessions_list``;
- :meth:`CollabToolHost.history` — ``sessions_history``.

The caller is the context's session (``ctx.session_key``, its run, its workspace): a plugin tool
acts for the session whose turn called it, never for another one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from clawline.agents.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from clawline.collab.send import SessionsSendTool
    from clawline.collab.session_tools import SessionsHistoryTool, SessionsListTool
    from clawline.collab.spawn import SessionsSpawnTool
    from clawline.types import JSON


class CollabToolHost:
    """A :class:`~clawline.agents.tools.base.ToolHost` over the built-in session tools."""

    def __init__(
        self,
        *,
        spawn: SessionsSpawnTool,
        send: SessionsSendTool,
        list_sessions: SessionsListTool,
        history: SessionsHistoryTool,
    ) -> None:
        self._spawn = spawn
        self._send = send
        self._list_sessions = list_sessions
        self._history = history

    async def spawn(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        return await self._spawn.invoke(replace(ctx, record_result=None), args)

    async def send(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        return await self._send.invoke(replace(ctx, record_result=None), args)

    async def list_sessions(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        return await self._list_sessions.invoke(replace(ctx, record_result=None), args)

    async def history(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        return await self._history.invoke(replace(ctx, record_result=None), args)
