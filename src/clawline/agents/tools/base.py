"""Agent tools: what a model can call during a turn.

A tool is an object with a :class:`ToolSpec` (name, description, JSON-schema parameters) and
an async ``invoke(ctx, args)`` returning a :class:`ToolResult`. Refusals that the model should
read (OpenClaw's ``{status:"forbidden"|"error", error}`` results) are *results*, not
exceptions; an exception means the tool itself broke and is reported to the model as an error
result by the turn loop.

``ToolResult.details`` is the structured result (e.g. ``sessions_spawn``'s
``{status:"accepted", childSessionKey, runId, …}``): it is what the model sees (as JSON text),
what ``agent`` tool events carry as ``result``, and what UIs read as ``rawOutput.details``.

What a tool gets:

- :class:`ToolContext`: the call's identity — the requester's session key, agent id, run id,
  workspace, entry, agent configuration and lane, and the model's tool call id — and
  ``host``;
- ``host`` (:class:`ToolHost`): what a *plugin* tool may do besides its own work, with the
  behaviour of the built-in tools of the same names: ``spawn`` (``sessions_spawn``), ``send``
  (``sessions_send``), ``list_sessions`` (``sessions_list``) and ``history``
  (``sessions_history``). Each takes the calling tool's context and the arguments the
  built-in tool takes, and answers its result; refusals are error results, as the model would
  get them. The turn loop puts the gateway's host (:mod:`clawline.collab.tool_host`) in
  every context.

clawline's own tools get their collaborators (catalog, run manager, configuration, …) through
their constructors, from the runtime; a plugin's tool is constructed by the plugin and reaches
the gateway only through ``ctx.host``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.config import AgentConfig
    from clawline.records.session import SessionEntry
    from clawline.sessions.catalog import CatalogTransaction


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: JSONObject = field(default_factory=lambda: {"type": "object", "properties": {}})
    """A JSON schema (``type: object``) for the arguments, as model providers expect."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    details: JSON
    is_error: bool = False
    ends_turn: bool = False
    """The turn ends after this round (``sessions_yield``): the model is not called again and
    the run's reply is the text streamed so far."""

    @classmethod
    def error(cls, message: str, status: str = "error", **extra: JSON) -> ToolResult:
        """OpenClaw's refusal shape: ``{status, error, …}`` (status ``error`` or ``forbidden``)."""
        return cls({"status": status, "error": message, **extra}, is_error=True)


ResultRecorder: TypeAlias = "Callable[[CatalogTransaction, ToolResult], None]"


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Who is calling: the requester session and its run, and where its files live; ``host``
    is what the tool may ask of the gateway (:class:`ToolHost`)."""

    host: ToolHost
    session_key: str
    """The requester's session key."""
    agent_id: str
    run_id: str
    workspace: Path
    """The agent's workspace directory (file tools are confined to it)."""
    entry: SessionEntry | None = None
    """The requester's entry when the turn started (lineage: depth, role, root)."""
    tool_call_id: str = ""
    agent: AgentConfig | None = None
    """The requester's agent configuration (subagent limits, tool policy, model)."""
    lane: str | None = None
    """The run's lane (``main``, ``subagent``, ``nested``, …; ``None`` = main)."""
    record_result: ResultRecorder | None = None
    """Writes this call's result message to the requester's transcript inside a transaction
    of the tool's (``record_result(work, result)``), so that the result commits with the
    effect it reports, or neither does; the turn loop then does not append it again
    (``sessions_spawn`` uses it). ``None``: the tool's result is appended by the turn loop
    after it returns. Not passed on to another tool (``host`` calls get ``None``)."""


class Tool(Protocol):
    spec: ToolSpec

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult: ...


class ToolHost(Protocol):
    """What a tool may ask of the gateway on behalf of its caller (``ctx``): the built-in
    session tools' behaviour, with their arguments and results (module docstring)."""

    async def spawn(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        """``sessions_spawn``: start a sub-agent (or ACP) child of ``ctx``'s session."""
        ...

    async def send(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        """``sessions_send``: message another session (and by default wait for its reply)."""
        ...

    async def list_sessions(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        """``sessions_list``: the sessions ``ctx``'s session may see."""
        ...

    async def history(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        """``sessions_history``: recent messages of a session ``ctx``'s session may see."""
        ...
